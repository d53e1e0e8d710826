//! `iolens run` on real files, with every engine, through the real binary.

mod common;
use common::*;

use serde_json::Value;
use std::fs;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use tempfile::TempDir;

/// Runs iolens with `args`, returning (exit code, stderr, result.json if any).
fn run(dir: &Path, name: &str, args: &[&str]) -> (i32, String, Option<Value>) {
    let (code, _, stderr, res) = run_quietly(&dir.join(name), args);
    (code, stderr, res)
}

/// Reads the first 64 MiB of target `t` with `engine` and the `extra`
/// options, the result in a directory named after the engine.
fn read_64m(d: &TempDir, t: &str, engine: &str, extra: &[&str]) -> (i32, String, Option<Value>) {
    let args = [
        &["--target", t, "--size", "64m", "--engine", engine][..],
        extra,
    ]
    .concat();
    run(d.path(), engine, &args)
}

fn target(dir: &TempDir, name: &str) -> String {
    dir.path().join(name).display().to_string()
}

#[test]
fn every_engine_reads_a_real_file_and_reports_the_schema() {
    let d = scratch();
    let t = target(&d, "data.dat");
    for (engine, qd) in [("psync", "1"), ("io_uring", "8"), ("null", "4")] {
        let (code, err, res) = read_64m(&d, &t, engine, &["--qd", qd, "--runtime", "1s"]);
        assert_eq!(code, 0, "{engine}: {err}");
        let r = res.unwrap();
        assert_eq!(r["schema"], "iolens.result/1");
        assert_eq!(r["kind"], "run");
        assert_eq!(r["status"], "ok");
        assert_eq!(r["targets"][0]["kind"], "file");
        assert_eq!(r["config"]["engine"], engine);
        let s = &r["summary"];
        let ops = s["read"]["ops"].as_u64().unwrap();
        assert!(ops > 100, "{engine}: only {ops} reads");
        assert_eq!(s["write"]["ops"], 0);
        let lat = &s["read"]["lat_us"];
        for k in [
            "mean", "min", "p50", "p90", "p95", "p99", "p99_9", "p99_99", "max",
        ] {
            assert!(lat[k].as_f64().unwrap() > 0.0, "{engine}: lat {k} missing");
        }
        assert!(lat["p50"].as_f64() <= lat["p99"].as_f64());
        let iops = s["read"]["iops"].as_f64().unwrap();
        assert!((iops - ops as f64 / s["measured_s"].as_f64().unwrap()).abs() < 1.0);
        assert!(s["cpu"]["iops_per_cpu_s"].as_f64().unwrap() > 0.0);
        if engine != "null" && !s["device"].is_null() {
            // Direct I/O: the device under the file saw (at least) our reads.
            let dev = s["device"]["read_ios"].as_u64().unwrap();
            assert!(
                dev as f64 >= ops as f64 * 0.9,
                "{engine}: device saw {dev} reads for {ops}"
            );
        }
        let csv = fs::read_to_string(d.path().join(engine).join("timeseries.csv")).unwrap();
        let rows: Vec<&str> = csv.lines().collect();
        assert!(rows[0].starts_with("sec,phase,"));
        assert!(rows.len() >= 2, "{engine}: no time series rows");
        assert!(d.path().join(engine).join("summary.txt").exists());
    }
}

