//! `iolens db setup | run | teardown`: the SLOB method on PostgreSQL.
//!
//! The pipeline of `db run`: options → server (managed cluster started, or
//! an existing one reached) → layout and plan checked → OS page cache
//! dropped for the data files → measured run → result directory, with the
//! cache verdict and an AWR-like summary.

use crate::args::OutputArgs;
use crate::errors::{usage, UsageError};
use crate::output::{result_dir, Progress};
use anyhow::Result;
use clap::{Args, Subcommand, ValueEnum};
use iolens_core::result::db::{
    self as db_result, CgroupFigures, CgroupMemory, DbResult, DbSummary,
};
use iolens_core::result::TargetInfo;
use iolens_core::{ByteSize, DurationArg, ResultDir, Status};
use iolens_db::layout::{self, LayoutReport, LayoutSpec};
use iolens_db::pg::{self, PgBackend, ServerInfo};
use iolens_db::report::{self, Context};
use iolens_db::run::{Probes, SecondRow};
use iolens_db::server::{ManagedCluster, ServerSettings, DATABASE};
use iolens_db::workload::{Blocks, Hotspot, RedoStress, Think, WorkloadSpec};
use iolens_db::{pagecache, procs, Backend, DbError, BLOCK};
use serde_json::json;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Instant;

/// `iolens db`.
#[derive(Args, Debug)]
pub struct DbArgs {
    #[command(subcommand)]
    pub command: DbCommand,
}

#[derive(Subcommand, Debug)]
#[allow(clippy::large_enum_variant)] // parsed once per process
pub enum DbCommand {
    /// Create the data set: schemas of one row per 8 KiB page, keys in random order, an index.
    Setup(SetupArgs),
    /// Run the SLOB work loop and measure it, from the database down to the device.
    Run(DbRunArgs),
    /// Stop a managed cluster and remove everything iolens created for it.
    Teardown(TeardownArgs),
}

/// Which server, and how a managed one is configured.
#[derive(Args, Debug, Clone)]
pub struct ServerArgs {
    /// Database: postgres (a managed cluster or --dsn) or sqlite (embedded, files under --path).
    #[arg(long, value_enum, default_value = "postgres")]
    pub db: DbKind,
    /// Directory of the embedded SQLite schema files (with --db sqlite).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["pg_dir", "dsn"])]
    pub path: Option<PathBuf>,
    /// Managed throwaway cluster in this directory (put it on the storage under test).
    #[arg(long, value_name = "PATH", conflicts_with = "dsn")]
    pub pg_dir: Option<PathBuf>,
    /// An existing server: postgres://user:pass@host:port/db or 'host=... dbname=...'.
    /// iolens changes none of its settings.
    #[arg(long, value_name = "DSN")]
    pub dsn: Option<String>,
    /// Directory of the PostgreSQL server binaries (initdb, pg_ctl, postgres).
    #[arg(long, value_name = "DIR")]
    pub pg_bin: Option<PathBuf>,
    /// shared_buffers of the managed server: keep it small so reads reach storage.
    #[arg(long, default_value = "64M", value_name = "SIZE")]
    pub cache: ByteSize,
    /// Limit the OS page cache the managed server may use (memory cgroup; root).
    #[arg(long, value_name = "SIZE")]
    pub os_cache_limit: Option<ByteSize>,
    /// Managed server bypasses the OS page cache (debug_io_direct=data; PostgreSQL 16+).
    #[arg(long)]
    pub direct_io: bool,
    /// Leave the managed server running afterwards (later commands reuse it).
    #[arg(long)]
    pub keep: bool,
}

/// Which database `iolens db` works on.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DbKind {
    Postgres,
    Sqlite,
}

impl ServerArgs {
    /// Checks that --db and --path/--pg-dir/--dsn agree.
    fn check_kind(&self) -> Result<()> {
        match (self.db, &self.path) {
            (DbKind::Sqlite, None) => usage("--db sqlite needs --path DIR (where the schema files live)"),
            (DbKind::Postgres, Some(_)) => usage("--path is for --db sqlite; a PostgreSQL cluster takes --pg-dir or --dsn"),
            (DbKind::Postgres, None) if self.pg_dir.is_none() && self.dsn.is_none() => {
                usage("give --pg-dir PATH (a managed cluster iolens creates there) or --dsn postgres://... (an existing server), or --db sqlite --path DIR")
            }
            _ => Ok(()),
        }
    }
}

