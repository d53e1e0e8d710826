//! `iolens calibrate` end to end: real files with short steps, bad input, an
//! interrupt, and the accuracy test on a device with a known limit (a loop
//! device with direct I/O inside a blkio cgroup with read limits).

mod common;
use common::*;

use serde_json::Value;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Calibrations measure the disk: running two at once (the test harness runs
/// tests in parallel) would make each one's figures describe the other's load.
static DISK: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    DISK.lock().unwrap_or_else(|e| e.into_inner())
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Steps of one ladder of one trial, in the order they ran.
fn steps<'a>(doc: &'a Value, trial: u64, io: &str) -> Vec<&'a Value> {
    doc["ladder"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["trial"] == trial && p["io"] == io)
        .collect()
}

#[test]
fn calibrate_on_a_real_file_reports_figures_spread_and_ladders() {
    let _disk = one_at_a_time();
    let d = scratch_in("calibrate", "file");
    let out = d.join("out");
    let args = [
        &["--size", "64m", "--trials", "2", "--step-time", "300ms"][..],
        &["--ramp", "100ms", "--max-outstanding", "8", "-q"],
    ];
    let stdout = succeeds(on_target(
        "calibrate",
        &d.join("data"),
        &args.concat(),
        &out,
    ));
    let doc = load(&out);
    assert_eq!(doc["kind"], "calibrate");
    assert_eq!(doc["status"], "ok");
    assert_eq!(doc["config"]["small_bs"], 8192);
    assert_eq!(doc["config"]["large_bs"], 1 << 20);
    let s = &doc["summary"];
    assert!(f(&s["max_iops"]) > 0.0);
    assert!(f(&s["max_mbps"]) > 0.0);
    assert!(f(&s["latency_ms"]) > 0.0);
    assert!(f(&s["cv"]["max_iops"]) >= 0.0);
    assert!(f(&s["cv"]["max_mbps"]) >= 0.0);
    assert_eq!(s["trials_complete"], 2);
    let trials = doc["trials"].as_array().unwrap();
    assert_eq!(trials.len(), 2);
    let mut iops = Vec::new();
    for t in trials {
        let n = t["trial"].as_u64().unwrap();
        for io in ["small", "large"] {
            let st = steps(&doc, n, io);
            assert!(!st.is_empty(), "trial {n} has no {io} steps");
            // The climb doubles from 1 up to the cap, then refinement stays
            // strictly between two steps already measured.
            let ladder: Vec<u64> = st
                .iter()
                .filter(|p| p["phase"] == "ladder")
                .map(|p| p["outstanding"].as_u64().unwrap())
                .collect();
            assert_eq!(ladder[0], 1);
            for w in ladder.windows(2) {
                assert_eq!(w[1], (w[0] * 2).min(8), "{ladder:?}");
            }
            for p in st.iter().filter(|p| p["phase"] == "refine") {
                let o = p["outstanding"].as_u64().unwrap();
                assert!(
                    o > 1 && o < 8 && !ladder.contains(&o),
                    "refine at {o}: {ladder:?}"
                );
            }
            for p in &st {
                let o = p["outstanding"].as_u64().unwrap();
                assert_eq!(
                    p["threads"].as_u64().unwrap() * p["qd"].as_u64().unwrap(),
                    o
                );
                assert!(p["ops"].as_u64().unwrap() > 0);
            }
        }
        // max_iops is the best small step within the latency limit, where
        // steps within 1 % of the highest count as equal and the fewest
        // outstanding I/Os win; max_mbps likewise, without a latency limit.
        let pick = |st: Vec<&Value>, key: &str| {
            let top = st.iter().map(|p| f(&p[key])).fold(0.0, f64::max);
            st.iter()
                .filter(|p| f(&p[key]) >= top * 0.99)
                .min_by_key(|p| p["outstanding"].as_u64().unwrap())
                .map(|p| (f(&p[key]), p["outstanding"].as_u64().unwrap()))
                .unwrap()
        };
        let small: Vec<&Value> = steps(&doc, n, "small")
            .into_iter()
            .filter(|p| p["within_latency"] == true)
            .collect();
        let (best, at) = pick(small, "iops");
        assert_eq!(f(&t["max_iops"]), best);
        assert_eq!(t["iops_outstanding"], at);
        let (best_mbps, at) = pick(steps(&doc, n, "large"), "mbps");
        assert_eq!(f(&t["max_mbps"]), best_mbps);
        assert_eq!(t["mbps_outstanding"], at);
        iops.push(f(&t["max_iops"]));
    }
    let mean = iops.iter().sum::<f64>() / iops.len() as f64;
    assert!((f(&s["max_iops"]) - mean).abs() < 0.1);

    let csv = fs::read_to_string(out.join("ladder.csv")).unwrap();
    let mut lines = csv.lines();
    assert!(lines
        .next()
        .unwrap()
        .starts_with("trial,io,phase,outstanding,"));
    assert_eq!(lines.count(), doc["ladder"].as_array().unwrap().len());
    let summary = fs::read_to_string(out.join("summary.txt")).unwrap();
    let headline = summary.lines().nth(1).unwrap();
    assert!(headline.starts_with("max_iops = "), "{headline}");
    assert!(headline.contains("  latency = ") && headline.contains(" ms  max_mbps = "));
    assert!(summary.contains("outstanding"));
    assert!(stdout.contains(headline));
}

