//! `iolens sweep`, `iolens report` and `iolens compare` through the real
//! binary: sweeps on the null engine and on real files, resuming after an
//! interruption, the report's CSV/JSON against snapshots of a fixture set
//! made by the real binary, other result kinds, the HTML page in a real
//! headless browser, and compare's table.
//!
//! Set `UPDATE_SNAPSHOTS=1` to rewrite the snapshots after an intended change.

mod common;
use common::*;

use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Runs iolens in `dir`; returns (exit code, stdout, stderr).
fn run_in(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let o = iolens().current_dir(dir).args(args).output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    fs::write(&p, text).unwrap();
    p
}

fn statuses(sweep: &Path) -> Vec<String> {
    read_json(&sweep.join("sweep.json"))["points"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["status"].as_str().unwrap().to_string())
        .collect()
}

fn csv_rows(p: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let text = fs::read_to_string(p).unwrap();
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .unwrap()
        .split(',')
        .map(str::to_string)
        .collect();
    let rows = lines
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect();
    (header, rows)
}

fn col<'a>(header: &[String], row: &'a [String], name: &str) -> &'a str {
    let i = header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name} in {header:?}"));
    &row[i]
}

#[test]
fn sweep_on_the_null_engine_runs_every_point_and_reports_it() {
    let d = scratch();
    write(
        d.path(),
        "null.toml",
        r#"
command = "run"
name = "null-qd"
[options]
engine = "null"
runtime = "1s"
[axes]
rw = ["randread", "randrw"]
qd = [1, 4]
"#,
    );
    let (code, out, err) = run_in(d.path(), &["sweep", "null.toml", "--output", "sw"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), "sw");
    let sw = d.path().join("sw");
    assert_eq!(statuses(&sw), vec!["ok"; 4]);
    let plan = read_json(&sw.join("sweep.json"));
    assert_eq!(plan["schema"], "iolens.sweep/1");
    assert_eq!(plan["status"], "ok");
    assert_eq!(plan["param_order"], json!(["rw", "qd"]));
    assert!(sw.join("sweep.toml").is_file());
    // each point ran with its own options and wrote its own result
    for p in plan["points"].as_array().unwrap() {
        let r = read_json(&sw.join(p["dir"].as_str().unwrap()).join("result.json"));
        assert_eq!(r["status"], "ok");
        assert_eq!(r["config"]["qd"], p["params"]["qd"]);
        assert_eq!(r["config"]["rw"], p["params"]["rw"]);
        assert_eq!(r["config"]["engine"], "null");
        assert!(r["summary"]["total"]["iops"].as_f64().unwrap() > 0.0);
    }
    assert!(err.contains("[4/4] 04-rw=randrw-qd=4: ok"), "{err}");

    let (code, out, err) = run_in(d.path(), &["report", "sw"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("knees (latency SLO 1 ms)"), "{out}");
    assert!(out.contains("rw=randread: max "), "{out}");
    assert!(out.contains("IOPS at qd="), "{out}");
    let rep = sw.join("report");
    let (header, rows) = csv_rows(&rep.join("report.csv"));
    assert_eq!(rows.len(), 4);
    assert_eq!(col(&header, &rows[1], "qd"), "4");
    assert_eq!(col(&header, &rows[1], "series"), "rw=randread");
    assert_eq!(col(&header, &rows[2], "rw"), "randrw");
    for r in &rows {
        let iops: f64 = col(&header, r, "iops").parse().unwrap();
        assert!(iops > 0.0);
        assert_eq!(col(&header, r, "status"), "ok");
    }
    for chart in [
        "latency-vs-iops",
        "iops-vs-concurrency",
        "latency-percentiles",
    ] {
        let svg = fs::read_to_string(rep.join(format!("charts/{chart}.svg"))).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.contains("<polyline"),
            "{chart}"
        );
        let png = fs::read(rep.join(format!("charts/{chart}.png"))).unwrap();
        assert_eq!(&png[1..4], b"PNG");
        assert!(png.len() > 10_000, "{chart}.png is nearly empty");
    }
    let peak = fs::read_to_string(rep.join("charts/iops-vs-concurrency.svg")).unwrap();
    assert!(peak.contains("IOPS at qd="), "peak annotation missing");
    let ts = fs::read_dir(rep.join("charts/timeseries")).unwrap().count();
    assert_eq!(ts, 8, "one SVG and one PNG per point");
    // a second report replaces the first
    let (code, _, err) = run_in(d.path(), &["report", "sw", "--no-png"]);
    assert_eq!(code, 0, "{err}");
    assert!(!rep.join("charts/latency-vs-iops.png").exists());
}

