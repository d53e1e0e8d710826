//! `iolens db` against a real managed PostgreSQL server at small scale
//! (2 schemas x 2,000 blocks, the smallest cache): the layout, the plan, the
//! exact update share, reads seen at the device, the cache share, failures,
//! interrupts and cleanup.

mod common;
use common::*;

use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Whether every directory down to `p` can be entered by others (the
/// managed server runs as the `postgres` user when the tests run as root).
fn searchable_by_others(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.ancestors()
        .all(|a| fs::metadata(a).map_or(true, |m| m.permissions().mode() & 0o001 != 0))
}

fn scratch(name: &str) -> PathBuf {
    let mut base = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    if !searchable_by_others(&base) {
        eprintln!(
            "{} is not searchable by the server's account; using {}",
            base.display(),
            std::env::temp_dir().display()
        );
        base = std::env::temp_dir();
    }
    let p = base
        .join("db_pg")
        .join(format!("{name}-{}", std::process::id()));
    let _ = fs::remove_dir_all(&p);
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    p
}

/// Whether PostgreSQL server binaries are installed (`.ci/run` installs them).
fn have_postgres() -> bool {
    let debian = fs::read_dir("/usr/lib/postgresql")
        .map(|rd| rd.flatten().any(|e| e.path().join("bin/initdb").is_file()))
        .unwrap_or(false);
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join("initdb").is_file()))
        .unwrap_or(false);
    debian || on_path
}

/// Live (non-zombie) processes whose working directory is inside `dir`:
/// every process of a server whose data directory is there.
fn processes_in(dir: &Path) -> Vec<u32> {
    let Ok(dir) = fs::canonicalize(dir) else {
        return Vec::new();
    };
    fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|p| {
            fs::read_link(format!("/proc/{p}/cwd")).is_ok_and(|c| c.starts_with(&dir))
                && !fs::read_to_string(format!("/proc/{p}/stat"))
                    .unwrap_or_default()
                    .rsplit_once(')')
                    .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
        })
        .collect()
}

/// `db run` without warmup, for `runtime`, then `rest`.
fn db_run<'a>(runtime: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let run = ["db", "run", "--runtime", runtime, "--warmup", "0s"];
    [&run[..], rest].concat()
}

#[test]
fn bad_inputs_exit_2_with_one_line() {
    let root = scratch("bad");
    let none = root.join("none");
    let none_s = none.to_str().unwrap();
    fails_with(
        ["db", "run", "--pg-dir", none_s, "--update-pct", "60"],
        2,
        "51-99",
    );
    fails_with(["db", "run", "--pg-dir", none_s], 2, "no iolens cluster");
    fails_with(
        ["db", "teardown", "--pg-dir", none_s],
        2,
        "no iolens cluster",
    );
    fails_with(
        [
            "db",
            "run",
            "--dsn",
            "postgres://iolens@127.0.0.1:1/iolens",
            "--runtime",
            "1s",
        ],
        2,
        "cannot connect",
    );
    fails_with(["db", "run", "--dsn", "port=notanumber"], 2, "--dsn");
    fails_with(
        [
            "db",
            "setup",
            "--pg-dir",
            none_s,
            "--pg-bin",
            "/nonexistent/bin",
        ],
        2,
        "apt-get install postgresql",
    );
    assert!(!none.exists(), "a refused setup created {}", none.display());
    // A directory iolens did not create is never used.
    let foreign = root.join("foreign");
    fs::create_dir_all(&foreign).unwrap();
    fs::write(foreign.join("precious"), b"data").unwrap();
    fails_with(
        ["db", "setup", "--pg-dir", foreign.to_str().unwrap()],
        2,
        "not empty",
    );
    assert_eq!(fs::read(foreign.join("precious")).unwrap(), b"data");
    for bad in [["--scale", "1x"], ["--scale", "0"], ["--schemas", "0"]] {
        let out = iolens()
            .args(["db", "setup", "--pg-dir", none_s])
            .args(bad)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
    }
    fs::remove_dir_all(&root).unwrap();
}

