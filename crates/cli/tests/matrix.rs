//! `iolens matrix` end to end on real files with short points: ORION's file
//! names and CSV shapes, concurrent streams, writes, an interrupt, and clear
//! exit-2 errors for impossible matrices.

mod common;
use common::*;

use serde_json::Value;
use std::fs;
use std::path::Path;

/// The ORION file of `dir` ending in `suffix` (`_iops.csv`, ...), checking the
/// `<test>_<YYYYMMDD_HHMM>` prefix.
fn orion_file(dir: &Path, test: &str, suffix: &str) -> String {
    let names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(suffix))
        .collect();
    assert_eq!(names.len(), 1, "{suffix}: {names:?}");
    let n = &names[0];
    let stamp = n
        .strip_prefix(&format!("{test}_"))
        .and_then(|r| r.strip_suffix(suffix))
        .unwrap_or_else(|| panic!("{n} does not start with {test}_"));
    assert_eq!(stamp.len(), 13, "{n}");
    assert!(stamp[..8].chars().all(|c| c.is_ascii_digit()), "{n}");
    assert_eq!(&stamp[8..9], "_");
    assert!(stamp[9..].chars().all(|c| c.is_ascii_digit()), "{n}");
    fs::read_to_string(dir.join(n)).unwrap()
}

/// A CSV as (header columns, rows of (row label, cells)).
fn csv(text: &str) -> (Vec<u32>, Vec<(u32, Vec<String>)>) {
    let mut lines = text.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').map(str::trim).collect();
    assert_eq!(head[0], "Large/Small");
    let cols = head[1..].iter().map(|c| c.parse().unwrap()).collect();
    let rows = lines
        .map(|l| {
            let cells: Vec<String> = l.split(',').map(|c| c.trim().to_string()).collect();
            (cells[0].parse().unwrap(), cells[1..].to_vec())
        })
        .collect();
    (cols, rows)
}

fn point(doc: &Value, small: u64, large: u64) -> &Value {
    doc["points"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["small_load"] == small && p["large_load"] == large)
        .unwrap_or_else(|| panic!("no point ({small}, {large})"))
}

#[test]
fn simple_run_writes_orions_files() {
    let d = scratch_in("matrix", "simple");
    let out = d.join("out");
    let args = ["--size", "32m", "--duration", "300ms", "--test", "mytest"];
    let stdout = succeeds(on_target("matrix", &d.join("lun"), &args, &out));
    let doc = load(&out);
    assert_eq!(doc["kind"], "matrix");
    assert_eq!(doc["status"], "ok");
    assert_eq!(doc["config"]["matrix"], "basic");
    assert_eq!(doc["summary"]["points_finished"], 7);

    // Small loads 1..5 alone (one disk: 5 × 1), large loads 1..2 alone.
    let (cols, rows) = csv(&orion_file(&out, "mytest", "_iops.csv"));
    assert_eq!(cols, vec![1, 2, 3, 4, 5]);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].0, 0);
    for (i, cell) in rows[0].1.iter().enumerate() {
        let v: f64 = cell.parse().unwrap();
        let p = point(&doc, i as u64 + 1, 0);
        assert_eq!(v, p["small"]["iops"].as_f64().unwrap().round());
        assert!(v > 0.0);
        assert!(p["large"].is_null());
    }
    let (lcols, lrows) = csv(&orion_file(&out, "mytest", "_lat.csv"));
    assert_eq!(lcols, cols);
    assert_eq!(lrows.len(), 1);
    assert!(lrows[0].1.iter().all(|c| c.parse::<f64>().unwrap() > 0.0));
    let (mcols, mrows) = csv(&orion_file(&out, "mytest", "_mbps.csv"));
    assert_eq!(mcols, vec![0]);
    assert_eq!(mrows.iter().map(|r| r.0).collect::<Vec<_>>(), vec![1, 2]);
    for (l, cells) in &mrows {
        let p = point(&doc, 0, *l as u64);
        let v: f64 = cells[0].parse().unwrap();
        assert!((v - p["large"]["mbps"].as_f64().unwrap()).abs() < 0.006);
        assert!(p["small"].is_null());
    }
    let summary = orion_file(&out, "mytest", "_summary.txt");
    assert!(summary.contains("Test: mytest"));
    assert!(summary.contains("Small IO size: 8 KB"));
    assert!(summary.contains("Large IO size: 1024 KB"));
    assert!(summary.contains("Total Data Points: 7"));
    assert!(summary.contains("Maximum Small IOPS="));
    assert!(summary.contains("Maximum Large MBPS="));
    assert!(summary.contains("Minimum Small Latency="));
    assert!(summary.contains("1 FILEs found."));
    assert!(stdout.contains("Maximum Small IOPS="));
    let trace = orion_file(&out, "mytest", "_trace.txt");
    assert_eq!(trace.matches("Point ").count(), 7);
    assert!(trace.contains("Point 7 of 7: Small=0 Large=2"));
}

#[test]
fn streams_of_a_point_run_at_the_same_time() {
    let d = scratch_in("matrix", "point");
    let out = d.join("out");
    let args = [
        &["--size", "32m", "--run", "advanced", "--matrix", "point"][..],
        &[
            "--num-small",
            "2",
            "--num-large",
            "1",
            "--duration",
            "1s",
            "-q",
        ],
        &["--cache-size", "8m"],
    ];
    succeeds(on_target("matrix", &d.join("lun"), &args.concat(), &out));
    let doc = load(&out);
    assert_eq!(doc["points"].as_array().unwrap().len(), 1);
    let p = point(&doc, 2, 1);
    let (s, l) = (&p["small"], &p["large"]);
    assert!(s["read"]["ops"].as_u64().unwrap() > 0);
    assert!(l["read"]["ops"].as_u64().unwrap() > 0);
    assert_eq!(s["layout"][0], "1×2 randread");
    // The cache was warmed before the point, outside the measurement.
    assert!(p["warmup_bytes"].as_u64().unwrap() >= 8 << 20);
    // Side by side: the point took about one stream's time, not the sum of both.
    let wall = p["wall_s"].as_f64().unwrap();
    let sum = s["measured_s"].as_f64().unwrap() + l["measured_s"].as_f64().unwrap();
    assert!(
        wall < sum,
        "point took {wall} s for streams of {sum} s together"
    );
}