#[test]
fn a_created_file_is_fully_written_not_sparse() {
    let d = scratch();
    let t = target(&d, "full.dat");
    let (code, err, _) = run(
        d.path(),
        "r",
        &[
            "--target",
            &t,
            "--size",
            "16m",
            "--runtime",
            "1s",
            "--engine",
            "null",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let md = fs::metadata(&t).unwrap();
    use std::os::unix::fs::MetadataExt;
    assert_eq!(md.len(), 16 << 20);
    assert!(
        md.blocks() * 512 >= 16 << 20,
        "file is sparse: {} blocks",
        md.blocks()
    );
}

#[test]
fn verify_catches_a_block_corrupted_behind_its_back() {
    let d = scratch();
    let t = target(&d, "v.dat");
    // A small region so the writer stamps every block and the reader meets the bad one.
    let common = [
        "--target", &t, "--size", "256k", "--bs", "8k", "--verify", "--engine", "io_uring", "--qd",
        "4",
    ];
    let mut w = common.to_vec();
    w.extend(["--rw", "randwrite", "--runtime", "1s"]);
    let (code, err, _) = run(d.path(), "w", &w);
    assert_eq!(code, 0, "{err}");

    let mut r = common.to_vec();
    r.extend(["--rw", "randread", "--runtime", "1s"]);
    let (code, err, res) = run(d.path(), "r-good", &r);
    assert_eq!(code, 0, "clean data must verify: {err}");
    let res = res.unwrap();
    assert!(res["summary"]["verify"]["checked"].as_u64().unwrap() > 0);

    // Flip one payload byte of block 5.
    let f = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&t)
        .unwrap();
    let mut b = [0u8; 1];
    let off = 5 * 8192 + 4000;
    f.read_exact_at(&mut b, off).unwrap();
    b[0] ^= 0xff;
    f.write_all_at(&b, off).unwrap();
    f.sync_all().unwrap();
    drop(f);

    let (code, _err, res) = run(d.path(), "r-bad", &r);
    assert_eq!(code, 1, "a verify failure fails the run");
    let res = res.unwrap();
    assert_eq!(res["status"], "failed");
    let e = res["error"].as_str().unwrap();
    assert!(e.contains("offset 40960") && e.contains("checksum"), "{e}");
}

#[test]
fn an_existing_file_is_never_written_without_allow_overwrite() {
    let d = scratch();
    let t = target(&d, "precious.dat");
    let content: Vec<u8> = (0..(1u32 << 20)).map(|i| (i % 251) as u8).collect();
    fs::write(&t, &content).unwrap();
    for rw in ["randwrite", "randrw", "write"] {
        let (code, err, res) = run(
            d.path(),
            rw,
            &["--target", &t, "--rw", rw, "--runtime", "1s"],
        );
        assert_eq!(code, 2, "{rw}");
        assert!(
            err.contains("--allow-overwrite") && err.lines().count() == 1,
            "{err}"
        );
        assert!(res.is_none(), "nothing measured, no result");
    }
    assert_eq!(fs::read(&t).unwrap(), content, "the file was modified");
    // Reading is fine.
    let (code, err, _) = run(d.path(), "read", &["--target", &t, "--runtime", "1s"]);
    assert_eq!(code, 0, "{err}");
    // With the user's explicit permission it is written.
    let (code, err, _) = run(
        d.path(),
        "ow",
        &[
            "--target",
            &t,
            "--rw",
            "randwrite",
            "--allow-overwrite",
            "--runtime",
            "1s",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert_ne!(fs::read(&t).unwrap(), content);
}

fn root_device() -> Option<PathBuf> {
    let text = fs::read_to_string("/proc/self/mountinfo").ok()?;
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() > 9 && f[4] == "/" {
            let sep = f.iter().position(|x| *x == "-")?;
            let src = f.get(sep + 2)?;
            if src.starts_with("/dev/") && Path::new(src).exists() {
                return Some(PathBuf::from(src));
            }
        }
    }
    None
}

#[test]
fn a_mounted_block_device_is_never_written() {
    let Some(dev) = root_device() else {
        skip!("the root filesystem is not on a /dev block device here");
    };
    let d = scratch();
    let dev = dev.display().to_string();
    let (code, err, _) = run(
        d.path(),
        "a",
        &["--target", &dev, "--rw", "randwrite", "--runtime", "1s"],
    );
    assert_eq!(code, 2);
    assert!(err.contains("--allow-destroy"), "{err}");
    let (code, err, _) = run(
        d.path(),
        "b",
        &[
            "--target",
            &dev,
            "--rw",
            "randwrite",
            "--allow-destroy",
            "--runtime",
            "1s",
        ],
    );
    assert_eq!(code, 2);
    assert!(err.contains("mounted"), "{err}");
    // Reading a mounted device is allowed.
    let (code, err, res) = run(
        d.path(),
        "c",
        &["--target", &dev, "--size", "64m", "--runtime", "1s"],
    );
    if code == 2 && err.contains("permission denied") {
        skip!("the read part: this sandbox does not let root open {dev}");
    }
    assert_eq!(code, 0, "{err}");
    assert_eq!(res.unwrap()["targets"][0]["kind"], "blockdev");
}

#[test]
fn ctrl_c_leaves_a_valid_interrupted_result() {
    let d = scratch();
    let t = target(&d, "i.dat");
    let out = d.path().join("int");
    let args = [
        "run",
        "--target",
        &t,
        "--size",
        "32m",
        "--runtime",
        "60s",
        "--quiet",
    ];
    let r = interrupted_run(&args, &out);
    let m = r["summary"]["measured_s"].as_f64().unwrap();
    assert!(m > 0.5 && m < 10.0, "measured {m}");
    assert!(r["summary"]["read"]["ops"].as_u64().unwrap() > 0);
    let csv = fs::read_to_string(out.join("timeseries.csv")).unwrap();
    assert!(csv.lines().count() >= 2);
}

#[test]
fn rate_iops_holds_its_rate() {
    let d = scratch();
    let t = target(&d, "rate.dat");
    for engine in ["psync", "io_uring"] {
        let (code, err, res) =
            read_64m(&d, &t, engine, &["--rate-iops", "2000", "--runtime", "3s"]);
        assert_eq!(code, 0, "{err}");
        let iops = res.unwrap()["summary"]["read"]["iops"].as_f64().unwrap();
        assert!(
            (iops - 2000.0).abs() < 100.0,
            "{engine}: {iops} IOPS for a 2000 target"
        );
    }
}

#[test]
fn bad_input_is_one_line_and_exit_2() {
    let d = scratch();
    let t = target(&d, "b.dat");
    fs::write(&t, vec![0u8; 1 << 20]).unwrap();
    let missing = target(&d, "nope/x.dat");
    let new = target(&d, "new.dat");
    let huge = target(&d, "huge.dat");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["--target", &t, "--bs", "7k"], "direct I/O"),
        (
            vec!["--target", &t, "--qd", "8", "--engine", "psync"],
            "io_uring",
        ),
        (
            vec!["--target", &t, "--mix-read", "150", "--rw", "randrw"],
            "0..100",
        ),
        (vec!["--target", &t, "--size", "2m"], "too small"),
        (vec!["--target", &missing, "--size", "1m"], "does not exist"),
        (vec!["--target", &new], "--size"),
        (vec!["--target", &huge, "--size", "900t"], "space"),
        (vec!["--target", &t, "--bs", "8q"], "invalid"),
        (vec!["--target", &t, "--distribution", "zipf:0"], "THETA"),
        (
            vec!["--target", &t, "--rw", "randread", "--fsync", "4"],
            "writes",
        ),
        (vec!["--engine", "io_uring"], "--target"),
    ];
    for (args, want) in cases {
        let (code, err, res) = run(d.path(), "bad", &args);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(res.is_none());
        assert_eq!(
            err.trim_end().lines().count(),
            1,
            "{args:?}: more than one line: {err}"
        );
        let msg = err.trim_end().trim_start_matches("iolens: ");
        let repeated = msg
            .match_indices(": ")
            .any(|(i, _)| msg[..i] == msg[i + 2..]);
        assert!(!repeated, "{args:?}: the message repeats itself: {err}");
    }
    assert!(!Path::new(&huge).exists(), "no partial file left");
}