/// `iolens db setup`.
#[derive(Args, Debug, Clone)]
pub struct SetupArgs {
    #[command(flatten)]
    pub server: ServerArgs,
    /// Number of schemas (SLOB users), one table each.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub schemas: u32,
    /// Rows per schema, one per 8 KiB block: a block count (131072) or a size (1G).
    #[arg(long, default_value = "10000", value_name = "SIZE|BLOCKS")]
    pub scale: Blocks,
    /// Size of each unindexed scan table: blocks or a size.
    #[arg(long, default_value = "1M", value_name = "SIZE|BLOCKS")]
    pub scan_scale: Blocks,
    /// Loader connections.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub load_parallel: u32,
    /// Replace an existing layout (needed when it differs from the one asked for).
    #[arg(long)]
    pub reload: bool,
    /// Seed of the keys' physical order.
    #[arg(long, default_value_t = 0x5107)]
    pub seed: u64,
    /// Print the layout as JSON.
    #[arg(long)]
    pub json: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedoArg {
    Lite,
    Heavy,
}

/// `iolens db run`.
#[derive(Args, Debug, Clone)]
pub struct DbRunArgs {
    #[command(flatten)]
    pub server: ServerArgs,
    /// Sessions in all (default: one per schema).
    #[arg(long, value_name = "N", conflicts_with = "threads_per_schema")]
    pub sessions: Option<u32>,
    /// Sessions per schema (SLOB's threads per schema).
    #[arg(long, value_name = "N")]
    pub threads_per_schema: Option<u32>,
    /// Use only the first N schemas of the layout.
    #[arg(long, value_name = "N")]
    pub schemas: Option<u32>,
    /// Updates per window of 100 loops: 0..50 or 100.
    #[arg(long, default_value_t = 25, value_name = "PCT")]
    pub update_pct: u32,
    /// Full scans of the unindexed table per window of 100 loops.
    #[arg(long, default_value_t = 0, value_name = "PCT")]
    pub scan_pct: u32,
    /// Rows read by each select (index range).
    #[arg(long, default_value_t = 64, value_name = "ROWS")]
    pub work_unit: u64,
    /// Rows changed by each update.
    #[arg(long, default_value_t = 8, value_name = "ROWS")]
    pub update_work_unit: u64,
    /// lite: updates change one filler column; heavy: all of them.
    #[arg(long, value_enum, default_value = "lite")]
    pub redo_stress: RedoArg,
    /// SIZE@OFFSET/FREQ: every FREQ-th loop works inside the hot spot (e.g. 8M@16M/3).
    #[arg(long, value_name = "SIZE@OFFSET/FREQ")]
    pub hotspot: Option<Hotspot>,
    /// Every N-th loop works on schema 1.
    #[arg(long, value_name = "N")]
    pub hot_schema_freq: Option<u32>,
    /// MIN..MAX/FREQ: every FREQ-th loop sleeps between MIN and MAX (e.g. 1ms..5ms/10).
    #[arg(long, value_name = "MIN..MAX/FREQ")]
    pub think: Option<Think>,
    /// Measured time.
    #[arg(long, default_value = "5m")]
    pub runtime: DurationArg,
    /// Measured loops per session (ends the run when all are done; --runtime still caps it).
    #[arg(long, value_name = "N")]
    pub work_loop: Option<u64>,
    /// Time run first and not counted.
    #[arg(long, default_value = "30s")]
    pub warmup: DurationArg,
    /// Seed of the sessions' key choices.
    #[arg(long, default_value_t = 0x10_1E45)]
    pub seed: u64,
    /// Keep the OS page cache as it is (by default the data files are dropped from it first).
    #[arg(long)]
    pub no_evict: bool,
    #[command(flatten)]
    pub out: OutputArgs,
}

/// `iolens db teardown`.
#[derive(Args, Debug, Clone)]
pub struct TeardownArgs {
    /// The managed cluster's directory.
    #[arg(long, value_name = "PATH")]
    pub pg_dir: PathBuf,
}

pub fn run(a: DbArgs) -> Result<u8> {
    match a.command {
        DbCommand::Setup(s) => setup(s),
        DbCommand::Run(r) => run_db(r),
        DbCommand::Teardown(t) => teardown(t),
    }
}

/// Library errors the user can fix become usage errors (exit 2).
fn db<T>(r: Result<T, DbError>) -> Result<T> {
    r.map_err(|e| {
        if e.is_usage() {
            UsageError(e.to_string()).into()
        } else {
            anyhow::Error::new(e)
        }
    })
}

fn interrupted() -> bool {
    iolens_core::interrupt::requested()
}

/// The server a command works on; a managed one is stopped when this is
/// dropped, unless it is to be kept (and the command was not interrupted).
struct Server {
    managed: Option<ManagedCluster>,
    keep: bool,
    config: postgres::Config,
    /// How the server is named in messages and results.
    label: String,
}

impl Server {
    fn open(a: &ServerArgs, max_connections: u32, create: bool) -> Result<Server> {
        if let Some(l) = a.os_cache_limit {
            if a.dsn.is_some() {
                return usage("--os-cache-limit works on a managed server (--pg-dir) only");
            }
            if l.0 < (1 << 20) {
                return usage("--os-cache-limit must be at least 1M");
            }
        }
        if a.dsn.is_some() && a.direct_io {
            return usage("--direct-io works on a managed server (--pg-dir) only; set debug_io_direct on your server");
        }
        if let Some(dsn) = &a.dsn {
            let config = postgres::Config::from_str(dsn).map_err(|e| {
                UsageError(format!(
                    "--dsn '{}': {e}; expected postgres://user:password@host:port/dbname or 'host=... port=... dbname=...'",
                    redact(dsn)
                ))
            })?;
            return Ok(Server {
                managed: None,
                keep: true,
                config,
                label: redact(dsn),
            });
        }
        // Absolute: the server runs as another user, from another directory.
        let dir = absolute(
            a.pg_dir
                .as_deref()
                .expect("check_kind requires --pg-dir or --dsn"),
        )?;
        if a.cache.0 < 128 << 10 {
            return usage("--cache must be at least 128k (PostgreSQL's minimum shared_buffers)");
        }
        let mut c = if create {
            db(ManagedCluster::open_or_create(&dir, a.pg_bin.as_deref()))?
        } else {
            if !ManagedCluster::exists(&dir) {
                return usage(format!(
                    "--pg-dir {}: no iolens cluster there; create it with `iolens db setup --pg-dir {}`",
                    dir.display(),
                    dir.display()
                ));
            }
            db(ManagedCluster::open(&dir))?
        };
        let settings = ServerSettings {
            shared_buffers: a.cache.0,
            max_connections: max_connections.max(20),
            direct_io: a.direct_io,
            os_cache_limit: a.os_cache_limit.map(|l| l.0),
        };
        let started = c.ensure_started(&settings);
        let mut s = Server {
            label: format!("managed cluster {}", c.dir().display()),
            config: postgres::Config::new(),
            managed: None,
            keep: a.keep,
        };
        match started {
            Ok(_) => {
                s.config = db(c.config(DATABASE))?;
                s.managed = Some(c);
                Ok(s)
            }
            Err(e) => {
                let _ = c.stop();
                db(Err(e))
            }
        }
    }