fn status_of(result: &Path) -> String {
    let doc: Value =
        serde_json::from_slice(&fs::read(result.join("result.json")).unwrap()).unwrap();
    doc["status"].as_str().unwrap().to_string()
}

#[test]
fn managed_cluster_end_to_end() {
    if !have_postgres() {
        skip!("no PostgreSQL server binaries (apt-get install postgresql)");
    }
    let root = scratch("e2e");
    let pg = root.join("pg");
    let pg_s = pg.to_str().unwrap().to_string();
    let pg_dir = ["--pg-dir", pg_s.as_str(), "--cache", "128k"];
    // `db SUB REST...` on the managed cluster.
    let with = |rest: &[&str]| -> Vec<String> {
        let mut v: Vec<String> = rest.iter().map(|s| s.to_string()).collect();
        v.splice(2..2, pg_dir.iter().map(|s| s.to_string()));
        v
    };
    let run = |rest: &[&str]| json_out(with(rest));

    // Setup: one row per page, keys in random physical order.
    let setup = [
        "db",
        "setup",
        "--schemas",
        "2",
        "--scale",
        "2000",
        "--json",
        "-q",
    ];
    let s = run(&setup);
    let schemas = s["report"]["schemas"].as_array().unwrap();
    assert_eq!(schemas.len(), 2);
    for sc in schemas {
        assert_eq!(sc["rows"], 2000);
        assert_eq!(sc["max_rows_per_page"], 1, "{sc}");
        assert!(sc["pages"].as_u64().unwrap() >= 2000);
        let corr = sc["key_page_correlation"].as_f64().unwrap();
        assert!(corr.abs() < 0.2, "keys are not in random order: {corr}");
    }
    assert!(
        processes_in(&pg).is_empty(),
        "setup left the server running"
    );
    // Idempotent; a different layout needs --reload; not enough disk is refused.
    let again = run(&setup);
    assert_eq!(again["report"]["reused"], true);
    let other = |scale| ["db", "setup", "--schemas", "2", "--scale", scale];
    fails_with(with(&other("3000")), 2, "--reload");
    fails_with(
        with(&[&other("100T")[..], &["--reload"]].concat()),
        2,
        "not enough disk",
    );
    assert!(processes_in(&pg).is_empty());
    let version = s["version"].as_str().unwrap();
    let major: u32 = version
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.split('.').next()?.parse().ok())
        .unwrap();
    if major < 16 {
        fails_with(
            with(&["db", "run", "--direct-io", "--runtime", "1s"]),
            2,
            "16 or newer",
        );
        assert!(processes_in(&pg).is_empty());
    }

    // Read-only run: a plain index scan, physical reads seen at the device.
    let out1 = root.join("r1");
    let o1 = out1.to_str().unwrap();
    let r = run(&db_run(
        "3s",
        &[
            "--sessions",
            "4",
            "--update-pct",
            "0",
            "--output",
            o1,
            "--json",
            "-q",
        ],
    ));
    assert_eq!(r["kind"], "db");
    assert_eq!(r["status"], "ok");
    assert_eq!(r["plan"]["plain_index_scan"], true, "{}", r["plan"]);
    assert!(r["plan"]["custom"].as_str().unwrap().contains("Index Scan"));
    assert!(!r["plan"]["generic"].as_str().unwrap().contains("Bitmap"));
    let sm = &r["summary"];
    let db = &sm["db"];
    assert!(db["physical_reads"].as_u64().unwrap() > 0, "{db}");
    assert!(db["logical_reads"].as_u64().unwrap() >= db["physical_reads"].as_u64().unwrap());
    assert!(db["reads_per_select"].as_f64().unwrap() >= 64.0 * 0.5);
    assert!(db["read_lat_us"].as_f64().unwrap() > 0.0);
    assert!(db["db_cpu_s"].as_f64().unwrap() > 0.0);
    assert!(db["reads_per_db_cpu_s"].as_f64().unwrap() > 0.0);
    assert_eq!(sm["ops"]["update"]["ops"], 0);
    assert!(sm["ops"]["select"]["ops"].as_u64().unwrap() > 0);
    assert!(sm["ops"]["select"]["lat_us"]["p99"].as_f64().unwrap() > 0.0);
    assert!(!sm["waits"].as_array().unwrap().is_empty());
    if r["targets"][0]["device"].is_null() {
        eprintln!(
            "device checks skipped: no block device under {}",
            pg.display()
        );
    } else {
        // The data files were dropped from the page cache: the device saw reads,
        // and the cache share is computed from them.
        assert!(sm["os"]["read_ios"].as_u64().unwrap() > 0, "{}", sm["os"]);
        let pct = sm["os_cache_hit_pct"].as_f64().unwrap();
        assert!((0.0..=100.0).contains(&pct));
        assert!(!sm["cache"]["verdict"].as_str().unwrap().is_empty());
    }
    let ts = fs::read_to_string(out1.join("timeseries.csv")).unwrap();
    assert!(ts.lines().count() >= 3, "{ts}");
    assert!(
        ts.lines().nth(1).unwrap().split(',').count()
            == ts.lines().next().unwrap().split(',').count()
    );
    let text = fs::read_to_string(out1.join("summary.txt")).unwrap();
    for h in ["Load Profile", "Top Events", "IO Profile", "Cache verdict"] {
        assert!(text.contains(h), "{h} missing from summary.txt");
    }
    assert!(
        processes_in(&pg).is_empty(),
        "the run left the server running"
    );

    // Updates: exactly 20 per window of 100 loops, per session.
    let o2 = root.join("r2");
    let heavy = [
        "--redo-stress",
        "heavy",
        "--output",
        o2.to_str().unwrap(),
        "--json",
        "-q",
    ];
    let r = run(&db_run("5m", &[EXACT_MIX, &heavy].concat()));
    assert_eq!(r["status"], "ok");
    let per = r["summary"]["per_session_ops"].as_array().unwrap();
    assert_eq!(per.len(), 2);
    for p in per {
        assert_eq!(p, &serde_json::json!([160, 40, 0]));
    }
    assert_eq!(r["summary"]["update_pct_measured"], 20.0);
    assert!(r["summary"]["db"]["wal_bytes"].as_u64().unwrap() > 0);

    // The server dies mid-run: a failed result with what was measured, nothing left.
    let out3 = root.join("r3");
    let o3 = out3.to_str().unwrap();
    let mut child = start(with(&db_run(
        "60s",
        &["--sessions", "2", "--output", o3, "-q"],
    )));
    assert!(wait_while_running(&mut child, || has_timeseries_row(&out3)));
    let pm: i32 = fs::read_to_string(pg.join("data/postmaster.pid"))
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: kill has no memory-safety preconditions.
    unsafe { libc::kill(pm, libc::SIGKILL) };
    let st = child.wait().unwrap();
    assert_eq!(st.code(), Some(1));
    assert_eq!(status_of(&out3), "failed");
    assert!(
        wait_for(Duration::from_secs(10), || processes_in(&pg).is_empty()),
        "{:?}",
        processes_in(&pg)
    );

    // Ctrl-C: an interrupted result, the server stopped.
    let out4 = root.join("r4");
    let o4 = out4.to_str().unwrap();
    let keep = ["--sessions", "2", "--keep", "--output", o4, "-q"];
    let code = interrupt_when(with(&db_run("60s", &keep)), || has_timeseries_row(&out4));
    assert_eq!(code, Some(130));
    assert_eq!(status_of(&out4), "interrupted");
    assert!(
        processes_in(&pg).is_empty(),
        "Ctrl-C left the server running (even with --keep)"
    );

    // --keep leaves the server for later runs; teardown removes everything.
    let o5 = root.join("r5");
    let r = run(&db_run(
        "1s",
        &[
            "--sessions",
            "1",
            "--keep",
            "--output",
            o5.to_str().unwrap(),
            "--json",
            "-q",
        ],
    ));
    assert_eq!(r["status"], "ok");
    assert!(
        !processes_in(&pg).is_empty(),
        "--keep did not keep the server"
    );
    // The kept server, reached as an existing one: nothing about it is changed.
    let state: Value =
        serde_json::from_slice(&fs::read(pg.join("iolens-cluster.json")).unwrap()).unwrap();
    let dsn = format!(
        "host={} port={} user=iolens dbname=iolens",
        state["running"]["socket_dir"].as_str().unwrap(),
        state["port"]
    );
    let o6 = root.join("r6");
    let existing = ["--dsn", &dsn, "--sessions", "2", "--update-pct", "10"];
    let r = json_out(db_run(
        "1s",
        &[
            &existing[..],
            &["--output", o6.to_str().unwrap(), "--json", "-q"],
        ]
        .concat(),
    ));
    assert_eq!(r["status"], "ok");
    assert_eq!(r["config"]["server"]["managed"], false);
    assert!(r["summary"]["db"]["physical_reads"].as_u64().unwrap() > 0);
    assert!(
        !processes_in(&pg).is_empty(),
        "a --dsn run stopped a server it does not own"
    );
    iolens()
        .args(["db", "teardown", "--pg-dir", pg.to_str().unwrap()])
        .assert()
        .success();
    assert!(processes_in(&root).is_empty());
    assert!(!pg.exists(), "teardown left {}", pg.display());
    fs::remove_dir_all(&root).unwrap();
}

