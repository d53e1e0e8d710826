//! Helpers shared by the integration tests: the binary under test, scratch
//! directories, reading results, and skipping a test with a printed reason.
//!
//! Each test file says `mod common;` and uses what it needs; not every file
//! uses every helper.
#![allow(dead_code, unused_macros, unused_imports)]

use assert_cmd::Command;
use serde_json::Value;
use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// The iolens binary of this build.
pub fn iolens() -> Command {
    Command::cargo_bin("iolens").unwrap()
}

/// `db run` options of the exact SLOB mix: 2 sessions with 20 updates in
/// every window of 100 loops, 200 loops each (160 selects, 40 updates).
pub const EXACT_MIX: &[&str] = &[
    "--sessions",
    "2",
    "--update-pct",
    "20",
    "--work-loop",
    "200",
];

/// Arguments as owned strings, to print in a failure message.
fn owned<I, S>(args: I) -> Vec<OsString>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    args.into_iter().map(|a| a.as_ref().to_owned()).collect()
}

/// `ARGS... --output OUT`: the arguments of a command that writes its
/// result to `out`.
pub fn with_output(args: &[&str], out: &Path) -> Vec<OsString> {
    let mut v = owned(args);
    v.push("--output".into());
    v.push(out.into());
    v
}

/// `SUB --target TARGET ARGS... --output OUT`: the arguments of a command
/// that measures `target` and writes its result to `out`.
pub fn on_target(sub: &str, target: &Path, args: &[&str], out: &Path) -> Vec<OsString> {
    let mut v = owned([sub, "--target"]);
    v.push(target.into());
    v.extend(with_output(args, out));
    v
}

/// Runs `iolens ARGS`, which must succeed; its stdout.
pub fn succeeds<I, S>(args: I) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let args = owned(args);
    let out = iolens().args(&args).output().unwrap();
    assert!(
        out.status.success(),
        "iolens {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs `iolens ARGS`, which must succeed and print JSON; that JSON.
pub fn json_out<I, S>(args: I) -> Value
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let stdout = succeeds(args);
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

/// Runs `iolens ARGS`, which must exit with `code` and one line on stderr
/// that contains `needle`; that stderr.
pub fn fails_with<I, S>(args: I, code: i32, needle: &str) -> String
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let args = owned(args);
    let out = iolens().args(&args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "iolens {args:?}: {err}");
    assert!(
        err.contains(needle),
        "iolens {args:?}: '{needle}' not in: {err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "one line expected: {err}");
    err
}

/// Runs `iolens run ARGS --output OUT --quiet`: (exit code, stdout, stderr,
/// the result if it wrote one).
pub fn run_quietly(out: &Path, args: &[&str]) -> (i32, String, String, Option<Value>) {
    let o = iolens()
        .arg("run")
        .args(with_output(args, out))
        .arg("--quiet")
        .output()
        .unwrap();
    let res = out.join("result.json").exists().then(|| load(out));
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
        res,
    )
}

/// Starts `iolens ARGS` in the background, its output discarded.
pub fn start<I, S>(args: I) -> Child
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    std::process::Command::new(assert_cmd::cargo::cargo_bin("iolens"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap()
}

/// Waits until `f` holds (up to `limit`); whether it did.
pub fn wait_for(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Waits until `ready` holds while `child` runs: no clock, so a busy machine
/// only makes it slower. False when the child ended before `ready` held
/// (there is nothing left to wait for).
pub fn wait_while_running(child: &mut Child, mut ready: impl FnMut() -> bool) -> bool {
    loop {
        if ready() {
            return true;
        }
        if child.try_wait().unwrap().is_some() {
            return ready();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Whether the `timeseries.csv` of result directory `dir` has a row under
/// its header: the first second was measured.
pub fn has_timeseries_row(dir: &Path) -> bool {
    fs::read_to_string(dir.join("timeseries.csv")).is_ok_and(|t| t.lines().count() >= 2)
}

/// Whether the `result.json` of `dir` exists and its array `key` has at
/// least `n` entries (results written as they finish).
pub fn has_entries(dir: &Path, key: &str, n: usize) -> bool {
    fs::read_to_string(dir.join("result.json")).is_ok_and(|text| {
        let doc: Value = serde_json::from_str(&text).unwrap();
        doc[key].as_array().is_some_and(|a| a.len() >= n)
    })
}

/// Sends SIGINT (Ctrl-C) to `child` and waits for it; its exit code.
pub fn interrupt(mut child: Child) -> Option<i32> {
    // SAFETY: a signal to a child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    child.wait().unwrap().code()
}

/// Starts `iolens ARGS`, waits while it runs until `ready` says its first
/// results are in, presses Ctrl-C and collects it: its exit code.
pub fn interrupt_when<I, S>(args: I, ready: impl FnMut() -> bool) -> Option<i32>
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    let mut child = start(args);
    if !wait_while_running(&mut child, ready) {
        panic!("the command ended before its first result: nothing to interrupt");
    }
    interrupt(child)
}

/// Runs `iolens ARGS --output OUT`, presses Ctrl-C once its first second
/// is measured and checks that it ended as interrupted (exit code 130, the
/// result's status); that result.
pub fn interrupted_run(args: &[&str], out: &Path) -> Value {
    let code = interrupt_when(with_output(args, out), || has_timeseries_row(out));
    assert_eq!(code, Some(130));
    let r = load(out);
    assert_eq!(r["status"], "interrupted");
    r
}

/// A fresh directory under the target's scratch directory, removed on drop.
pub fn scratch() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

/// An empty directory `<target scratch>/<group>/<name>`, kept after the test
/// (to look at after a failure).
pub fn scratch_in(group: &str, name: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(group)
        .join(name);
    let _ = fs::remove_dir_all(&d);
    fs::create_dir_all(&d).unwrap();
    d
}

/// The `result.json` of a result directory.
pub fn load(dir: &Path) -> Value {
    read_json(&dir.join("result.json"))
}

/// A JSON file.
pub fn read_json(path: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
}

/// Prints `SKIPPED: <test>: <reason>` on stderr, past the test harness's
/// output capture, so the line shows (and `scripts/test` counts it) even
/// when the test passes. `here` is the type name of a function inside the test.
pub fn skipped(here: &str, reason: &str) {
    let mut parts: Vec<&str> = here.split("::").collect();
    parts.pop(); // the marker function
    let test = parts.last().copied().unwrap_or("?");
    let _ = writeln!(std::io::stderr(), "SKIPPED: {test}: {reason}");
}

/// Skips the rest of the test: `skip!("no losetup ({e})")` prints
/// `SKIPPED: <test>: <reason>` and returns.
macro_rules! skip {
    ($($arg:tt)*) => {{
        fn here() {}
        $crate::common::skipped(std::any::type_name_of_val(&here), &format!($($arg)*));
        return;
    }};
}
pub(crate) use skip;
