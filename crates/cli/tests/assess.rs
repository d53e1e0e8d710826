//! `iolens assess` at a short duration on both database backends.

mod common;
use common::*;

use serde_json::Value;
use std::fs;
use std::path::Path;
use std::sync::Mutex;

/// The assessments measure the same disk and keep time budgets: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn assess(db: &str, dir: &Path, out: &Path, secs: u64) -> (i32, String, Value) {
    let o = iolens()
        .args([
            "assess",
            "--db",
            db,
            "--duration",
            &format!("{secs}s"),
            "--size",
            "256m",
        ])
        // The default `--dir .`, relative: the server must still find its files
        // (regression: a relative cluster path broke the managed server's restart).
        .current_dir(dir)
        .arg("--output")
        .arg(out)
        .output()
        .unwrap();
    let r: Value =
        serde_json::from_str(&fs::read_to_string(out.join("result.json")).unwrap()).unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        r,
    )
}

/// No PostgreSQL server of an assessment is left running.
fn assert_no_server_left() {
    let ps = std::process::Command::new("sh")
        .args(["-c", "pgrep -af 'postgres.*[.]iolens-assess' || true"])
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&ps.stdout).trim().is_empty(),
        "processes left: {}",
        String::from_utf8_lossy(&ps.stdout)
    );
}

fn check(db: &str) {
    let d = scratch();
    let work = d.path().join("storage");
    fs::create_dir_all(&work).unwrap();
    let secs = 30;
    let (code, stdout, r) = assess(db, &work, &d.path().join("out"), secs);
    assert_eq!(code, 0, "{stdout}");
    assert_eq!(r["kind"], "assess");
    assert_eq!(r["status"], "ok");
    let s = &r["summary"];
    assert!(s["raw"]["max_iops"].as_f64().unwrap() > 0.0, "{s}");
    assert!(s["raw"]["qd1_lat_us"].as_f64().unwrap() > 0.0, "{s}");
    let points = s["db"]["points"].as_array().unwrap();
    assert!(points.len() >= 2, "{s}");
    assert_eq!(s["db"]["backend"], db);
    for p in points {
        assert!(p["physical_read_iops"].as_f64().unwrap() > 0.0, "{p}");
    }
    assert!(
        points.iter().any(|p| p["update_pct"] == 20),
        "no run with updates: {s}"
    );
    assert!(s["explanation"].as_str().unwrap().len() > 20);
    assert!(
        stdout.contains("side by side") && stdout.contains("why:"),
        "{stdout}"
    );
    // Within the budget (±10 %, with a little room for a loaded machine).
    let took = r["duration_s"].as_f64().unwrap();
    assert!(
        took <= secs as f64 * 1.15 && took >= secs as f64 * 0.7,
        "took {took} s for {secs} s"
    );
    // Everything it created under --dir is gone.
    assert_eq!(
        fs::read_dir(&work).unwrap().count(),
        0,
        "files left in the assessed directory"
    );
    // Every part kept its own result directory.
    for part in ["calibrate", "db-s1-u0"] {
        assert!(
            d.path().join("out").join(part).join("result.json").exists(),
            "{part}"
        );
    }
}

/// One test, so that the two assessments do not run at once and disturb
/// each other's measurements and time budget.
#[test]
fn assess_on_sqlite_then_postgres() {
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    check("sqlite");
    let found = std::fs::read_dir("/usr/lib/postgresql")
        .map(|rd| rd.flatten().any(|e| e.path().join("bin/initdb").exists()))
        .unwrap_or(false);
    if !found {
        skip!("PostgreSQL server binaries are not installed (apt-get install postgresql)");
    }
    check("postgres");
    assert_no_server_left();
}

/// Ctrl-C in the middle of the database part: a valid `interrupted` result,
/// the cluster stopped, the assessed directory left as it was.
#[test]
fn an_interrupted_assessment_leaves_nothing_behind() {
    use std::os::unix::process::CommandExt;
    let _one = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let d = scratch();
    let work = d.path().join("storage");
    fs::create_dir_all(&work).unwrap();
    let out = d.path().join("out");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("iolens"))
        .args(["assess", "--duration", "60s", "--size", "256m", "--dir"])
        .arg(&work)
        .arg("--output")
        .arg(&out)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .process_group(0)
        .spawn()
        .unwrap();
    // Wait until the first database point has started, then press Ctrl-C
    // (SIGINT to the whole process group, as a terminal does).
    // The first second of the first point is measured: it is mid-run.
    let point = out.join("db-s1-u0");
    assert!(
        wait_while_running(&mut child, || has_timeseries_row(&point)),
        "the assessment ended before its database part ran"
    );
    unsafe { libc::kill(-(child.id() as i32), libc::SIGINT) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let r: Value =
        serde_json::from_str(&fs::read_to_string(out.join("result.json")).unwrap()).unwrap();
    assert_eq!(r["status"], "interrupted");
    assert!(
        r["summary"]["raw"]["max_iops"].as_f64().unwrap() > 0.0,
        "finished parts are kept"
    );
    let point: Value =
        serde_json::from_str(&fs::read_to_string(out.join("db-s1-u0/result.json")).unwrap())
            .unwrap();
    assert_eq!(point["status"], "interrupted");
    assert_eq!(
        fs::read_dir(&work).unwrap().count(),
        0,
        "files left in the assessed directory"
    );
    assert_no_server_left();
}