#[test]
fn an_os_cache_limit_puts_the_server_in_a_memory_cgroup_and_removes_it() {
    // SAFETY: geteuid has no preconditions.
    if !have_postgres() || unsafe { libc::geteuid() } != 0 {
        skip!("needs PostgreSQL and root");
    }
    if !Path::new("/sys/fs/cgroup/memory/memory.limit_in_bytes").exists()
        && !fs::read_to_string("/sys/fs/cgroup/cgroup.controllers")
            .is_ok_and(|c| c.contains("memory"))
    {
        skip!("no memory cgroup controller");
    }
    let root = scratch("cgroup");
    let pg = root.join("pg");
    let pg_s = pg.to_str().unwrap();
    json_out([
        "db",
        "setup",
        "--pg-dir",
        pg_s,
        "--cache",
        "128k",
        "--schemas",
        "1",
        "--scale",
        "1000",
        "--scan-scale",
        "8",
        "--json",
        "-q",
    ]);
    let out = root.join("r");
    let limited = [
        "--pg-dir",
        pg_s,
        "--cache",
        "128k",
        "--os-cache-limit",
        "4M",
    ];
    let read_only = [
        "--sessions",
        "2",
        "--update-pct",
        "0",
        "--output",
        out.to_str().unwrap(),
    ];
    let r = json_out(db_run(
        "2s",
        &[&limited[..], &read_only, &["--json", "-q"]].concat(),
    ));
    assert_eq!(r["status"], "ok");
    let cg = r["config"]["server"]["cgroup"]["path"]
        .as_str()
        .unwrap()
        .to_string();
    let limit = r["summary"]["cgroup"]["limit_bytes"].as_u64().unwrap();
    assert!(limit >= 4 << 20);
    let mem = &r["summary"]["cgroup"]["memory"];
    assert!(mem["max_usage_bytes"].as_u64().unwrap() <= limit, "{mem}");
    assert!(!Path::new(&cg).exists(), "cgroup {cg} left behind");
    assert!(processes_in(&pg).is_empty());
    iolens()
        .args(["db", "teardown", "--pg-dir", pg_s])
        .assert()
        .success();
    fs::remove_dir_all(&root).unwrap();
}