#[test]
fn num_disks_only_moves_the_start_and_an_unmet_latency_limit_is_explained() {
    let _disk = one_at_a_time();
    let d = scratch_in("calibrate", "limit");
    fs::create_dir_all(&d).unwrap();
    let out = d.join("out");
    let args = [
        &[
            "--size",
            "16m",
            "--trials",
            "1",
            "--step-time",
            "200ms",
            "--ramp",
            "0s",
        ][..],
        &[
            "--num-disks",
            "4",
            "--max-latency",
            "1us",
            "--max-outstanding",
            "16",
            "-q",
        ],
    ];
    succeeds(on_target(
        "calibrate",
        &d.join("data"),
        &args.concat(),
        &out,
    ));
    let doc = load(&out);
    let small: Vec<u64> = steps(&doc, 1, "small")
        .iter()
        .map(|p| p["outstanding"].as_u64().unwrap())
        .collect();
    // Starts at 4; past the limit, it comes down to 1.
    assert_eq!(small, vec![4, 2, 1]);
    let t = &doc["trials"][0];
    assert_eq!(t["iops_within_latency"], false);
    assert_eq!(doc["summary"]["within_latency"], false);
    let w = doc["warnings"].as_array().unwrap();
    assert!(
        w.iter()
            .any(|w| w.as_str().unwrap().contains("--max-latency")),
        "{w:?}"
    );
    // Large reads know no latency limit: their ladder starts at 4 and climbs.
    assert_eq!(steps(&doc, 1, "large")[0]["outstanding"], 4);
}

