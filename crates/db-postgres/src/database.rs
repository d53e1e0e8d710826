//! PostgreSQL as an [`iolens_db::Database`]: the server a command works on
//! (a managed cluster started, or an existing one reached), stopped when
//! the command is done unless it is to be kept.

use crate::layout::{self, LayoutReport, LayoutSpec};
use crate::pg::{self, PgBackend, ServerInfo};
use crate::server::{ManagedCluster, ServerSettings, DATABASE};
use iolens_core::result::db::{self as db_result, CgroupFigures, DbSummary};
use iolens_core::result::TargetInfo;
use iolens_core::units::human_bytes;
use iolens_db::cgroup::MemCgroup;
use iolens_db::pagecache::{self, Evicted};
use iolens_db::report::Context;
use iolens_db::run::Probes;
use iolens_db::{
    procs, Capabilities, Check, Database, DbError, Description, Layout, Loading, SetupReport,
    WorkloadOptions, WorkloadSpec,
};
use postgres::Client;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// Which server, and how a managed one is configured.
#[derive(Clone, Debug, Default)]
pub struct PgOptions {
    /// A managed throwaway cluster in this directory (as typed; made absolute here).
    pub pg_dir: Option<PathBuf>,
    /// An existing server: a URL or `key=value` connection string.
    pub dsn: Option<String>,
    /// Directory of the server binaries.
    pub pg_bin: Option<PathBuf>,
    /// shared_buffers of a managed server, bytes.
    pub cache_bytes: u64,
    /// Memory cgroup limit of a managed server, bytes.
    pub os_cache_limit: Option<u64>,
    /// A managed server bypasses the OS page cache (debug_io_direct=data).
    pub direct_io: bool,
    /// Leave a managed server running afterwards.
    pub keep: bool,
}

/// What PostgreSQL can do.
pub const CAPABILITIES: Capabilities = Capabilities {
    name: "postgres",
    existing_server: true,
    os_cache_limit: true,
    direct_io_option: true,
};

/// The server a command works on; a managed one is stopped when this is
/// dropped, unless it is to be kept (and the command was not interrupted).
pub struct PgDatabase {
    opts: PgOptions,
    managed: Option<ManagedCluster>,
    keep: bool,
    config: postgres::Config,
    /// How the server is named in messages and results.
    label: String,
    /// The connection used for checks (none while sessions run).
    admin: Option<Client>,
    info: ServerInfo,
    data_dir: Option<PathBuf>,
    data_bytes: u64,
    device: Option<String>,
    cgroup: Option<MemCgroup>,
}

fn interrupted() -> bool {
    iolens_core::interrupt::requested()
}

/// `path` made absolute against the current directory (it need not exist).
pub fn absolute(path: &Path) -> Result<PathBuf, DbError> {
    std::path::absolute(path).map_err(|e| DbError::usage(format!("{}: {e}", path.display())))
}

/// Checks the options that need no server.
fn check_options(o: &PgOptions) -> Result<(), DbError> {
    if let Some(l) = o.os_cache_limit {
        if o.dsn.is_some() {
            return Err(DbError::usage(
                "--os-cache-limit works on a managed server (--pg-dir) only",
            ));
        }
        if l < (1 << 20) {
            return Err(DbError::usage("--os-cache-limit must be at least 1M"));
        }
    }
    if o.dsn.is_some() && o.direct_io {
        return Err(DbError::usage("--direct-io works on a managed server (--pg-dir) only; set debug_io_direct on your server"));
    }
    Ok(())
}