    fn data_dir(&self, info: &ServerInfo) -> Option<PathBuf> {
        match &self.managed {
            Some(c) => Some(c.data_dir().to_path_buf()),
            None => info.data_directory.clone().filter(|p| p.is_dir()),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(c) = self.managed.as_mut() {
            let dead = c.state.running.is_some() && !c.is_running();
            if !self.keep || interrupted() || dead {
                if let Err(e) = c.stop() {
                    eprintln!("iolens: stopping the server: {e}");
                }
            }
        }
    }
}

/// A DSN with its password replaced by `***`.
fn redact(dsn: &str) -> String {
    if let Some((scheme, rest)) = dsn.split_once("://") {
        if let Some((cred, host)) = rest.rsplit_once('@') {
            if let Some((user, _)) = cred.split_once(':') {
                return format!("{scheme}://{user}:***@{host}");
            }
        }
        return dsn.to_string();
    }
    dsn.split_whitespace()
        .map(|kv| {
            if kv.starts_with("password=") {
                "password=***".to_string()
            } else {
                kv.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn setup(a: SetupArgs) -> Result<u8> {
    a.server.check_kind()?;
    if a.server.db == DbKind::Sqlite {
        return crate::cmd_db_sqlite::setup(a);
    }
    if a.schemas == 0 {
        return usage("--schemas must be at least 1");
    }
    if a.scale.0 < 2 {
        return usage("--scale must be at least 2 blocks (16k)");
    }
    if a.scan_scale.0 == 0 {
        return usage("--scan-scale must be at least 1 block (8k)");
    }
    if a.load_parallel == 0 {
        return usage("--load-parallel must be at least 1");
    }
    let server = Server::open(&a.server, a.load_parallel + 10, true)?;
    let mut admin = db(pg::connect(&server.config, &server.label))?;
    let info = db(pg::server_info(&mut admin))?;
    let data_dir = server.data_dir(&info);
    let spec = LayoutSpec {
        schemas: a.schemas,
        scale: a.scale.0,
        scan_blocks: a.scan_scale.0,
        load_parallel: a.load_parallel,
        reload: a.reload,
        seed: a.seed,
    };
    // A progress bar on a terminal only (the shared one needs result options).
    let bar = !a.quiet && !a.json && std::io::stderr().is_terminal();
    let line = |text: &str| {
        if bar {
            let mut e = std::io::stderr();
            let _ = write!(e, "\r\x1b[2K{text}");
            let _ = e.flush();
        }
    };
    let t0 = Instant::now();
    let show = |done: u64, total: u64| {
        let pct = if total == 0 {
            100.0
        } else {
            100.0 * done as f64 / total as f64
        };
        let width = 30usize;
        let filled = ((pct / 100.0) * width as f64) as usize;
        let el = t0.elapsed().as_secs_f64();
        let rate = done as f64 * BLOCK as f64 / 1e6 / el.max(1e-3);
        line(&format!(
            "loading [{}{}] {pct:5.1} % {done}/{total} rows, {rate:.1} MB/s",
            "#".repeat(filled),
            ".".repeat(width - filled)
        ));
    };
    let report = layout::setup(
        &server.config,
        &spec,
        data_dir.as_deref(),
        &iolens_core::interrupt::STOP,
        &show,
    );
    line("");
    let report = db(report)?;
    if report.interrupted {
        eprintln!(
            "iolens: setup interrupted; the next `iolens db setup` reloads the incomplete schemas"
        );
        return Ok(130);
    }
    let bad: Vec<&str> = report
        .schemas
        .iter()
        .filter(|s| s.max_rows_per_page != 1)
        .map(|s| s.schema.as_str())
        .collect();
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "server": server.label,
                "version": info.version,
                "layout": spec,
                "report": report,
            }))?
        );
    } else {
        print!("{}", layout_text(&server.label, &info, &spec, &report));
    }
    if !bad.is_empty() {
        return Err(anyhow::anyhow!(
            "layout check failed: {} hold more than one row per page",
            bad.join(", ")
        ));
    }
    Ok(0)
}

fn layout_text(label: &str, info: &ServerInfo, spec: &LayoutSpec, r: &LayoutReport) -> String {
    let mut t = String::new();
    let h = iolens_core::units::human_bytes;
    t.push_str(&format!("{label}: {}\n", info.version));
    if r.reused {
        t.push_str(&format!(
            "layout present ({} schemas x {} blocks): reused\n",
            spec.schemas, spec.scale
        ));
    } else {
        t.push_str(&format!(
            "loaded schemas {:?} in {:.1} s\n",
            r.loaded, r.load_s
        ));
    }
    t.push_str(
        "schema          rows   rows/page (max)  key/page corr.    table     index  scan table\n",
    );
    for s in &r.schemas {
        t.push_str(&format!(
            "{:<12} {:>8}   {:>6.2} ({:>3})  {:>14} {:>9} {:>9} {:>11}\n",
            s.schema,
            s.rows,
            s.avg_rows_per_page,
            s.max_rows_per_page,
            s.key_page_correlation
                .map(|c| format!("{c:.4}"))
                .unwrap_or_else(|| "-".into()),
            h(s.table_bytes),
            h(s.index_bytes),
            h(s.scan_table_bytes)
        ));
    }
    t
}

/// `path` made absolute against the current directory (it need not exist).
pub(crate) fn absolute(path: &std::path::Path) -> Result<PathBuf> {
    std::path::absolute(path).map_err(|e| UsageError(format!("{}: {e}", path.display())).into())
}

fn teardown(a: TeardownArgs) -> Result<u8> {
    let c = db(ManagedCluster::open(&absolute(&a.pg_dir)?))?;
    db(c.destroy())?;
    println!("removed the iolens cluster in {}", a.pg_dir.display());
    Ok(0)
}

/// Warnings about an existing server's settings that distort the method.
fn settings_warnings(info: &ServerInfo, data_bytes: u64, update_pct: u32) -> Vec<String> {
    let mut w = Vec::new();
    let get = |k: &str| {
        info.settings
            .get(k)
            .map(|s| s.split(' ').next().unwrap_or("").to_string())
    };
    if data_bytes > 0 && info.shared_buffers_bytes * 10 > data_bytes {
        w.push(format!(
            "shared_buffers ({}) holds {:.0} % of the data set ({}): most reads will be buffer hits, not storage reads; \
             use a larger --scale or a smaller shared_buffers",
            iolens_core::units::human_bytes(info.shared_buffers_bytes),
            100.0 * info.shared_buffers_bytes as f64 / data_bytes as f64,
            iolens_core::units::human_bytes(data_bytes)
        ));
    }
    if get("enable_bitmapscan").as_deref() == Some("on") {
        w.push("the server allows bitmap scans (enable_bitmapscan=on); iolens sessions turn them off for themselves (SET), other clients still prefetch".into());
    }
    if get("effective_io_concurrency").is_some_and(|v| v != "0") {
        w.push("the server prefetches (effective_io_concurrency > 0); iolens sessions set it to 0 for themselves".into());
    }
    if get("track_io_timing").as_deref() == Some("off") {
        w.push("track_io_timing is off on the server: the database read latency is unavailable unless iolens may SET it (superuser)".into());
    }
    if update_pct > 0 {
        for k in ["fsync", "synchronous_commit", "full_page_writes"] {
            if get(k).as_deref() == Some("off") {
                w.push(format!("{k} is off on the server: commits are not durable, updates cost less than on a real database"));
            }
        }
    }
    if let Some(m) = get("io_method") {
        if m != "sync" {
            w.push(format!("io_method = {m}: reads are asynchronous, not the synchronous single-block reads of the method"));
        }
    }
    w
}

fn data_bytes(c: &mut postgres::Client, schemas: u32) -> u64 {
    let mut total = 0u64;
    for n in 1..=schemas {
        let s = pg::schema_name(n);
        if let Ok(r) = c.query_one(
            &format!(
                "SELECT (pg_total_relation_size('{s}.cf1') + pg_total_relation_size('{s}.cf2'))::int8"
            ),
            &[],
        ) {
            total += r.get::<_, i64>(0) as u64;
        }
    }
    total
}

/// Checks of `db run` options that need no server.
pub(crate) fn check_run_args(a: &DbRunArgs) -> Result<()> {
    if a.update_pct > 100 || (51..=99).contains(&a.update_pct) {
        return usage(format!(
            "--update-pct {}: use 0..50 or 100 (51-99 cannot be mixed deterministically, as in SLOB)",
            a.update_pct
        ));
    }
    if a.sessions == Some(0) || a.threads_per_schema == Some(0) {
        return usage("--sessions and --threads-per-schema must be at least 1");
    }
    Ok(())
}

/// The work loop's plan from the options, for a layout of `available`
/// schemas of `scale` blocks.
pub(crate) fn workload_spec(a: &DbRunArgs, available: u32, scale: u64) -> Result<WorkloadSpec> {
    let schemas = a.schemas.unwrap_or(available);
    if schemas == 0 || schemas > available {
        return usage(format!(
            "--schemas {schemas}: the layout has {available} schemas"
        ));
    }
    let sessions = match (a.sessions, a.threads_per_schema) {
        (Some(n), _) => n,
        (None, Some(t)) => t * schemas,
        (None, None) => schemas,
    };
    let spec = WorkloadSpec {
        sessions,
        schemas,
        scale,
        update_pct: a.update_pct,
        scan_pct: a.scan_pct,
        work_unit: a.work_unit,
        update_work_unit: a.update_work_unit,
        redo_stress: match a.redo_stress {
            RedoArg::Lite => RedoStress::Lite,
            RedoArg::Heavy => RedoStress::Heavy,
        },
        hotspot: a.hotspot,
        hot_schema_every: a.hot_schema_freq,
        think: a.think,
        runtime: a.runtime.0,
        work_loop: a.work_loop,
        warmup: a.warmup.0,
        seed: a.seed,
    };
    if let Err(e) = spec.validate() {
        return usage(e);
    }
    Ok(spec)
}

fn run_db(a: DbRunArgs) -> Result<u8> {
    a.server.check_kind()?;
    if a.server.db == DbKind::Sqlite {
        return crate::cmd_db_sqlite::run(a);
    }
    check_run_args(&a)?;
    let max_sessions = a
        .sessions
        .unwrap_or(0)
        .max(a.threads_per_schema.unwrap_or(1) * a.schemas.unwrap_or(1));
    let mut server = Server::open(&a.server, max_sessions + 10, false)?;
    let started = Instant::now();
    let mut admin = db(pg::connect(&server.config, &server.label))?;
    let info = db(pg::server_info(&mut admin))?;
    let recorded = db(layout::recorded(&mut admin))?;
    if recorded.is_empty() {
        return usage(format!(
            "no iolens layout in the database of {}: run `iolens db setup` first",
            server.label
        ));
    }
    if let Some(r) = recorded.iter().find(|r| !r.loaded) {
        return usage(format!(
            "schema {} of the layout is incomplete (an interrupted setup): run `iolens db setup` again",
            pg::schema_name(r.schema)
        ));
    }
    let available = recorded.len() as u32;
    let spec = workload_spec(&a, available, recorded[0].scale)?;
    let sessions = spec.sessions;
    if let Some(c) = &server.managed {
        // A managed server needs room for every session; restart if not.
        let want = sessions + 10;
        let have: u32 = info
            .settings
            .get("max_connections")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        if have < want {
            drop(admin);
            let dir = c.dir().to_path_buf();
            let keep = server.keep;
            drop(server);
            let mut args = a.server.clone();
            args.pg_dir = Some(dir);
            args.keep = keep;
            server = Server::open(&args, want, false)?;
            admin = db(pg::connect(&server.config, &server.label))?;
        }
    }
    let info = db(pg::server_info(&mut admin))?;
    let plan = db(pg::check_plan(&mut admin, spec.work_unit))?;
    if !plan.plain_index_scan {
        return usage(format!(
            "the planner does not read the table with a plain index scan, so reads would not be \
             synchronous single-block reads:\n{}\n{}",
            plan.custom, plan.generic
        ));
    }
    let data_bytes = data_bytes(&mut admin, spec.schemas);
    let mut warnings = if server.managed.is_none() {
        settings_warnings(&info, data_bytes, spec.update_pct)
    } else {
        Vec::new()
    };
    let data_dir = server.data_dir(&info);
    if data_dir.is_none() {
        warnings.push(
            "the server's data directory is not visible here: the device under it and the server's CPU \
             cannot be measured, so the cache verdict and reads per DB CPU second are unavailable"
                .into(),
        );
    }
    // Start with the data on disk only: checkpoint, then drop the files of
    // this database from the OS page cache.
    let mut evicted = None;
    if !a.no_evict {
        if let Some(dir) = &data_dir {
            let _ = admin.batch_execute("CHECKPOINT");
            let oid: Option<u32> = admin
                .query_one(
                    "SELECT oid FROM pg_database WHERE datname = current_database()",
                    &[],
                )
                .ok()
                .map(|r| r.get(0));
            if let Some(oid) = oid {
                evicted = Some(pagecache::evict(&dir.join("base").join(oid.to_string())));
            }
        }
    }
    drop(admin);

    let device = data_dir.as_deref().and_then(iolens_probe::device_of_path);
    let name = a.out.name.clone().unwrap_or_else(|| "db".into());
    let dir = result_dir(&a.out, &name)?;
    let mut doc = DbResult::new("db", &name);
    doc.targets = vec![TargetInfo {
        path: data_dir
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| server.label.clone()),
        kind: "directory".into(),
        size_bytes: data_bytes,
        device: device.as_ref().map(|d| d.name.clone()),
    }];
    let cgroup = server.managed.as_ref().and_then(|c| c.cgroup().cloned());
    doc.config = json!({
        "workload": spec,
        "server": {
            "managed": server.managed.is_some(),
            "target": server.label,
            "pg_dir": a.server.pg_dir,
            "cache_bytes": server.managed.as_ref().map(|_| a.server.cache.0),
            "os_cache_limit_bytes": a.server.os_cache_limit.map(|l| l.0),
            "cgroup": cgroup,
            "direct_io": a.server.direct_io,
            "keep": a.server.keep,
        },
        "evict_os_cache": !a.no_evict,
        "evicted_bytes": evicted.map(|e| e.bytes),
        "evicted_files": evicted.map(|e| e.files),
    });
    doc.extra.server = Some(db_result::ServerInfo {
        version: info.version.clone(),
        major: Some(info.major),
        version_num: Some(info.version_num.into()),
        settings: info
            .settings
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().into()))
            .collect(),
        data_directory: Some(data_dir.as_ref().map(|p| p.display().to_string())),
        shared_buffers_bytes: Some(info.shared_buffers_bytes),
        vfs: None,
    });
    doc.extra.plan = Some(serde_json::to_value(&plan)?);
    dir.write_result(&doc)?;

    let backend = PgBackend::new(
        server.config.clone(),
        info.major,
        spec.redo_stress,
        server.managed.is_none(),
    );
    let probes = match &server.managed {
        Some(c) => {
            let data = c.data_dir().to_path_buf();
            let pm = c.postmaster_pid();
            Probes {
                device: device.as_ref().map(|d| d.name.clone()),
                server_pids: Box::new(move || procs::pids_with_cwd(&data)),
                server_alive: Box::new(move || pm.is_some_and(procs::alive)),
            }
        }
        None => {
            let data = data_dir.clone();
            Probes {
                device: device.as_ref().map(|d| d.name.clone()),
                server_pids: Box::new(move || {
                    data.as_deref()
                        .map(procs::pids_with_cwd)
                        .unwrap_or_default()
                }),
                server_alive: Box::new(|| true),
            }
        }
    };
    let cx = Context {
        server_version: info.version.clone(),
        server_major: info.major,
        managed: server.managed.is_some(),
        // SAFETY: geteuid has no preconditions.
        root: unsafe { libc::geteuid() } == 0,
        direct_io: a.server.direct_io,
        os_cache_limit: a.server.os_cache_limit.map(|l| l.0),
        data_bytes,
        shared_buffers_bytes: info.shared_buffers_bytes,
        mem_bytes: doc.host.mem_bytes,
    };
    let m = Measure {
        spec: &spec,
        probes,
        dir,
        doc,
        warnings,
        cx,
        out: &a.out,
        name,
        started,
    };
    let managed = std::cell::RefCell::new(server.managed.take());
    let code = measure(
        &backend,
        m,
        &mut || {
            let mut g = managed.borrow_mut();
            let c = g.as_mut()?;
            if c.is_running() {
                return None;
            }
            let log = iolens_db::server::log_tail(&c.log_path(), 3);
            let _ = c.stop();
            Some(format!(
                "the database server ended during the run (server log: {log})"
            ))
        },
        &|summary| {
            if let Some(c) = managed.borrow().as_ref() {
                if let Some(m) = c.cgroup_memory() {
                    summary.cgroup = Some(CgroupFigures {
                        limit_bytes: cgroup.as_ref().map(|g| g.limit_bytes),
                        memory: CgroupMemory {
                            cache_bytes: m.cache_bytes,
                            shmem_bytes: m.shmem_bytes,
                            anon_bytes: m.anon_bytes,
                            max_usage_bytes: m.max_usage_bytes,
                        },
                    });
                }
            }
        },
    );
    server.managed = managed.into_inner();
    drop(server);
    code
}

