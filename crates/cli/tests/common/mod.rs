//! Helpers shared by the integration tests: the binary under test, scratch
//! directories, reading results, and skipping a test with a printed reason.
//!
//! Each test file says `mod common;` and uses what it needs; not every file
//! uses every helper.
#![allow(dead_code, unused_macros, unused_imports)]

use assert_cmd::Command;
use serde_json::Value;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The iolens binary of this build.
pub fn iolens() -> Command {
    Command::cargo_bin("iolens").unwrap()
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