#[test]
fn sweep_on_real_files_records_a_failed_point_and_goes_on() {
    let d = scratch();
    let target = d.path().join("data.dat");
    write(
        d.path(),
        "disk.toml",
        &format!(
            r#"
command = "run"
[options]
target = "{}"
size = "32m"
engine = "io_uring"
runtime = "1s"
[[points]]
bs = "4k"
[[points]]
bs = "1000"
[[points]]
bs = "8k"
[axes]
qd = [2]
"#,
            target.display()
        ),
    );
    let (code, _, err) = run_in(d.path(), &["sweep", "disk.toml", "--output", "sw"]);
    assert_eq!(code, 1, "a failed point makes the sweep exit 1: {err}");
    let sw = d.path().join("sw");
    assert_eq!(statuses(&sw), vec!["ok", "failed", "ok"]);
    let plan = read_json(&sw.join("sweep.json"));
    assert_eq!(plan["status"], "failed");
    let failed = &plan["points"][1];
    assert_eq!(failed["exit_code"], 2);
    assert!(
        failed["error"].as_str().unwrap().contains("--bs"),
        "{failed}"
    );
    let ok = read_json(&sw.join("03-bs=8k-qd=2/result.json"));
    assert_eq!(ok["config"]["bs"], 8192);
    assert!(ok["summary"]["read"]["ops"].as_u64().unwrap() > 0);

    let (code, out, err) = run_in(d.path(), &["report", "sw", "--out", "rep"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("failed"), "{out}");
    let (header, rows) = csv_rows(&d.path().join("rep/report.csv"));
    assert_eq!(rows.len(), 3);
    assert_eq!(col(&header, &rows[1], "status"), "failed");
    assert_eq!(col(&header, &rows[1], "iops"), "");
    assert!(rows[1].last().unwrap().contains("--bs") || rows[1].join(",").contains("--bs"));
    assert_eq!(col(&header, &rows[2], "bs"), "8k");
}

/// Processes whose command line mentions `needle`.
fn processes_mentioning(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmd) = fs::read(e.path().join("cmdline")) {
            let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
            if cmd.contains(needle) && cmd.contains("iolens") {
                found.push(cmd);
            }
        }
    }
    found
}