#[test]
fn sequential_streams_with_writes_fill_a_detailed_matrix() {
    let d = scratch_in("matrix", "seq");
    let out = d.join("out");
    let args = [
        &["--size", "64m", "--run", "advanced", "--matrix", "detailed"][..],
        &[
            "--num-small",
            "2",
            "--num-large",
            "2",
            "--large-type",
            "seq",
        ],
        &[
            "--num-streamio",
            "2",
            "--write",
            "50",
            "--duration",
            "300ms",
            "-q",
        ],
        &["--test", "seqw"],
    ];
    succeeds(on_target("matrix", &d.join("lun"), &args.concat(), &out));
    let doc = load(&out);
    assert_eq!(doc["summary"]["points_finished"], 8);
    let (cols, rows) = csv(&orion_file(&out, "seqw", "_iops.csv"));
    assert_eq!(cols, vec![1, 2]);
    assert_eq!(rows.iter().map(|r| r.0).collect::<Vec<_>>(), vec![0, 1, 2]);
    assert!(rows.iter().all(|r| r.1.iter().all(|c| !c.is_empty())));
    let (cols, rows) = csv(&orion_file(&out, "seqw", "_mbps.csv"));
    assert_eq!(cols, vec![0, 1, 2]);
    assert_eq!(rows.iter().map(|r| r.0).collect::<Vec<_>>(), vec![1, 2]);
    assert!(rows.iter().all(|r| r.1.iter().all(|c| !c.is_empty())));
    // Two streams at 50 % writes: one reads, one writes, two I/Os each.
    let p = point(&doc, 0, 2);
    let large = &p["large"];
    assert_eq!(
        large["layout"],
        serde_json::json!(["1×2 read", "1×2 write"])
    );
    assert!(large["read"]["ops"].as_u64().unwrap() > 0);
    assert!(large["write"]["ops"].as_u64().unwrap() > 0);
    let small = &point(&doc, 2, 0)["small"];
    assert!(small["write"]["ops"].as_u64().unwrap() > 0);
    assert!(small["read"]["ops"].as_u64().unwrap() > 0);
}

#[test]
fn impossible_matrices_and_bad_input_exit_2() {
    let d = scratch_in("matrix", "bad");
    let foreign = d.join("foreign");
    fs::write(&foreign, vec![1u8; 4 << 20]).unwrap();
    let cases: &[(&[&str], &str)] = &[
        (
            &["--run", "advanced", "--matrix", "point", "--num-small", "2"],
            "--matrix point needs",
        ),
        (
            &["--num-large", "2"],
            "--num-large does not go with --run simple",
        ),
        (
            &["--run", "oltp", "--matrix", "max"],
            "--matrix does not go with --run oltp",
        ),
        (
            &["--run", "advanced", "--matrix", "row", "--num-small", "0"],
            "nothing to measure",
        ),
        (
            &["--run", "advanced", "--num-small", "0", "--num-large", "0"],
            "no point",
        ),
        (
            &["--run", "advanced", "--num-streamio", "4"],
            "--large-type seq",
        ),
        (&["--run", "advanced", "--write", "120"], "--write"),
        (&["--run", "advanced", "--write", "10"], "--allow-overwrite"),
        (
            &["--run", "advanced", "--size-small", "6000"],
            "--size-small",
        ),
        (&["--test", "a/b"], "--test"),
        (&["--duration", "0s"], "--duration"),
    ];
    for (args, want) in cases {
        let out_dir = d.join("never");
        fails_with(on_target("matrix", &foreign, args, &out_dir), 2, want);
        assert!(!out_dir.join("result.json").exists(), "{args:?}");
    }
    // Nothing was written to the file iolens did not create.
    assert!(fs::read(&foreign).unwrap().iter().all(|&b| b == 1));
}

#[test]
fn an_interrupt_keeps_the_finished_points() {
    let d = scratch_in("matrix", "interrupt");
    let out = d.join("out");
    let args = [
        "--size",
        "32m",
        "--run",
        "normal",
        "--duration",
        "400ms",
        "-q",
    ];
    let code = interrupt_when(on_target("matrix", &d.join("lun"), &args, &out), || {
        has_entries(&out, "points", 2)
    });
    assert_eq!(code, Some(130));
    let doc = load(&out);
    assert_eq!(doc["status"], "interrupted");
    let finished = doc["summary"]["points_finished"].as_u64().unwrap();
    assert!((2..17).contains(&finished), "{finished}");
    // The CSV shows exactly the finished small-only points of row 0.
    let (_, rows) = csv(&orion_file(&out, "orion", "_iops.csv"));
    let filled = rows
        .iter()
        .flat_map(|r| r.1.iter())
        .filter(|c| !c.is_empty())
        .count() as u64;
    let finished_small = doc["points"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["interrupted"] == false && !p["small"].is_null())
        .count() as u64;
    assert_eq!(filled, finished_small);
    assert!(orion_file(&out, "orion", "_summary.txt").contains("status interrupted"));
}