impl PgDatabase {
    /// Reaches the server of `opts` with room for `max_connections`
    /// sessions; `create` allows creating a managed cluster.
    pub fn open(
        opts: &PgOptions,
        max_connections: u32,
        create: bool,
    ) -> Result<PgDatabase, DbError> {
        check_options(opts)?;
        if let Some(dsn) = &opts.dsn {
            let config = postgres::Config::from_str(dsn).map_err(|e| {
                DbError::usage(format!(
                    "--dsn '{}': {e}; expected postgres://user:password@host:port/dbname or 'host=... port=... dbname=...'",
                    redact(dsn)
                ))
            })?;
            return Ok(PgDatabase::new(opts, None, config, redact(dsn)));
        }
        // Absolute: the server runs as another user, from another directory.
        let dir = absolute(opts.pg_dir.as_deref().ok_or_else(|| {
            DbError::usage("give --pg-dir PATH (a managed cluster iolens creates there) or --dsn postgres://... (an existing server)")
        })?)?;
        if opts.cache_bytes < 128 << 10 {
            return Err(DbError::usage(
                "--cache must be at least 128k (PostgreSQL's minimum shared_buffers)",
            ));
        }
        let mut c = if create {
            ManagedCluster::open_or_create(&dir, opts.pg_bin.as_deref())?
        } else {
            if !ManagedCluster::exists(&dir) {
                return Err(DbError::usage(format!(
                    "--pg-dir {}: no iolens cluster there; create it with `iolens db setup --pg-dir {}`",
                    dir.display(),
                    dir.display()
                )));
            }
            ManagedCluster::open(&dir)?
        };
        let settings = ServerSettings {
            shared_buffers: opts.cache_bytes,
            max_connections: max_connections.max(20),
            direct_io: opts.direct_io,
            os_cache_limit: opts.os_cache_limit,
        };
        if let Err(e) = c.ensure_started(&settings) {
            let _ = c.stop();
            return Err(e);
        }
        let config = c.config(DATABASE)?;
        let label = format!("managed cluster {}", c.dir().display());
        Ok(PgDatabase::new(opts, Some(c), config, label))
    }

    /// The server `db setup` loads `spec` into (a managed cluster is created).
    pub fn for_setup(opts: &PgOptions, spec: &LayoutSpec) -> Result<PgDatabase, DbError> {
        PgDatabase::open(opts, spec.load_parallel + 10, true)
    }

    /// The server `db run` works on, with room for the sessions `w` asks for.
    pub fn for_run(opts: &PgOptions, w: &WorkloadOptions) -> Result<PgDatabase, DbError> {
        PgDatabase::open(opts, w.max_sessions() + 10, false)
    }

    fn new(
        opts: &PgOptions,
        managed: Option<ManagedCluster>,
        config: postgres::Config,
        label: String,
    ) -> PgDatabase {
        PgDatabase {
            opts: opts.clone(),
            keep: managed.is_none() || opts.keep,
            managed,
            config,
            label,
            admin: None,
            info: ServerInfo::default(),
            data_dir: None,
            data_bytes: 0,
            device: None,
            cgroup: None,
        }
    }

    /// How the server is named in messages and results.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// Connects the admin connection and reads the server's facts.
    fn connect(&mut self) -> Result<&mut Client, DbError> {
        let mut c = pg::connect(&self.config, &self.label)?;
        self.info = pg::server_info(&mut c)?;
        self.data_dir = match &self.managed {
            Some(m) => Some(m.data_dir().to_path_buf()),
            None => self.info.data_directory.clone().filter(|p| p.is_dir()),
        };
        Ok(self.admin.insert(c))
    }

    fn admin(&mut self) -> Result<&mut Client, DbError> {
        match self.admin {
            Some(ref mut c) => Ok(c),
            None => self.connect(),
        }
    }

    /// Stops a managed server unless it is to be kept (and is alive, and
    /// the command was not interrupted); forgets it either way.
    fn release(&mut self) {
        self.admin = None;
        if let Some(mut c) = self.managed.take() {
            let dead = c.state.running.is_some() && !c.is_running();
            if !self.keep || interrupted() || dead {
                if let Err(e) = c.stop() {
                    eprintln!("iolens: stopping the server: {e}");
                }
            }
        }
    }

