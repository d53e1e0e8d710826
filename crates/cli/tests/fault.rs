//! Failure paths of `iolens run`, through the real binary, with the fault
//! engine (no failing hardware needed).

mod common;

use common::{interrupted_run, iolens, run_quietly, scratch};
use serde_json::Value;
use std::path::Path;

/// `iolens run --engine fault ARGS` (another `--engine` in ARGS replaces
/// it): (exit code, stdout, stderr, result.json if any).
fn fault_run(dir: &Path, args: &[&str]) -> (i32, String, String, Option<Value>) {
    let engine: &[&str] = if args.contains(&"--engine") {
        &[]
    } else {
        &["--engine", "fault"]
    };
    run_quietly(&dir.join("r"), &[engine, args].concat())
}

#[test]
fn an_injected_eio_fails_the_run_with_an_error_naming_the_operation() {
    let d = scratch();
    let (code, stdout, _, res) =
        fault_run(d.path(), &["--fault-error-at", "50", "--runtime", "30s"]);
    assert_eq!(code, 1, "{stdout}");
    let r = res.unwrap();
    assert_eq!(r["status"], "failed");
    let err = r["error"].as_str().unwrap();
    assert!(
        err.starts_with("read of 8192 bytes at (null) offset "),
        "{err}"
    );
    assert!(
        err.ends_with("failed: Input/output error (os error 5)"),
        "{err}"
    );
    assert_eq!(r["summary"]["read"]["ops"], 49);
    assert_eq!(r["config"]["engine"], "fault");
    assert_eq!(r["config"]["fault"]["error_at"], serde_json::json!([50]));
    assert!(
        stdout.contains(err),
        "the summary shows the error: {stdout}"
    );
}

#[test]
fn an_injected_enospc_on_a_write_says_what_to_do() {
    let d = scratch();
    let args = [
        "--rw",
        "randwrite",
        "--fault-error-at",
        "3",
        "--fault-errno",
        "ENOSPC",
        "--runtime",
        "30s",
    ];
    let (code, _, _, res) = fault_run(d.path(), &args);
    assert_eq!(code, 1);
    let r = res.unwrap();
    let err = r["error"].as_str().unwrap();
    assert!(err.starts_with("write of 8192 bytes"), "{err}");
    assert!(err.contains("no space left: use a smaller --size"), "{err}");
}

#[test]
fn a_short_read_is_reported_as_an_error_not_a_success() {
    let d = scratch();
    let (code, _, _, res) = fault_run(
        d.path(),
        &["--fault-short-at", "10", "--qd", "4", "--runtime", "30s"],
    );
    assert_eq!(code, 1);
    let r = res.unwrap();
    assert_eq!(r["status"], "failed");
    let err = r["error"].as_str().unwrap();
    assert!(err.starts_with("short read at (null) offset "), "{err}");
    assert!(err.ends_with(": 4096 of 8192 bytes"), "{err}");
}

#[test]
fn added_latency_shows_in_the_latency_figures() {
    let d = scratch();
    let (code, _, err, res) = fault_run(
        d.path(),
        &["--fault-delay", "2ms@every:2", "--runtime", "1s"],
    );
    assert_eq!(code, 0, "{err}");
    let r = res.unwrap();
    assert_eq!(r["status"], "ok");
    let lat = &r["summary"]["read"]["lat_us"];
    // Half the reads wait 2 ms, the other half complete at once.
    assert!(lat["min"].as_f64().unwrap() < 1000.0, "{lat}");
    assert!(lat["max"].as_f64().unwrap() >= 2000.0, "{lat}");
    assert!(lat["mean"].as_f64().unwrap() >= 900.0, "{lat}");
    assert_eq!(r["config"]["fault"]["delay"], "2ms@every:2");
}

#[test]
fn ctrl_c_interrupts_a_slowed_fault_run() {
    let d = scratch();
    let out = d.path().join("int");
    let args = [
        "run",
        "--engine",
        "fault",
        "--fault-delay",
        "1ms",
        "--runtime",
        "60s",
        "--quiet",
    ];
    let r = interrupted_run(&args, &out);
    assert!(r["summary"]["read"]["ops"].as_u64().unwrap() > 0);
    assert!(r["summary"]["measured_s"].as_f64().unwrap() < 10.0);
}

#[test]
fn fault_options_are_checked_with_one_line_and_exit_2() {
    let d = scratch();
    let cases: [(&[&str], &str); 4] = [
        (
            &["--engine", "null", "--fault-error-at", "3"],
            "--engine fault",
        ),
        (&["--fault-error-at", "0"], "from 1"),
        (&["--fault-delay", "5ms@every:0"], "--fault-delay"),
        (&["--fault-errno", "EWHAT"], "ENOSPC"),
    ];
    for (args, want) in cases {
        let (code, _, err, res) = fault_run(d.path(), args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(res.is_none());
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    }
}

#[test]
fn calibrate_and_matrix_refuse_engines_without_storage() {
    for cmd in ["calibrate", "matrix"] {
        let o = iolens()
            .args([cmd, "--target", "/tmp/x", "--engine", "fault"])
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.contains("--engine fault measures no storage; use --engine io_uring or psync"),
            "{err}"
        );
    }
}