#[test]
fn bad_input_is_one_clear_line_and_exit_2() {
    let d = scratch_in("calibrate", "bad");
    let data = d.join("data");
    fs::write(&data, vec![7u8; 1 << 20]).unwrap();
    let cases: [(&[&str], &str); 5] = [
        (&["--trials", "0"], "--trials"),
        (&["--engine", "null"], "io_uring"),
        (&["--max-latency", "0s"], "--max-latency"),
        (&["--small-bs", "3000"], "--small-bs 3000"),
        (&["--large-bs", "4m"], "too small"),
    ];
    for (extra, want) in cases {
        fails_with(
            on_target("calibrate", &data, extra, &d.join("never")),
            2,
            want,
        );
        assert!(!d.join("never").join("result.json").exists());
    }
    let out = iolens()
        .args(["calibrate", "--target"])
        .arg(d.join("missing"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--size"));
}

#[test]
fn an_interrupt_keeps_what_was_measured() {
    let _disk = one_at_a_time();
    let d = scratch_in("calibrate", "interrupt");
    let out = d.join("out");
    let args = [
        &["--size", "16m", "--step-time", "300ms", "--ramp", "0s"][..],
        &["--trials", "5", "-q"],
    ];
    // Interrupted once the first step has finished.
    let code = interrupt_when(
        on_target("calibrate", &d.join("data"), &args.concat(), &out),
        || has_entries(&out, "ladder", 1),
    );
    assert_eq!(code, Some(130));
    let doc = load(&out);
    assert_eq!(doc["status"], "interrupted");
    assert!(!doc["ladder"].as_array().unwrap().is_empty());
    assert!(doc["trials"].as_array().unwrap().len() < 5);
    assert!(out.join("summary.txt").exists());
}

// ---------------------------------------------------------------------------
// Accuracy on a device with a known limit.

/// A loop device over a file, detached on drop.
struct Loop(String);

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = std::process::Command::new("losetup")
            .args(["-d", &self.0])
            .status();
    }
}

/// A cgroup directory, removed on drop (once its processes are gone).
struct Cgroup(PathBuf);

impl Drop for Cgroup {
    fn drop(&mut self) {
        for _ in 0..50 {
            if fs::remove_dir(&self.0).is_ok() || !self.0.exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        eprintln!("could not remove cgroup {}", self.0.display());
    }
}

/// Where read limits can be set: cgroup v1 blkio or cgroup v2 io.
enum Limits {
    V1(PathBuf),
    V2(PathBuf),
}

fn limits_available() -> Result<Limits, String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Err("not root".into());
    }
    let v1 = Path::new("/sys/fs/cgroup/blkio");
    if v1.join("blkio.throttle.read_iops_device").exists() {
        return Ok(Limits::V1(v1.to_path_buf()));
    }
    let v2 = Path::new("/sys/fs/cgroup");
    let controllers = fs::read_to_string(v2.join("cgroup.controllers")).unwrap_or_default();
    if controllers.split_whitespace().any(|c| c == "io") {
        return Ok(Limits::V2(v2.to_path_buf()));
    }
    Err("neither cgroup v1 blkio nor cgroup v2 io is available".into())
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    fs::write(path, text).map_err(|e| format!("writing '{text}' to {}: {e}", path.display()))
}