    /// A managed server needs room for every session: restarts it if not.
    fn make_room(&mut self, sessions: u32) -> Result<(), DbError> {
        let Some(c) = &self.managed else {
            return Ok(());
        };
        let want = sessions + 10;
        let have: u32 = self
            .info
            .settings
            .get("max_connections")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        if have < want {
            let mut opts = self.opts.clone();
            opts.pg_dir = Some(c.dir().to_path_buf());
            opts.keep = self.keep;
            self.release();
            let original = std::mem::take(&mut self.opts);
            *self = PgDatabase::open(&opts, want, false)?;
            self.opts = original;
        }
        self.connect()?;
        Ok(())
    }

    fn layout_json(&self, spec: &LayoutSpec, report: &LayoutReport) -> serde_json::Value {
        json!({
            "server": self.label,
            "version": self.info.version,
            "layout": spec,
            "report": report,
        })
    }
}

impl Drop for PgDatabase {
    fn drop(&mut self) {
        self.release();
    }
}

impl Database for PgDatabase {
    type Backend = PgBackend;
    const CAPABILITIES: Capabilities = CAPABILITIES;

    fn setup(&mut self, spec: &LayoutSpec, loading: Loading) -> Result<SetupReport, DbError> {
        self.admin()?;
        let Loading { stop, progress } = loading;
        let report = layout::setup(&self.config, spec, self.data_dir.as_deref(), stop, progress)?;
        let bad: Vec<&str> = report
            .schemas
            .iter()
            .filter(|s| s.max_rows_per_page != 1)
            .map(|s| s.schema.as_str())
            .collect();
        Ok(SetupReport::checked(
            report.interrupted,
            self.layout_json(spec, &report),
            layout_text(&self.label, &self.info, spec, &report),
            (!bad.is_empty())
                .then(|| format!("{} hold more than one row per page", bad.join(", "))),
        ))
    }

    fn layout(&mut self) -> Result<Layout, DbError> {
        let label = self.label.clone();
        let recorded = layout::recorded(self.admin()?)?;
        if recorded.is_empty() {
            return Err(DbError::usage(format!(
                "no iolens layout in the database of {label}: run `iolens db setup` first"
            )));
        }
        if let Some(r) = recorded.iter().find(|r| !r.loaded) {
            return Err(DbError::usage(format!(
                "schema {} of the layout is incomplete (an interrupted setup): run `iolens db setup` again",
                pg::schema_name(r.schema)
            )));
        }
        Ok(Layout {
            schemas: recorded.len() as u32,
            scale: recorded[0].scale,
        })
    }

    fn check(&mut self, spec: &WorkloadSpec) -> Result<Check, DbError> {
        self.make_room(spec.sessions)?;
        let plan = pg::check_plan(self.admin()?, spec.work_unit)?;
        if !plan.plain_index_scan {
            return Err(DbError::usage(format!(
                "the planner does not read the table with a plain index scan, so reads would not be \
                 synchronous single-block reads:\n{}\n{}",
                plan.custom, plan.generic
            )));
        }
        self.data_bytes = data_bytes(self.admin()?, spec.schemas);
        let mut warnings = if self.managed.is_none() {
            settings_warnings(&self.info, self.data_bytes, spec.update_pct)
        } else {
            Vec::new()
        };
        if self.data_dir.is_none() {
            warnings.push(
                "the server's data directory is not visible here: the device under it and the server's CPU \
                 cannot be measured, so the cache verdict and reads per DB CPU second are unavailable"
                    .into(),
            );
        }
        Ok(Check {
            plan: serde_json::to_value(&plan).unwrap_or_default(),
            warnings,
        })
    }

    fn evict(&mut self) -> Option<Evicted> {
        // Start with the data on disk only: checkpoint, then drop the files
        // of this database from the OS page cache.
        let dir = self.data_dir.clone()?;
        let admin = self.admin().ok()?;
        let _ = admin.batch_execute("CHECKPOINT");
        let oid: u32 = admin
            .query_one(
                "SELECT oid FROM pg_database WHERE datname = current_database()",
                &[],
            )
            .ok()?
            .get(0);
        Some(pagecache::evict(&dir.join("base").join(oid.to_string())))
    }