/// What a measured run needs besides the backend.
pub(crate) struct Measure<'a> {
    pub spec: &'a WorkloadSpec,
    pub probes: Probes,
    pub dir: ResultDir,
    pub doc: DbResult,
    pub warnings: Vec<String>,
    pub cx: Context,
    pub out: &'a OutputArgs,
    pub name: String,
    pub started: Instant,
}

/// Runs the work loop on any backend, writes the time series, ASH samples,
/// result.json and summary.txt. `check_server` says whether the server died
/// (and cleans it up); `decorate` adds backend-specific summary keys.
pub(crate) fn measure<B: Backend>(
    backend: &B,
    m: Measure,
    check_server: &mut dyn FnMut() -> Option<String>,
    decorate: &dyn Fn(&mut DbSummary),
) -> Result<u8> {
    let Measure {
        spec,
        probes,
        dir,
        mut doc,
        mut warnings,
        cx,
        out,
        name,
        started,
    } = m;
    let spec = spec.clone();
    let total_s = (spec.warmup + spec.runtime).as_secs_f64();
    let progress = Progress::new(out);
    let a_out = out;
    let mut ts = dir.append("timeseries.csv")?;
    writeln!(ts, "{}", TS_HEADER)?;
    let mut ash = dir.append("ash.csv")?;
    writeln!(ash, "t_s,event,sessions")?;

    let ts_err: Arc<std::sync::Mutex<Option<String>>> = Default::default();
    let outcome = iolens_db::run::run(
        backend,
        &spec,
        &probes,
        &iolens_core::interrupt::STOP,
        &mut |row: &SecondRow| {
            if let Err(e) = writeln!(ts, "{}", ts_row(row)).and_then(|_| ts.flush()) {
                ts_err.lock().unwrap().get_or_insert(e.to_string());
            }
            let aas: f64 = row
                .aas
                .iter()
                .filter(|(k, _)| !k.starts_with("bg:"))
                .map(|(_, v)| v)
                .sum();
            progress.line(&format!(
                "[{:>4}/{:.0}s]{} {:.0} exec/s | db reads {:.0}/s {} | device reads {:.0}/s | AAS {:.1}",
                row.sec + 1,
                total_s,
                if row.phase == "warmup" { " warmup" } else { "" },
                row.ops_per_s.iter().sum::<f64>(),
                row.db.physical_reads as f64 / row.interval_s,
                row.db
                    .read_time_ms
                    .filter(|_| row.db.physical_reads > 0)
                    .map(|t| format!("{:.1}us", t * 1e3 / row.db.physical_reads as f64))
                    .unwrap_or_default(),
                row.device.as_ref().map_or(0.0, |d| d.read_ios as f64 / d.interval_s),
                aas
            ));
        },
        &mut |t, waits| {
            for (ev, n) in waits {
                let _ = writeln!(ash, "{t:.1},{ev},{n}");
            }
        },
    );
    progress.clear();
    let outcome = match outcome {
        Ok(o) => o,
        Err(e) => {
            // Nothing was measured (a session could not connect).
            doc.status = Status::Failed;
            doc.error = Some(e.to_string());
            doc.duration_s = started.elapsed().as_secs_f64();
            dir.write_result(&doc)?;
            return db(Err(e));
        }
    };
    let _ = ash.flush();
    // A server that died mid-run is cleaned up (no process left behind).
    let mut error = outcome.error.clone();
    if let Some(e) = check_server() {
        error.get_or_insert(e);
    }
    if let Some(e) = ts_err.lock().unwrap().take() {
        warnings.push(format!(
            "timeseries.csv could not be written completely: {e}"
        ));
    }
    doc.duration_s = started.elapsed().as_secs_f64();
    doc.status = Status::ended(error.is_some(), outcome.interrupted || interrupted());
    doc.error = error.clone();
    let cache = report::cache_verdict(&outcome, &cx);
    if cache.flagged {
        warnings.push(format!("OS page cache: {}", cache.text));
    }
    if let Some(d) = &outcome.device {
        let dbr = outcome.db.physical_reads;
        if dbr > 0 && d.read_ios as f64 > 1.5 * dbr as f64 {
            warnings.push(format!(
                "the device {} saw {} read requests for the database's {dbr} physical reads: other \
                 processes (or readahead) read from it too, and the device figures include them",
                d.device, d.read_ios
            ));
        }
    }
    let rps = outcome.db.physical_reads as f64 / outcome.ops[0].ops.max(1) as f64;
    if outcome.ops[0].ops > 0 && rps > spec.work_unit as f64 * 1.2 {
        warnings.push(format!(
            "each select read {rps:.1} blocks for {} rows: index blocks miss shared_buffers too (a small --cache does that)",
            spec.work_unit
        ));
    }
    if outcome.measured_s < 10.0 && doc.status == Status::Ok {
        warnings.push(format!(
            "short run ({:.1} s measured): rates and percentiles vary; SLOB runs last minutes",
            outcome.measured_s
        ));
    }
    let mut summary = report::summary(&outcome, &spec, &cache);
    decorate(&mut summary);
    doc.summary = Some(summary);
    doc.extra.warnings = Some(warnings.clone());
    dir.write_result(&doc)?;
    let status = serde_json::to_value(doc.status)?;
    let text = report::summary_text(
        &name,
        status.as_str().unwrap_or(""),
        &outcome,
        &spec,
        &cx,
        &cache,
        &warnings,
    );
    dir.write_file("summary.txt", text.as_bytes())?;
    if a_out.json {
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!("{text}");
        println!("result: {}", dir.path().display());
    }
    Ok(doc.status.exit_code() as u8)
}

