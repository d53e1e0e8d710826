//! `iolens db setup|run --db sqlite --path DIR`: the SLOB method on embedded
//! SQLite, with the same options, measurement and result fields as on
//! PostgreSQL. Reads of the schema files go through a direct-I/O VFS, so a
//! miss of SQLite's page cache is a device read (proven by the cache verdict).

use crate::cmd_db::{check_run_args, measure, workload_spec, DbRunArgs, Measure, SetupArgs};
use crate::errors::usage;
use crate::output::result_dir;
use anyhow::{Context as _, Result};
use iolens_core::result::db::{DbResult, ServerInfo};
use iolens_core::result::TargetInfo;
use iolens_core::units::human_bytes;
use iolens_db::pagecache;
use iolens_db::report::Context;
use iolens_db::run::Probes;
use iolens_sqlite::backend::SqliteBackend;
use iolens_sqlite::slob::{self, Recorded, Statements};
use serde_json::json;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

fn dir_of(path: &Option<PathBuf>) -> Result<PathBuf> {
    crate::cmd_db::absolute(path.as_deref().expect("checked by check_kind"))
}

pub fn setup(a: SetupArgs) -> Result<u8> {
    if a.schemas == 0 {
        return usage("--schemas must be at least 1");
    }
    if a.scale.0 < 2 {
        return usage("--scale must be at least 2 blocks (16k)");
    }
    if a.scan_scale.0 == 0 || a.load_parallel == 0 {
        return usage("--scan-scale and --load-parallel must be at least 1");
    }
    let dir = dir_of(&a.server.path)?;
    if dir.exists() && !dir.is_dir() {
        return usage(format!("--path {} is not a directory", dir.display()));
    }
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    // Decide, schema by schema, what to do; refuse before touching anything.
    let mut todo = Vec::new();
    for n in 1..=a.schemas {
        match slob::recorded(&dir, n) {
            Recorded::Schema(s, x) if s == a.scale.0 && x == a.scan_scale.0 && !a.reload => {}
            Recorded::Schema(s, _) if !a.reload => {
                return usage(format!(
                    "schema {n} in {} holds a different layout ({s} blocks); add --reload to replace it",
                    dir.display()
                ))
            }
            Recorded::Missing => todo.push(n),
            _ if slob::is_ours(&dir, n) => todo.push(n),
            _ => {
                return usage(format!(
                    "{} exists and is not an iolens schema file; choose another --path",
                    slob::schema_path(&dir, n).display()
                ))
            }
        }
    }
    let per_schema = (a.scale.0 + a.scan_scale.0) * slob::PAGE_SIZE * 115 / 100;
    let need = per_schema * todo.len() as u64;
    if let Some(free) = iolens_db::layout::free_bytes(&dir) {
        if free < need {
            return usage(format!(
                "not enough space in {}: loading needs about {}, {} is free; use a smaller --scale",
                dir.display(),
                human_bytes(need),
                human_bytes(free)
            ));
        }
    }
    let total_rows = a.scale.0 * todo.len() as u64;
    let done = AtomicU64::new(0);
    let bar = !a.quiet && !a.json && std::io::stderr().is_terminal();
    let t0 = Instant::now();
    let stop = iolens_core::interrupt::requested;
    let results: Vec<Result<(), String>> = std::thread::scope(|sc| {
        let chunks: Vec<Vec<u32>> = (0..a.load_parallel as usize)
            .map(|i| {
                todo.iter()
                    .copied()
                    .skip(i)
                    .step_by(a.load_parallel as usize)
                    .collect()
            })
            .filter(|v: &Vec<u32>| !v.is_empty())
            .collect();
        let hs: Vec<_> = chunks
            .into_iter()
            .map(|schemas| {
                let (dir, done) = (&dir, &done);
                sc.spawn(move || {
                    for n in schemas {
                        slob::load_schema(
                            dir,
                            n,
                            a.scale.0,
                            a.scan_scale.0,
                            a.seed,
                            |k| {
                                done.fetch_add(k, Ordering::Relaxed);
                            },
                            stop,
                        )
                        .map_err(|e| e.to_string())?;
                    }
                    Ok(())
                })
            })
            .collect();
        while bar && hs.iter().any(|h| !h.is_finished()) {
            let d = done.load(Ordering::Relaxed);
            let pct = 100.0 * d as f64 / total_rows.max(1) as f64;
            let rate =
                d as f64 * slob::PAGE_SIZE as f64 / 1e6 / t0.elapsed().as_secs_f64().max(1e-3);
            let mut e = std::io::stderr();
            let _ = write!(
                e,
                "\r\x1b[2Kloading {pct:5.1} % {d}/{total_rows} rows, {rate:.1} MB/s"
            );
            let _ = e.flush();
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        hs.into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err("a loader panicked".into())))
            .collect()
    });
    if bar {
        eprint!("\r\x1b[2K");
    }
    if iolens_core::interrupt::requested() {
        eprintln!(
            "iolens: setup interrupted; the next `iolens db setup` reloads the incomplete schemas"
        );
        return Ok(130);
    }
    if let Some(Err(e)) = results.into_iter().find(|r| r.is_err()) {
        return Err(anyhow::anyhow!("loading the SQLite schemas: {e}"));
    }
    let layouts: Vec<_> = (1..=a.schemas)
        .map(|n| slob::layout(&dir, n))
        .collect::<Result<_, _>>()
        .map_err(|e| anyhow::anyhow!("checking the layout: {e}"))?;
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(
                &json!({"db": "sqlite", "path": dir, "loaded": todo, "layout": layouts})
            )?
        );
    } else {
        println!(
            "SQLite {} in {} (direct-I/O reads)",
            rusqlite::version(),
            dir.display()
        );
        if todo.is_empty() {
            println!(
                "layout present ({} schemas x {} blocks): reused",
                a.schemas, a.scale.0
            );
        } else {
            println!(
                "loaded schemas {todo:?} in {:.1} s",
                t0.elapsed().as_secs_f64()
            );
        }
        println!(
            "schema        rows  rows/page  key/page corr.  table pages  index pages       file"
        );
        for l in &layouts {
            println!(
                "user{:<4} {:>9} {:>10.2} {:>15.4} {:>12} {:>12} {:>10}",
                l.schema,
                l.rows,
                l.rows_per_page,
                l.key_order_correlation,
                l.table_pages,
                l.index_pages,
                human_bytes(l.file_bytes)
            );
        }
    }
    if let Some(l) = layouts.iter().find(|l| l.rows_per_page > 1.01) {
        return Err(anyhow::anyhow!(
            "layout check failed: schema {} holds {:.2} rows per page",
            l.schema,
            l.rows_per_page
        ));
    }
    Ok(0)
}

