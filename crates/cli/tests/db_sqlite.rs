//! `iolens db --db sqlite`: the SLOB method on embedded SQLite through the
//! real binary, with page reads proven at the device.

mod common;
use common::*;

use std::fs;

/// `db SUB --db sqlite --path REST...`.
fn sqlite<'a>(sub: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    [&["db", sub, "--db", "sqlite", "--path"][..], rest].concat()
}

#[test]
fn setup_and_run_on_sqlite_with_device_proof() {
    let d = scratch();
    let path = d.path().join("sq");
    let p = path.to_str().unwrap();
    let layout = |scale| sqlite("setup", &[p, "--schemas", "2", "--scale", scale]);
    let same_layout = [&layout("2000")[..], &["--scan-scale", "16", "--json"]].concat();
    let setup = json_out(&same_layout);
    for l in setup["layout"].as_array().unwrap() {
        assert_eq!(l["rows"], 2000);
        assert!(
            (l["rows_per_page"].as_f64().unwrap() - 1.0).abs() < 0.01,
            "{l}"
        );
        assert!(
            l["key_order_correlation"].as_f64().unwrap().abs() < 0.1,
            "{l}"
        );
    }
    // Idempotent: the same layout is reused, a different one needs --reload.
    let again = json_out(&same_layout);
    assert_eq!(
        again["loaded"].as_array().unwrap().len(),
        0,
        "layout reloaded instead of reused"
    );
    let o = iolens().args(layout("3000")).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--reload"));

    let out = d.path().join("r");
    let opts = [
        "--runtime",
        "60s",
        "--warmup",
        "0s",
        "--cache",
        "128k",
        "--quiet",
    ];
    let run = [&sqlite("run", &[p])[..], EXACT_MIX, &opts].concat();
    succeeds(with_output(&run, &out));
    let r = load(&out);
    assert_eq!(r["kind"], "db");
    assert_eq!(r["status"], "ok");
    let s = &r["summary"];
    // Exact SLOB mix: 20 updates in every window of 100 loops, per session.
    for per in s["per_session_ops"].as_array().unwrap() {
        assert_eq!(per[0], 160, "{per}");
        assert_eq!(per[1], 40, "{per}");
    }
    let db = &s["db"];
    assert!(db["physical_reads"].as_u64().unwrap() > 200 * 64, "{db}");
    assert!(db["read_lat_us"].as_f64().unwrap() > 0.0);
    assert!(
        db["wal_bytes"].as_u64().unwrap() > 0 && db["wal_syncs"].as_u64().unwrap() > 0,
        "durable commits"
    );
    for op in ["select", "update"] {
        let l = &s["ops"][op]["lat_us"];
        assert!(
            l["p99"].as_f64().unwrap() >= l["p50"].as_f64().unwrap()
                && l["p50"].as_f64().unwrap() > 0.0,
            "{op}: {l}"
        );
    }
    if s["os"].is_null() {
        skip!("the device check: no block device under the scratch directory");
    }
    // Direct I/O: nearly every page read reached the device.
    let cached = s["os_cache_hit_pct"].as_f64().unwrap();
    assert!(cached <= 10.0, "OS cache served {cached} % of the reads");
    assert!(
        s["os"]["read_ios"].as_u64().unwrap() as f64
            >= db["physical_reads"].as_f64().unwrap() * 0.9
    );
    assert!(fs::read_to_string(out.join("summary.txt"))
        .unwrap()
        .contains("Load Profile"));
}

#[test]
fn sqlite_bad_input_is_refused_without_touching_files() {
    let d = scratch();
    let path = d.path().join("foreign");
    fs::create_dir_all(&path).unwrap();
    let foreign = path.join("user1.db");
    fs::write(&foreign, b"not a database of ours").unwrap();
    let before = fs::read(&foreign).unwrap();
    let p = path.to_str().unwrap();
    let big = d.path().join("big");
    let big = big.to_str().unwrap();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            sqlite("setup", &[p, "--scale", "100"]),
            "not an iolens schema",
        ),
        (sqlite("run", &[p, "--update-pct", "60"]), "51-99"),
        (sqlite("run", &[p]), "incomplete"),
        (vec!["db", "run", "--db", "sqlite"], "--path"),
        (vec!["db", "run"], "--pg-dir"),
        (sqlite("setup", &[big, "--scale", "100t"]), "space"),
    ];
    for (args, want) in cases {
        fails_with(&args, 2, want);
    }
    assert_eq!(
        fs::read(&foreign).unwrap(),
        before,
        "a foreign file was modified"
    );
}