    fn describe(&mut self, _spec: &WorkloadSpec) -> Result<Description, DbError> {
        self.admin = None;
        let info = &self.info;
        let data_dir = &self.data_dir;
        self.device = data_dir
            .as_deref()
            .and_then(iolens_probe::device_of_path)
            .map(|d| d.name);
        self.cgroup = self.managed.as_ref().and_then(|c| c.cgroup().cloned());
        let o = &self.opts;
        Ok(Description {
            target: TargetInfo {
                path: data_dir
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|| self.label.clone()),
                kind: "directory".into(),
                size_bytes: self.data_bytes,
                device: self.device.clone(),
            },
            config: json!({
                "managed": self.managed.is_some(),
                "target": self.label,
                "pg_dir": o.pg_dir,
                "cache_bytes": self.managed.as_ref().map(|_| o.cache_bytes),
                "os_cache_limit_bytes": o.os_cache_limit,
                "cgroup": self.cgroup,
                "direct_io": o.direct_io,
                "keep": o.keep,
            }),
            server: db_result::ServerInfo {
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
            },
            context: Context {
                server_version: info.version.clone(),
                server_major: info.major,
                managed: self.managed.is_some(),
                // SAFETY: geteuid has no preconditions.
                root: unsafe { libc::geteuid() } == 0,
                direct_io: o.direct_io,
                os_cache_limit: o.os_cache_limit,
                data_bytes: self.data_bytes,
                shared_buffers_bytes: info.shared_buffers_bytes,
                mem_bytes: 0,
            },
        })
    }

    fn backend(&self, spec: &WorkloadSpec) -> Result<PgBackend, DbError> {
        Ok(PgBackend::new(
            self.config.clone(),
            self.info.major,
            spec.redo_stress,
            self.managed.is_none(),
        ))
    }

    fn probes(&self) -> Probes {
        let device = self.device.clone();
        match &self.managed {
            Some(c) => {
                let data = c.data_dir().to_path_buf();
                let pm = c.postmaster_pid();
                Probes {
                    device,
                    server_pids: Box::new(move || procs::pids_with_cwd(&data)),
                    server_alive: Box::new(move || pm.is_some_and(procs::alive)),
                }
            }
            None => {
                let data = self.data_dir.clone();
                Probes {
                    device,
                    server_pids: Box::new(move || {
                        data.as_deref()
                            .map(procs::pids_with_cwd)
                            .unwrap_or_default()
                    }),
                    server_alive: Box::new(|| true),
                }
            }
        }
    }

    fn server_ended(&mut self) -> Option<String> {
        let c = self.managed.as_mut()?;
        if c.is_running() {
            return None;
        }
        let log = crate::server::log_tail(&c.log_path(), 3);
        let _ = c.stop();
        Some(format!(
            "the database server ended during the run (server log: {log})"
        ))
    }

    fn decorate(&self, summary: &mut DbSummary) {
        if let Some(c) = self.managed.as_ref() {
            if let Some(memory) = c.cgroup_memory() {
                summary.cgroup = Some(CgroupFigures {
                    limit_bytes: self.cgroup.as_ref().map(|g| g.limit_bytes),
                    memory,
                });
            }
        }
    }
}

/// Stops a managed cluster and removes everything iolens created for it.
pub fn teardown(pg_dir: &Path) -> Result<(), DbError> {
    ManagedCluster::open(&absolute(pg_dir)?)?.destroy()
}

/// A DSN with its password replaced by `***`.
pub fn redact(dsn: &str) -> String {
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

/// The layout `setup` built, as a table.
fn layout_text(label: &str, info: &ServerInfo, spec: &LayoutSpec, r: &LayoutReport) -> String {
    let mut t = String::new();
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
            human_bytes(s.table_bytes),
            human_bytes(s.index_bytes),
            human_bytes(s.scan_table_bytes)
        ));
    }
    t
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
            human_bytes(info.shared_buffers_bytes),
            100.0 * info.shared_buffers_bytes as f64 / data_bytes as f64,
            human_bytes(data_bytes)
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

/// Bytes of the tables and indexes of the first `schemas` schemas.
fn data_bytes(c: &mut Client, schemas: u32) -> u64 {
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
}
