//! Bad input to `iolens db` exits 2 with one line naming what to fix, for
//! every database.

mod common;
use common::*;

use std::fs;

/// A --path that cannot be created used to fail with exit 1 ("creating ...").
#[test]
fn sqlite_path_that_cannot_be_created_exits_2() {
    let d = scratch();
    let file = d.path().join("file");
    fs::write(&file, b"not a directory").unwrap();
    let under_file = file.join("sq");
    let setup = |path| {
        let small = ["--scale", "16", "--scan-scale", "1", "--quiet"];
        [
            &["db", "setup", "--db", "sqlite", "--path", path][..],
            &small,
        ]
        .concat()
    };
    fails_with(setup(under_file.to_str().unwrap()), 2, "--path");
    fails_with(setup(file.to_str().unwrap()), 2, "is not a directory");
    assert_eq!(fs::read(&file).unwrap(), b"not a directory");
}

#[test]
fn sqlite_usage_errors_exit_2() {
    let d = scratch();
    let p = d.path().join("sq");
    let p = p.to_str().unwrap();
    let sq = ["db", "run", "--db", "sqlite", "--path", p];
    fails_with(sq, 2, "no iolens SQLite schemas");
    fails_with([&sq[..], &["--direct-io"]].concat(), 2, "--direct-io");
    fails_with([&sq[..], &["--update-pct", "60"]].concat(), 2, "51-99");
    fails_with([&sq[..], &["--sessions", "0"]].concat(), 2, "--sessions");
    let setup = ["db", "setup", "--db", "sqlite", "--path", p];
    fails_with([&setup[..], &["--schemas", "0"]].concat(), 2, "--schemas");
    fails_with([&setup[..], &["--scale", "1"]].concat(), 2, "--scale");
    fails_with(
        [&setup[..], &["--scan-scale", "0"]].concat(),
        2,
        "--scan-scale",
    );
    fails_with(
        [&setup[..], &["--load-parallel", "0"]].concat(),
        2,
        "--load-parallel",
    );
    fails_with(["db", "run", "--db", "sqlite"], 2, "--path");
}