/// Columns of `timeseries.csv` for kind `db`.
pub const TS_HEADER: &str = "sec,phase,interval_s,select_per_s,update_per_s,scan_per_s,\
select_lat_mean_us,update_lat_mean_us,logical_reads_per_s,physical_reads_per_s,read_lat_us,\
physical_writes_per_s,wal_bytes_per_s,dev_read_iops,dev_write_iops,dev_read_mbps,dev_write_mbps,\
dev_read_await_ms,db_cpu,aas,aas_cpu,aas_data_file_read,aas_other_io,aas_other";

fn ts_row(r: &SecondRow) -> String {
    let dt = r.interval_s.max(1e-9);
    let d = r.device.as_ref();
    let fg = |f: &dyn Fn(&str) -> bool| -> f64 {
        r.aas
            .iter()
            .filter(|(k, _)| !k.starts_with("bg:") && f(k))
            .map(|(_, v)| v)
            .sum()
    };
    let aas = fg(&|_| true);
    let cpu = fg(&|k| k == "CPU");
    let dfr = fg(&|k| k == "IO:DataFileRead");
    let io = fg(&|k| k.starts_with("IO:") && k != "IO:DataFileRead");
    let opt = |v: Option<f64>| v.map(|x| format!("{x:.2}")).unwrap_or_default();
    format!(
        "{},{},{:.3},{:.1},{:.1},{:.1},{:.1},{:.1},{:.1},{:.1},{},{},{},{},{},{},{},{},{},{:.2},{:.2},{:.2},{:.2},{:.2}",
        r.sec,
        r.phase,
        r.interval_s,
        r.ops_per_s[0],
        r.ops_per_s[1],
        r.ops_per_s[2],
        r.lat_mean_us[0],
        r.lat_mean_us[1],
        r.db.logical_reads as f64 / dt,
        r.db.physical_reads as f64 / dt,
        opt(r.db.read_time_ms.filter(|_| r.db.physical_reads > 0).map(|t| t * 1e3 / r.db.physical_reads as f64)),
        opt(r.db.physical_writes.map(|w| w as f64 / dt)),
        opt(r.db.wal_bytes.map(|w| w as f64 / dt)),
        opt(d.map(|d| d.read_ios as f64 / d.interval_s)),
        opt(d.map(|d| d.write_ios as f64 / d.interval_s)),
        opt(d.map(|d| d.read_bytes as f64 / 1e6 / d.interval_s)),
        opt(d.map(|d| d.write_bytes as f64 / 1e6 / d.interval_s)),
        opt(d.map(|d| d.read_await_ms)),
        opt(r.server_cpu),
        aas,
        cpu,
        dfr,
        io,
        aas - cpu - dfr - io
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_never_reach_results() {
        assert_eq!(
            redact("postgres://bob:secret@db:5432/x"),
            "postgres://bob:***@db:5432/x"
        );
        assert_eq!(redact("postgres://bob@db/x"), "postgres://bob@db/x");
        assert_eq!(
            redact("host=/tmp password=secret dbname=x"),
            "host=/tmp password=*** dbname=x"
        );
    }

    #[test]
    fn timeseries_rows_have_the_header_s_columns() {
        let r = SecondRow {
            phase: "run",
            interval_s: 1.0,
            ..Default::default()
        };
        assert_eq!(ts_row(&r).split(',').count(), TS_HEADER.split(',').count());
    }
}