#[test]
fn an_interrupted_sweep_resumes_and_keeps_its_finished_points() {
    let d = scratch();
    write(
        d.path(),
        "s.toml",
        "command = \"run\"\n[options]\nengine = \"null\"\nruntime = \"2s\"\n[axes]\nqd = [1, 2, 4]\n",
    );
    let sw = d.path().join("sw");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("iolens"))
        .current_dir(d.path())
        .args(["sweep", "s.toml", "--output", "sw"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // wait until the first point is done and the second one is running
    let second_running = || {
        sw.join("sweep.json").exists() && {
            let s = statuses(&sw);
            s[0] == "ok" && s[1] == "running" && sw.join("02-qd=2/result.json").exists()
        }
    };
    assert!(
        wait_while_running(&mut child, second_running),
        "the sweep did not reach its second point"
    );
    // SAFETY: signalling the process this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let st = child.wait().unwrap();
    assert_eq!(st.code(), Some(130));
    let s = statuses(&sw);
    assert_eq!(s[0], "ok");
    assert!(s[1] == "interrupted" || s[1] == "ok", "{s:?}");
    assert_eq!(s[2], "pending");
    assert_eq!(read_json(&sw.join("sweep.json"))["status"], "interrupted");
    let interrupted = s[1] == "interrupted";
    if interrupted {
        assert_eq!(
            read_json(&sw.join("02-qd=2/result.json"))["status"],
            "interrupted"
        );
    }
    assert!(processes_mentioning(&sw.display().to_string()).is_empty());
    let first = read_json(&sw.join("01-qd=1/result.json"));

    let (code, _, err) = run_in(d.path(), &["sweep", "s.toml", "--output", "sw", "--resume"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("kept from the earlier run"), "{err}");
    assert_eq!(statuses(&sw), vec!["ok"; 3]);
    // the finished point was kept as it was, the interrupted one moved aside
    assert_eq!(
        read_json(&sw.join("01-qd=1/result.json"))["started_at"],
        first["started_at"]
    );
    if interrupted {
        let old = sw.join(".attempts/02-qd=2-1/result.json");
        assert_eq!(read_json(&old)["status"], "interrupted");
    }
    // hidden attempts are not part of the report
    let (code, out, err) = run_in(d.path(), &["report", "sw", "--no-png"]);
    assert_eq!(code, 0, "{err}");
    let (_, rows) = csv_rows(&sw.join("report/report.csv"));
    assert_eq!(rows.len(), 3, "{out}");
}

#[test]
fn bad_sweeps_are_refused_before_anything_runs() {
    let d = scratch();
    write(
        d.path(),
        "typo.toml",
        "command = \"run\"\n[options]\nengine = \"null\"\n[axes]\nqdd = [1, 2]\n",
    );
    let (code, _, err) = run_in(d.path(), &["sweep", "typo.toml", "--output", "x"]);
    assert_eq!(code, 2);
    assert!(err.contains("--qdd"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!d.path().join("x").exists());

    let (code, _, err) = run_in(d.path(), &["sweep", "missing.toml"]);
    assert_eq!(code, 2);
    assert!(err.contains("missing.toml"), "{err}");

    write(d.path(), "bad.toml", "command = \"run\"\n[axes]\nqd = 4\n");
    let (code, _, err) = run_in(d.path(), &["sweep", "bad.toml"]);
    assert_eq!(code, 2);
    assert!(err.contains("axis 'qd' must be a non-empty list"), "{err}");

    let (code, _, err) = run_in(d.path(), &["sweep", "typo.toml", "--resume"]);
    assert_eq!(code, 2);
    assert!(err.contains("--resume needs --output"), "{err}");

    // a plan prints without running
    write(
        d.path(),
        "ok.toml",
        "command = \"run\"\n[options]\nengine = \"null\"\nruntime = \"1s\"\n[axes]\nqd = [1, 2]\n",
    );
    let (code, out, _) = run_in(d.path(), &["sweep", "ok.toml", "--dry-run"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("01-qd=1: iolens run --engine null --runtime 1s --qd 1"),
        "{out}"
    );
    assert!(out.contains("2 points"), "{out}");

    let (code, _, err) = run_in(d.path(), &["sweep", "ok.toml", "--output", "sw", "-q"]);
    assert_eq!(code, 0, "{err}");
    // the same directory again, without --resume
    let (code, _, err) = run_in(d.path(), &["sweep", "ok.toml", "--output", "sw"]);
    assert_eq!(code, 2);
    assert!(err.contains("--resume"), "{err}");
    // resuming with a different plan
    write(
        d.path(),
        "ok.toml",
        "command = \"run\"\n[options]\nengine = \"null\"\nruntime = \"1s\"\n[axes]\nqd = [1, 8]\n",
    );
    let (code, _, err) = run_in(
        d.path(),
        &["sweep", "ok.toml", "--output", "sw", "--resume"],
    );
    assert_eq!(code, 2);
    assert!(err.contains("different plan"), "{err}");
    // a foreign, non-empty directory
    fs::create_dir_all(d.path().join("foreign")).unwrap();
    write(&d.path().join("foreign"), "notes.txt", "mine");
    let (code, _, err) = run_in(d.path(), &["sweep", "ok.toml", "--output", "foreign"]);
    assert_eq!(code, 2);
    assert!(err.contains("not empty"), "{err}");
}

/// Drops what changes from one report to the next (time, version).
fn normalized(mut v: Value) -> Value {
    v["generated_at"] = json!("<time>");
    v["tool"]["version"] = json!("<version>");
    v
}

fn snapshot(name: &str, actual: &str) {
    let p = fixtures().join("report-expected").join(name);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, actual).unwrap();
        return;
    }
    let expected = fs::read_to_string(&p)
        .unwrap_or_else(|e| panic!("{}: {e} (run with UPDATE_SNAPSHOTS=1)", p.display()));
    if expected != actual {
        let diff: Vec<String> = expected
            .lines()
            .zip(actual.lines())
            .enumerate()
            .filter(|(_, (a, b))| a != b)
            .take(5)
            .map(|(i, (a, b))| format!("line {}:\n  expected {a}\n  actual   {b}", i + 1))
            .collect();
        panic!(
            "{name} differs from its snapshot (UPDATE_SNAPSHOTS=1 to accept):\n{}\n(expected {} lines, got {})",
            diff.join("\n"),
            expected.lines().count(),
            actual.lines().count()
        );
    }
}

#[test]
fn report_on_the_fixture_set_matches_its_snapshots() {
    let d = scratch();
    let out = d.path().join("rep");
    let o = iolens()
        .current_dir(fixtures().join("report"))
        .args([
            "report",
            "disk-sweep",
            "loose",
            "--latency-slo",
            "100us",
            "--no-png",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    snapshot(
        "report.csv",
        &fs::read_to_string(out.join("report.csv")).unwrap(),
    );
    let j = normalized(read_json(&out.join("report.json")));
    snapshot(
        "report.json",
        &format!("{}\n", serde_json::to_string_pretty(&j).unwrap()),
    );

    // figures are the ones in the results, not recomputed differently
    let (header, rows) = csv_rows(&out.join("report.csv"));
    assert_eq!(rows.len(), 8);
    let r = read_json(&fixtures().join("report/disk-sweep/05-bs=64k-qd=4/result.json"));
    let row = rows
        .iter()
        .find(|r| r[0] == "disk-sweep/05-bs=64k-qd=4")
        .unwrap();
    assert_eq!(
        col(&header, row, "iops").parse::<f64>().unwrap(),
        r["summary"]["total"]["iops"].as_f64().unwrap()
    );
    assert_eq!(
        col(&header, row, "read_lat_p99_us").parse::<f64>().unwrap(),
        (r["summary"]["read"]["lat_us"]["p99"].as_f64().unwrap() * 1000.0).round() / 1000.0
    );
    // loose results are told apart by the options that differ
    let loose = rows.iter().find(|r| r[0] == "loose/psync-8k").unwrap();
    assert_eq!(col(&header, loose, "engine"), "psync");
    // knees: printed and in the JSON, peak of each series at its highest IOPS
    assert!(stdout.contains("bs=4k: max "), "{stdout}");
    let series = &j["series"];
    for s in series.as_array().unwrap() {
        let ids: Vec<&str> = s["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        let best = rows
            .iter()
            .filter(|r| ids.contains(&r[0].as_str()))
            .map(|r| col(&header, r, "iops").parse::<f64>().unwrap())
            .fold(0.0, f64::max);
        assert_eq!(s["peak"]["iops"].as_f64().unwrap(), best);
    }
}

fn write_result(dir: &Path, kind: &str, name: &str, summary: Value) {
    fs::create_dir_all(dir).unwrap();
    let doc = json!({
        "schema": "iolens.result/1", "tool": {"name": "iolens", "version": "0.1.0"},
        "kind": kind, "name": name, "status": "ok", "started_at": "2026-01-01T00:00:00.000Z",
        "duration_s": 70.0, "host": {"hostname": "lab1", "kernel": "6.1", "cpus": 2, "mem_bytes": 1},
        "targets": [], "config": {"sessions": 4}, "summary": summary, "warnings": []
    });
    fs::write(
        dir.join("result.json"),
        serde_json::to_string_pretty(&doc).unwrap(),
    )
    .unwrap();
}

#[test]
fn report_reads_other_kinds_and_shows_what_each_has() {
    let d = scratch();
    write_result(
        &d.path().join("all/db"),
        "db",
        "slob",
        json!({
            "measured_s": 60.0,
            "db": {"logical_reads_per_s": 90000.0, "physical_read_iops": 5000.0,
                   "physical_write_iops": 120.0, "read_lat_us": 410.0, "hit_pct": 94.5,
                   "executions_per_s": 300.0, "tps": 280.0, "reads_per_db_cpu_s": 19306.0},
            "os": {"read_iops": 4100.0, "write_iops": 150.0, "read_mbps": 33.6, "write_mbps": 1.2,
                   "read_await_ms": 0.38},
            "os_cache_hit_pct": 18.0
        }),
    );
    write_result(
        &d.path().join("all/cal"),
        "calibrate",
        "cal",
        json!({"max_iops": 3766.0, "max_mbps": 358.0, "latency_ms": 18.21,
               "cv": {"max_iops": 1.5, "max_mbps": 0.7}}),
    );
    write_result(
        &d.path().join("all/future"),
        "future",
        "f",
        json!({"novel": {"x": 1}}),
    );
    let (code, out, err) = run_in(d.path(), &["report", "all", "--no-png"]);
    assert_eq!(code, 0, "{err}");
    let (header, rows) = csv_rows(&d.path().join("all/report/report.csv"));
    assert_eq!(rows.len(), 3, "{out}");
    let db = rows
        .iter()
        .find(|r| col(&header, r, "kind") == "db")
        .unwrap();
    assert_eq!(col(&header, db, "db_physical_read_iops"), "5000");
    assert_eq!(col(&header, db, "os_read_iops"), "4100");
    assert_eq!(col(&header, db, "os_cache_hit_pct"), "18");
    assert_eq!(col(&header, db, "read_lat_mean_us"), "410");
    let cal = rows
        .iter()
        .find(|r| col(&header, r, "kind") == "calibrate")
        .unwrap();
    assert_eq!(col(&header, cal, "iops"), "3766");
    assert_eq!(col(&header, cal, "cal_latency_ms"), "18.21");
    let fut = rows
        .iter()
        .find(|r| col(&header, r, "kind") == "future")
        .unwrap();
    assert_eq!(col(&header, fut, "iops"), "");
    assert_eq!(col(&header, fut, "status"), "ok");

    let (code, out, _) = run_in(
        d.path(),
        &["compare", "all/db", "all/cal", "--format", "csv"],
    );
    assert_eq!(code, 0);
    assert!(out.contains("db_physical_read_iops,5000,,"), "{out}");
    assert!(out.contains("os_cache_hit_pct,18,,"), "{out}");
    assert!(out.contains("max_iops,5120,3766,0.7355"), "{out}");
}

fn chromium() -> Option<PathBuf> {
    for name in ["chromium", "chromium-browser", "google-chrome"] {
        for dir in std::env::var("PATH").unwrap_or_default().split(':') {
            let p = Path::new(dir).join(name);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    None
}

fn attr(dom: &str, name: &str) -> Option<String> {
    let i = dom.find(&format!("{name}=\""))? + name.len() + 2;
    Some(dom[i..].split('"').next()?.to_string())
}

#[test]
fn report_html_loads_and_its_charts_render_in_a_headless_browser() {
    let Some(browser) = chromium() else {
        skip!("chromium is not installed (apt-get install chromium)");
    };
    let d = scratch();
    let out = d.path().join("rep");
    let o = iolens()
        .current_dir(fixtures().join("report"))
        .args(["report", "disk-sweep", "loose", "--no-png", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let html = fs::read_to_string(out.join("report.html")).unwrap();
    for remote in ["src=\"http", "href=\"http", "url(http", "@import"] {
        assert!(
            !html.contains(remote),
            "the page must not fetch anything ({remote})"
        );
    }
    assert!(!html.contains("<link"), "the page must not fetch anything");
    let profile = d.path().join("profile");
    let run = |extra: &[&str]| {
        std::process::Command::new(&browser)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--enable-logging=stderr",
                "--v=0",
                "--virtual-time-budget=10000",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .args(extra)
            .arg(format!("file://{}", out.join("report.html").display()))
            .output()
            .unwrap()
    };
    let o = run(&["--dump-dom"]);
    let dom = String::from_utf8_lossy(&o.stdout);
    let log = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{log}");
    let visible: usize = attr(&dom, "data-charts-visible")
        .unwrap_or_else(|| panic!("the page's check did not run: {log}"))
        .parse()
        .unwrap();
    let rendered: usize = attr(&dom, "data-charts-rendered").unwrap().parse().unwrap();
    assert!(
        visible >= 3 + 8,
        "summary charts and 8 time series: {visible}"
    );
    assert_eq!(rendered, visible, "charts that did not render");
    assert_eq!(attr(&dom, "data-errors").as_deref(), Some("0"));
    assert!(!log.contains("Uncaught"), "{log}");
    // and it paints: a screenshot with the charts' colours
    let shot = d.path().join("shot.png");
    let o = run(&[
        "--window-size=1200,1600",
        &format!("--screenshot={}", shot.display()),
    ]);
    assert!(o.status.success());
    let png = fs::read(&shot).unwrap();
    assert_eq!(&png[1..4], b"PNG");
    assert!(png.len() > 30_000, "the screenshot is nearly blank");
}

#[test]
fn compare_puts_configurations_side_by_side_with_ratios() {
    let f = fixtures().join("report");
    let (code, out, err) = run_in(
        &f,
        &[
            "compare",
            "disk-sweep",
            "loose/uring-qd8",
            "--latency-slo",
            "100us",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("figure"), "{out}");
    assert!(
        lines[0].contains("disk-randread") && lines[0].contains("uring-qd8 / disk-randread"),
        "{out}"
    );
    for row in [
        "max IOPS",
        "max IOPS at",
        "mean latency at max IOPS",
        "lowest mean latency",
        "max MB/s",
        "IOPS per CPU-second",
        "IOPS within 100 µs",
    ] {
        assert!(
            lines.iter().any(|l| l.starts_with(row)),
            "no row {row}: {out}"
        );
    }
    // the ratio column is the quotient of the two values
    let (code, csv, _) = run_in(
        &f,
        &[
            "compare",
            "disk-sweep",
            "loose/uring-qd8",
            "--format",
            "csv",
            "--label",
            "A",
            "--label",
            "B",
        ],
    );
    assert_eq!(code, 0);
    assert!(csv.starts_with("figure,A,B,B/A\n"), "{csv}");
    let max: Vec<&str> = csv
        .lines()
        .find(|l| l.starts_with("max_iops,"))
        .unwrap()
        .split(',')
        .collect();
    let (a, b, r): (f64, f64, f64) = (
        max[1].parse().unwrap(),
        max[2].parse().unwrap(),
        max[3].parse().unwrap(),
    );
    let sweep_max = fs::read_dir(f.join("disk-sweep"))
        .unwrap()
        .flatten()
        .filter(|e| e.path().join("result.json").exists())
        .map(|e| {
            read_json(&e.path().join("result.json"))["summary"]["total"]["iops"]
                .as_f64()
                .unwrap()
        })
        .fold(0.0, f64::max);
    assert_eq!(a, sweep_max);
    assert!((r - b / a).abs() / (b / a) < 1e-3, "{r} vs {}", b / a);
    let (code, md, _) = run_in(
        &f,
        &[
            "compare",
            "disk-sweep",
            "loose/uring-qd8",
            "--format",
            "markdown",
        ],
    );
    assert_eq!(code, 0);
    assert!(
        md.lines().nth(1).unwrap().starts_with("| --- | ---: |"),
        "{md}"
    );

    let (code, _, err) = run_in(
        &f,
        &["compare", "disk-sweep", "--label", "a", "--label", "b"],
    );
    assert_eq!(code, 2);
    assert!(err.contains("--label"), "{err}");
}

#[test]
fn report_refuses_bad_input_with_one_line() {
    let d = scratch();
    let (code, _, err) = run_in(d.path(), &["report", "nowhere"]);
    assert_eq!(code, 2);
    assert!(err.contains("nowhere: no such directory"), "{err}");
    fs::create_dir_all(d.path().join("empty/sub")).unwrap();
    let (code, _, err) = run_in(d.path(), &["report", "empty"]);
    assert_eq!(code, 2);
    assert!(err.contains("no iolens result found"), "{err}");
    fs::create_dir_all(d.path().join("mine")).unwrap();
    write(&d.path().join("mine"), "keep.txt", "data");
    let fx = fixtures().join("report/loose");
    let (code, _, err) = run_in(d.path(), &["report", fx.to_str().unwrap(), "--out", "mine"]);
    assert_eq!(code, 2);
    assert!(err.contains("not empty"), "{err}");
    assert_eq!(
        fs::read_to_string(d.path().join("mine/keep.txt")).unwrap(),
        "data"
    );
    let (code, _, err) = run_in(
        d.path(),
        &[
            "report",
            fx.to_str().unwrap(),
            "--latency-slo",
            "0s",
            "--out",
            "r",
        ],
    );
    assert_eq!(code, 2);
    assert!(err.contains("--latency-slo"), "{err}");
    let broken = d.path().join("broken");
    fs::create_dir_all(&broken).unwrap();
    write(&broken, "result.json", "{ not json");
    let (code, _, err) = run_in(d.path(), &["report", "broken"]);
    assert_eq!(code, 2);
    assert!(err.contains("result.json"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}
