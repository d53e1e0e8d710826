//! Every result kind reads back into its types and writes out byte for byte
//! as it was written: the committed results of each kind (calibrate, matrix,
//! db, assess, and the runs of the report fixtures).

use iolens_core::result::{load, AnyResult};
use std::fs;
use std::path::{Path, PathBuf};

fn results_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            results_under(&p, out);
        } else if p.file_name().is_some_and(|n| n == "result.json") {
            out.push(p);
        }
    }
}

fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    results_under(&root.join("tests/fixtures"), &mut out);
    results_under(&root.join("../cli/tests/fixtures/report"), &mut out);
    out
}

fn kind_of(doc: &AnyResult) -> &'static str {
    match doc {
        AnyResult::Run(_) => "run",
        AnyResult::Calibrate(_) => "calibrate",
        AnyResult::Matrix(_) => "matrix",
        AnyResult::Db(_) => "db",
        AnyResult::Assess(_) => "assess",
        AnyResult::Other(_) => "other",
    }
}

#[test]
fn every_fixture_round_trips_byte_for_byte() {
    let paths = fixtures();
    let mut kinds: Vec<&str> = Vec::new();
    for p in &paths {
        let text = fs::read_to_string(p).unwrap();
        let doc = load(p).unwrap_or_else(|e| panic!("{e}"));
        kinds.push(kind_of(&doc));
        let back = doc.to_json();
        if back != text {
            let line = text
                .lines()
                .zip(back.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            panic!(
                "{} changed at line {}:\n  was: {:?}\n  now: {:?}",
                p.display(),
                line + 1,
                text.lines().nth(line),
                back.lines().nth(line)
            );
        }
    }
    for kind in ["run", "calibrate", "matrix", "db", "assess"] {
        assert!(kinds.contains(&kind), "no {kind} fixture in {kinds:?}");
    }
}

#[test]
fn older_documents_without_figures_still_load() {
    let text = r#"{"schema": "iolens.result/1", "tool": {"name": "iolens", "version": "0.0.1"},
        "kind": "calibrate", "name": "c", "status": "running", "started_at": "2026-01-01T00:00:00.000Z",
        "duration_s": 0.0, "host": {"hostname": "h", "kernel": "k", "cpus": 1, "mem_bytes": 1},
        "summary": {"max_iops": 5.0, "future_key": 1}}"#;
    let doc = AnyResult::parse(Path::new("old/result.json"), text).unwrap();
    let AnyResult::Calibrate(doc) = doc else {
        panic!("a calibrate document reads as calibrate")
    };
    let s = doc.summary.unwrap();
    assert_eq!(s.max_iops, Some(5.0));
    assert_eq!(s.max_mbps, None);
    assert!(doc.extra.ladder.is_none());
}