pub fn run(a: DbRunArgs) -> Result<u8> {
    check_run_args(&a)?;
    let started = Instant::now();
    let dir = dir_of(&a.server.path)?;
    if a.server.dsn.is_some() || a.server.os_cache_limit.is_some() || a.server.direct_io {
        return usage("--dsn, --os-cache-limit and --direct-io are for PostgreSQL; SQLite reads its files with direct I/O already");
    }
    let mut scale = None;
    let mut available = 0;
    for n in 1.. {
        match slob::recorded(&dir, n) {
            Recorded::Schema(s, _) if scale.is_none() || scale == Some(s) => {
                scale = Some(s);
                available = n;
            }
            Recorded::Missing => break,
            _ => {
                return usage(format!(
                    "schema {n} in {} is incomplete or different: run `iolens db setup --db sqlite --path {}` again",
                    dir.display(),
                    dir.display()
                ))
            }
        }
    }
    let Some(scale) = scale else {
        return usage(format!(
            "no iolens SQLite schemas in {}: run `iolens db setup --db sqlite --path {}` first",
            dir.display(),
            dir.display()
        ));
    };
    let spec = workload_spec(&a, available, scale)?;
    let backend = SqliteBackend::new(dir.clone(), a.server.cache.0, spec.redo_stress)
        .map_err(|e| anyhow::anyhow!(e.to_string()))?;
    // The plan must be an index range search, as on PostgreSQL.
    let plan: String = {
        let c = slob::open(&slob::schema_path(&dir, 1), 1 << 20, false)
            .map_err(|e| anyhow::anyhow!(e.to_string()))?;
        c.query_row(
            &format!("EXPLAIN QUERY PLAN {}", Statements::SELECT),
            [1, 2],
            |r| r.get(3),
        )
        .map_err(|e| anyhow::anyhow!("EXPLAIN: {e}"))?
    };
    if !plan.contains("USING INDEX cf_key") {
        return usage(format!(
            "SQLite does not read the table through the key index: {plan}"
        ));
    }
    let data_bytes: u64 = (1..=spec.schemas)
        .filter_map(|n| std::fs::metadata(slob::schema_path(&dir, n)).ok())
        .map(|m| m.len())
        .sum();
    let evicted = (!a.no_evict).then(|| pagecache::evict(&dir));
    let device = iolens_probe::device_of_path(&dir);
    let name = a.out.name.clone().unwrap_or_else(|| "db".into());
    let rdir = result_dir(&a.out, &name)?;
    let mut doc = DbResult::new("db", &name);
    doc.targets = vec![TargetInfo {
        path: dir.display().to_string(),
        kind: "directory".into(),
        size_bytes: data_bytes,
        device: device.as_ref().map(|d| d.name.clone()),
    }];
    doc.config = json!({
        "workload": spec,
        "server": {
            "db": "sqlite",
            "managed": true,
            "path": dir,
            "cache_bytes": a.server.cache.0,
            "direct_io": true,
        },
        "evict_os_cache": !a.no_evict,
        "evicted_bytes": evicted.map(|e| e.bytes),
        "evicted_files": evicted.map(|e| e.files),
    });
    let version = format!("SQLite {}", rusqlite::version());
    doc.extra.server = Some(ServerInfo {
        version: version.clone(),
        vfs: Some(iolens_sqlite::vfs::VFS_NAME.into()),
        settings: [
            ("page_size", json!(slob::PAGE_SIZE)),
            ("cache_size_bytes", json!(a.server.cache.0)),
            ("journal_mode", json!("wal")),
            ("synchronous", json!("full")),
            ("mmap_size", json!(0)),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect(),
        ..Default::default()
    });
    doc.extra.plan = Some(json!({ "select": plan }));
    rdir.write_result(&doc)?;
    let pid = std::process::id();
    let probes = Probes {
        device: device.as_ref().map(|d| d.name.clone()),
        server_pids: Box::new(move || vec![pid]),
        server_alive: Box::new(|| true),
    };
    let cx = Context {
        server_version: version,
        server_major: 0,
        managed: true,
        // SAFETY: geteuid has no preconditions.
        root: unsafe { libc::geteuid() } == 0,
        direct_io: true,
        os_cache_limit: None,
        data_bytes,
        shared_buffers_bytes: a.server.cache.0,
        mem_bytes: doc.host.mem_bytes,
    };
    let m = Measure {
        spec: &spec,
        probes,
        dir: rdir,
        doc,
        warnings: Vec::new(),
        cx,
        out: &a.out,
        name,
        started,
    };
    measure(&backend, m, &mut || None, &|_| {})
}