#[test]
fn an_existing_result_directory_is_not_overwritten() {
    let d = scratch();
    let (code, _, _) = run(d.path(), "same", &["--engine", "null", "--runtime", "1s"]);
    assert_eq!(code, 0);
    let before = fs::read(d.path().join("same/result.json")).unwrap();
    let (code, err, _) = run(d.path(), "same", &["--engine", "null", "--runtime", "1s"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("already holds a result"), "{err}");
    assert_eq!(fs::read(d.path().join("same/result.json")).unwrap(), before);
}

#[test]
fn writes_with_fsync_split_and_raid0() {
    let d = scratch();
    let a = target(&d, "a.dat");
    let b = target(&d, "b.dat");
    let (code, err, res) = run(
        d.path(),
        "sync",
        &[
            "--target",
            &a,
            "--size",
            "16m",
            "--rw",
            "randwrite",
            "--engine",
            "psync",
            "--fdatasync",
            "4",
            "--runtime",
            "1s",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let s = &res.unwrap()["summary"];
    let writes = s["write"]["ops"].as_u64().unwrap();
    let syncs = s["sync"]["ops"].as_u64().unwrap();
    assert!(
        writes > 8 && (syncs as i64 - writes as i64 / 4).abs() <= 1,
        "{writes} writes, {syncs} syncs"
    );
    assert!(s["sync"]["lat_us"]["mean"].as_f64().unwrap() > 0.0);

    let (code, err, res) = run(
        d.path(),
        "split",
        &[
            "--target",
            &a,
            "--target",
            &b,
            "--size",
            "16m",
            "--layout",
            "raid0",
            "--stripe",
            "64k",
            "--rw",
            "randrw",
            "--mix-read",
            "50",
            "--bs-split",
            "4k/50:64k/50",
            "--qd",
            "8",
            "--runtime",
            "1s",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let r = res.unwrap();
    assert_eq!(r["targets"].as_array().unwrap().len(), 2);
    let s = &r["summary"];
    let (ro, wo) = (
        s["read"]["ops"].as_f64().unwrap(),
        s["write"]["ops"].as_f64().unwrap(),
    );
    assert!(
        (ro / (ro + wo) - 0.5).abs() < 0.1,
        "read share {}",
        ro / (ro + wo)
    );
    let avg = s["read"]["bytes"].as_f64().unwrap() / ro;
    assert!(
        avg > 20_000.0 && avg < 50_000.0,
        "mean read size {avg} is not a 4k/64k mix"
    );
}

#[test]
fn buffered_reads_served_by_the_page_cache_are_flagged() {
    let d = scratch();
    let t = target(&d, "cache.dat");
    let (code, err, res) = run(
        d.path(),
        "buf",
        &[
            "--target",
            &t,
            "--size",
            "8m",
            "--buffered",
            "--engine",
            "psync",
            "--runtime",
            "2s",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let r = res.unwrap();
    if r["summary"]["device"].is_null() {
        skip!("no block device under the scratch directory");
    }
    let dev = r["summary"]["device"]["read_ios"].as_u64().unwrap();
    let ops = r["summary"]["read"]["ops"].as_u64().unwrap();
    assert!(dev < ops / 10, "device saw {dev} of {ops}");
    let w = r["warnings"].to_string();
    assert!(w.contains("page cache"), "{w}");
}

#[test]
fn json_flag_prints_the_result_document() {
    let d = scratch();
    let o = iolens()
        .args([
            "run",
            "--engine",
            "null",
            "--runtime",
            "1s",
            "--json",
            "--output",
        ])
        .arg(d.path().join("j"))
        .output()
        .unwrap();
    assert!(o.status.success());
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["status"], "ok");
    assert_eq!(v, load(&d.path().join("j")));
}

/// A loop device over a scratch file, detached (and unmounted) on drop.
struct Loop {
    dev: String,
    mnt: PathBuf,
}

impl Loop {
    fn new(dir: &Path) -> Option<Loop> {
        let img = dir.join("loop.img");
        fs::File::create(&img).ok()?.set_len(64 << 20).ok()?;
        let o = std::process::Command::new("losetup")
            .args(["-f", "--show", "--direct-io=on"])
            .arg(&img)
            .output()
            .ok()?;
        if !o.status.success() {
            return None;
        }
        let dev = String::from_utf8(o.stdout).ok()?.trim().to_string();
        Some(Loop {
            dev,
            mnt: dir.join("mnt"),
        })
    }
}

impl Drop for Loop {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg(&self.mnt)
            .stderr(Stdio::null())
            .status();
        let _ = std::process::Command::new("losetup")
            .args(["-d", &self.dev])
            .status();
    }
}

#[test]
fn block_devices_are_read_freely_written_only_when_allowed_and_unmounted() {
    let d = scratch();
    let Some(lo) = Loop::new(d.path()) else {
        skip!("cannot set up a loop device here (needs root and loop support)");
    };
    let dev = lo.dev.clone();
    let (code, err, res) = run(
        d.path(),
        "read",
        &[
            "--target",
            &dev,
            "--engine",
            "io_uring",
            "--qd",
            "4",
            "--runtime",
            "1s",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let r = res.unwrap();
    assert_eq!(r["targets"][0]["kind"], "blockdev");
    assert_eq!(r["targets"][0]["size_bytes"], 64u64 << 20);
    let name = dev.trim_start_matches("/dev/");
    assert_eq!(r["summary"]["device"]["names"][0], name);
    assert!(r["summary"]["device"]["read_ios"].as_u64().unwrap() > 0);

    let w = [
        "--target",
        dev.as_str(),
        "--rw",
        "randwrite",
        "--runtime",
        "1s",
    ];
    let (code, err, _) = run(d.path(), "w1", &w);
    assert_eq!(code, 2);
    assert!(err.contains("--allow-destroy"), "{err}");
    let mut allowed = w.to_vec();
    allowed.push("--allow-destroy");
    let (code, err, res) = run(d.path(), "w2", &allowed);
    assert_eq!(code, 0, "{err}");
    assert!(res.unwrap()["summary"]["write"]["ops"].as_u64().unwrap() > 0);

    // Once mounted, even --allow-destroy is refused.
    let mkfs = std::process::Command::new("mkfs.ext4")
        .args(["-q", &dev])
        .status();
    fs::create_dir_all(&lo.mnt).unwrap();
    let mounted = mkfs.is_ok_and(|s| s.success())
        && std::process::Command::new("mount")
            .arg(&dev)
            .arg(&lo.mnt)
            .status()
            .is_ok_and(|s| s.success());
    if !mounted {
        skip!("the mount part: cannot mount a loop device here");
    }
    let (code, err, _) = run(d.path(), "w3", &allowed);
    assert_eq!(code, 2);
    assert!(err.contains("mounted"), "{err}");
}