#[test]
fn accuracy_on_a_throttled_loop_device() {
    let _disk = one_at_a_time();
    const IOPS: f64 = 3000.0;
    const BPS: u64 = 80_000_000;
    let limits = match limits_available() {
        Ok(l) => l,
        Err(why) => {
            skip!("{why}");
        }
    };
    let d = scratch_in("calibrate", "accuracy");
    // A file on the real disk, written (not sparse), under a loop device with direct I/O.
    let backing = d.join("backing.img");
    {
        let mut f = fs::File::create(&backing).unwrap();
        let mut buf = vec![0u8; 1 << 20];
        for i in 0..256u32 {
            for (j, b) in buf.iter_mut().enumerate() {
                *b = (i as usize * 31 + j * 7) as u8;
            }
            f.write_all(&buf).unwrap();
        }
        f.sync_all().unwrap();
    }
    let attach = std::process::Command::new("losetup")
        .args(["--direct-io=on", "--find", "--show"])
        .arg(&backing)
        .output();
    let dev = match attach {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        Ok(o) => {
            skip!(
                "losetup failed: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            );
        }
        Err(e) => {
            skip!("no losetup ({e})");
        }
    };
    let lo = Loop(dev.clone());
    let name = dev.trim_start_matches("/dev/").to_string();
    let queue = Path::new("/sys/block").join(&name).join("queue");
    if fs::read_to_string(Path::new("/sys/block").join(&name).join("loop/dio"))
        .is_ok_and(|v| v.trim() != "1")
    {
        skip!("{dev} refused direct I/O");
    }
    // blk-throttle works in slices: 100 ms on rotational queues, 20 ms on
    // others, chosen when the first limit is set. A loop device over a file
    // reports itself rotational when the disk below does; mark it
    // non-rotational first, so the limit is enforced over 20 ms slices.
    let _ = fs::write(queue.join("rotational"), "0");
    let majmin = fs::read_to_string(Path::new("/sys/block").join(&name).join("dev"))
        .unwrap()
        .trim()
        .to_string();

    let cg_name = format!("iolens-calibrate-test-{}", std::process::id());
    let (cg, procs) = match &limits {
        Limits::V1(root) => {
            let cg = Cgroup(root.join(&cg_name));
            fs::create_dir_all(&cg.0).unwrap();
            write(
                &cg.0.join("blkio.throttle.read_iops_device"),
                &format!("{majmin} {}", IOPS as u64),
            )
            .unwrap();
            write(
                &cg.0.join("blkio.throttle.read_bps_device"),
                &format!("{majmin} {BPS}"),
            )
            .unwrap();
            let procs = cg.0.join("cgroup.procs");
            (cg, procs)
        }
        Limits::V2(root) => {
            let _ = write(&root.join("cgroup.subtree_control"), "+io");
            let cg = Cgroup(root.join(&cg_name));
            fs::create_dir_all(&cg.0).unwrap();
            if let Err(e) = write(
                &cg.0.join("io.max"),
                &format!("{majmin} riops={} rbps={BPS}", IOPS as u64),
            ) {
                skip!("{e}");
            }
            let procs = cg.0.join("cgroup.procs");
            (cg, procs)
        }
    };

    // iolens joins the cgroup before it starts any I/O: a shell writes its own
    // pid into cgroup.procs, then execs iolens (io_uring I/O is charged to the
    // cgroup of the submitting task and of its io-wq workers, all created later).
    let out = d.join("out");
    let started = Instant::now();
    let result = std::process::Command::new("sh")
        .args(["-c", r#"echo $$ > "$1" && shift && exec "$@""#, "sh"])
        .arg(&procs)
        .arg(assert_cmd::cargo::cargo_bin("iolens"))
        .args(["calibrate", "--target", &dev])
        // 512k, not the default 1m: this device's queue splits a 1 MiB read in
        // two (max_segments 128), and blk-throttle here charges the bytes of
        // both pieces on top of the whole, which halves the real throughput.
        .args(["--large-bs", "512k", "-q", "--output"])
        .arg(&out)
        .output()
        .unwrap();
    let elapsed = started.elapsed();
    let stdout = String::from_utf8_lossy(&result.stdout);
    eprintln!(
        "{stdout}\n{}calibrate took {:.1} s",
        String::from_utf8_lossy(&result.stderr),
        elapsed.as_secs_f64()
    );
    assert!(result.status.success());
    let doc = load(&out);
    let s = &doc["summary"];
    let max_iops = f(&s["max_iops"]);
    let max_mbps = f(&s["max_mbps"]);
    let want_mbps = BPS as f64 / 1e6;
    assert!(
        (max_iops - IOPS).abs() <= IOPS * 0.03,
        "max_iops {max_iops} is not within 3 % of the limit {IOPS}"
    );
    assert!(
        (max_mbps - want_mbps).abs() <= want_mbps * 0.03,
        "max_mbps {max_mbps} is not within 3 % of the limit {want_mbps}"
    );
    assert!(
        f(&s["cv"]["max_iops"]) <= 2.0,
        "CV of max_iops: {}",
        s["cv"]
    );
    assert!(
        f(&s["cv"]["max_mbps"]) <= 2.0,
        "CV of max_mbps: {}",
        s["cv"]
    );
    assert_eq!(s["trials_complete"], 3);
    drop(cg);
    drop(lo);
}
