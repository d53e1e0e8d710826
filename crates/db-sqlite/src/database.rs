//! SQLite as an [`iolens_db::Database`]: `db setup` and `db run` with
//! `--db sqlite --path DIR`, with the same options, measurement and result
//! fields as on PostgreSQL. Reads of the schema files go through a
//! direct-I/O VFS, so a miss of SQLite's page cache is a device read
//! (proven by the cache verdict).

use crate::backend::SqliteBackend;
use crate::slob::{self, Recorded, Statements};
use crate::vfs;
use iolens_core::result::db::ServerInfo;
use iolens_core::result::TargetInfo;
use iolens_core::units::human_bytes;
use iolens_db::pagecache::{self, Evicted};
use iolens_db::report::Context;
use iolens_db::run::Probes;
use iolens_db::{
    Capabilities, Check, Database, DbError, Description, Layout, LayoutSpec, Loading, SetupReport,
    WorkloadSpec,
};
use serde_json::json;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Where the schema files live and how much each connection caches.
#[derive(Clone, Debug, Default)]
pub struct SqliteOptions {
    /// Directory of the schema files (as typed; made absolute here).
    pub path: PathBuf,
    /// Page cache of each connection, bytes.
    pub cache_bytes: u64,
}

/// What SQLite can do: it runs inside iolens and always reads with direct I/O.
pub const CAPABILITIES: Capabilities = Capabilities {
    name: "sqlite",
    existing_server: false,
    os_cache_limit: false,
    direct_io_option: false,
};

/// The SLOB schema files under one directory.
pub struct SqliteDatabase {
    dir: PathBuf,
    cache_bytes: u64,
    data_bytes: u64,
    device: Option<String>,
}

impl SqliteDatabase {
    /// The schema files under `opts.path` (nothing is created yet).
    pub fn open(opts: &SqliteOptions) -> Result<SqliteDatabase, DbError> {
        let dir = std::path::absolute(&opts.path)
            .map_err(|e| DbError::usage(format!("{}: {e}", opts.path.display())))?;
        Ok(SqliteDatabase {
            dir,
            cache_bytes: opts.cache_bytes,
            data_bytes: 0,
            device: None,
        })
    }

    /// Creates the directory; refuses a path that is not one.
    fn create_dir(&self) -> Result<(), DbError> {
        let dir = &self.dir;
        if dir.exists() && !dir.is_dir() {
            return Err(DbError::usage(format!(
                "--path {} is not a directory",
                dir.display()
            )));
        }
        std::fs::create_dir_all(dir).map_err(|e| {
            DbError::usage(format!(
                "--path {}: cannot create the directory: {e}; choose another --path",
                dir.display()
            ))
        })
    }

    /// The schemas to load, schema by schema; refuses before touching anything.
    fn to_load(&self, spec: &LayoutSpec) -> Result<Vec<u32>, DbError> {
        let dir = &self.dir;
        let mut todo = Vec::new();
        for n in 1..=spec.schemas {
            match slob::recorded(dir, n) {
                Recorded::Schema(s, x) if s == spec.scale && x == spec.scan_blocks && !spec.reload => {}
                Recorded::Schema(s, _) if !spec.reload => {
                    return Err(DbError::usage(format!(
                        "schema {n} in {} holds a different layout ({s} blocks); add --reload to replace it",
                        dir.display()
                    )))
                }
                Recorded::Missing => todo.push(n),
                _ if slob::is_ours(dir, n) => todo.push(n),
                _ => {
                    return Err(DbError::usage(format!(
                        "{} exists and is not an iolens schema file; choose another --path",
                        slob::schema_path(dir, n).display()
                    )))
                }
            }
        }
        let per_schema = (spec.scale + spec.scan_blocks) * slob::PAGE_SIZE * 115 / 100;
        let need = per_schema * todo.len() as u64;
        if let Some(free) = iolens_probe::free_bytes(dir) {
            if free < need {
                return Err(DbError::usage(format!(
                    "not enough space in {}: loading needs about {}, {} is free; use a smaller --scale",
                    dir.display(),
                    human_bytes(need),
                    human_bytes(free)
                )));
            }
        }
        Ok(todo)
    }

    /// Loads `todo` with `spec.load_parallel` loaders, reporting rows loaded.
    fn load(
        &self,
        spec: &LayoutSpec,
        todo: &[u32],
        Loading { stop, progress }: Loading,
    ) -> Result<(), DbError> {
        let total_rows = spec.scale * todo.len() as u64;
        let done = AtomicU64::new(0);
        let stopped = || stop.load(Ordering::Relaxed);
        let parallel = spec.load_parallel as usize;
        let results: Vec<Result<(), String>> = std::thread::scope(|sc| {
            let hs: Vec<_> = (0..parallel)
                .map(|i| todo.iter().copied().skip(i).step_by(parallel).collect())
                .filter(|v: &Vec<u32>| !v.is_empty())
                .map(|schemas| {
                    let (dir, done) = (&self.dir, &done);
                    sc.spawn(move || {
                        for n in schemas {
                            let add = |k| {
                                done.fetch_add(k, Ordering::Relaxed);
                            };
                            let (scale, scan, seed) = (spec.scale, spec.scan_blocks, spec.seed);
                            slob::load_schema(dir, n, scale, scan, seed, add, stopped)
                                .map_err(|e| e.to_string())?;
                        }
                        Ok(())
                    })
                })
                .collect();
            while hs.iter().any(|h| !h.is_finished()) {
                progress(done.load(Ordering::Relaxed), total_rows);
                std::thread::sleep(Duration::from_millis(50));
            }
            hs.into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err("a loader panicked".into())))
                .collect()
        });
        if stopped() {
            return Ok(());
        }
        match results.into_iter().find_map(Result::err) {
            Some(e) => Err(DbError::Server(format!("loading the SQLite schemas: {e}"))),
            None => Ok(()),
        }
    }
}

/// The layout `setup` left, as text.
fn layout_text(
    dir: &Path,
    spec: &LayoutSpec,
    todo: &[u32],
    load_s: f64,
    layouts: &[slob::LayoutReport],
) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "SQLite {} in {} (direct-I/O reads)",
        rusqlite::version(),
        dir.display()
    );
    if todo.is_empty() {
        let _ = writeln!(
            t,
            "layout present ({} schemas x {} blocks): reused",
            spec.schemas, spec.scale
        );
    } else {
        let _ = writeln!(t, "loaded schemas {todo:?} in {load_s:.1} s");
    }
    let _ = writeln!(
        t,
        "schema        rows  rows/page  key/page corr.  table pages  index pages       file"
    );
    for l in layouts {
        let _ = writeln!(
            t,
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
    t
}

impl Database for SqliteDatabase {
    type Backend = SqliteBackend;
    const CAPABILITIES: Capabilities = CAPABILITIES;

    fn setup(&mut self, spec: &LayoutSpec, loading: Loading) -> Result<SetupReport, DbError> {
        self.create_dir()?;
        let todo = self.to_load(spec)?;
        let t0 = Instant::now();
        self.load(spec, &todo, loading)?;
        if loading.stop.load(Ordering::Relaxed) {
            return Ok(SetupReport::interrupted());
        }
        let load_s = t0.elapsed().as_secs_f64();
        let dir = &self.dir;
        let layouts: Vec<_> = (1..=spec.schemas)
            .map(|n| slob::layout(dir, n))
            .collect::<Result<_, _>>()
            .map_err(|e| DbError::Server(format!("checking the layout: {e}")))?;
        let crowded = layouts.iter().find(|l| l.rows_per_page > 1.01).map(|l| {
            format!(
                "schema {} holds {:.2} rows per page",
                l.schema, l.rows_per_page
            )
        });
        Ok(SetupReport::checked(
            false,
            json!({"db": "sqlite", "path": dir, "loaded": todo, "layout": layouts}),
            layout_text(dir, spec, &todo, load_s, &layouts),
            crowded,
        ))
    }

    fn layout(&mut self) -> Result<Layout, DbError> {
        let dir = &self.dir;
        let mut scale = None;
        let mut available = 0;
        for n in 1.. {
            match slob::recorded(dir, n) {
                Recorded::Schema(s, _) if scale.is_none() || scale == Some(s) => {
                    scale = Some(s);
                    available = n;
                }
                Recorded::Missing => break,
                _ => {
                    return Err(DbError::usage(format!(
                        "schema {n} in {} is incomplete or different: run `iolens db setup --db sqlite --path {}` again",
                        dir.display(),
                        dir.display()
                    )))
                }
            }
        }
        let Some(scale) = scale else {
            return Err(DbError::usage(format!(
                "no iolens SQLite schemas in {}: run `iolens db setup --db sqlite --path {}` first",
                dir.display(),
                dir.display()
            )));
        };
        Ok(Layout {
            schemas: available,
            scale,
        })
    }

    fn check(&mut self, spec: &WorkloadSpec) -> Result<Check, DbError> {
        // The plan must be an index range search, as on PostgreSQL.
        let c = slob::open(&slob::schema_path(&self.dir, 1), 1 << 20, false)
            .map_err(|e| DbError::Server(e.to_string()))?;
        let plan: String = c
            .query_row(
                &format!("EXPLAIN QUERY PLAN {}", Statements::SELECT),
                [1, 2],
                |r| r.get(3),
            )
            .map_err(|e| DbError::Server(format!("EXPLAIN: {e}")))?;
        if !plan.contains("USING INDEX cf_key") {
            return Err(DbError::usage(format!(
                "SQLite does not read the table through the key index: {plan}"
            )));
        }
        self.data_bytes = (1..=spec.schemas)
            .filter_map(|n| std::fs::metadata(slob::schema_path(&self.dir, n)).ok())
            .map(|m| m.len())
            .sum();
        Ok(Check {
            plan: json!({ "select": plan }),
            warnings: Vec::new(),
        })
    }

    fn evict(&mut self) -> Option<Evicted> {
        Some(pagecache::evict(&self.dir))
    }

    fn describe(&mut self, _spec: &WorkloadSpec) -> Result<Description, DbError> {
        let dir = &self.dir;
        self.device = iolens_probe::device_of_path(dir).map(|d| d.name);
        let version = format!("SQLite {}", rusqlite::version());
        Ok(Description {
            target: TargetInfo {
                path: dir.display().to_string(),
                kind: "directory".into(),
                size_bytes: self.data_bytes,
                device: self.device.clone(),
            },
            config: json!({
                "db": "sqlite",
                "managed": true,
                "path": dir,
                "cache_bytes": self.cache_bytes,
                "direct_io": true,
            }),
            server: ServerInfo {
                version: version.clone(),
                vfs: Some(vfs::VFS_NAME.into()),
                settings: [
                    ("page_size", json!(slob::PAGE_SIZE)),
                    ("cache_size_bytes", json!(self.cache_bytes)),
                    ("journal_mode", json!("wal")),
                    ("synchronous", json!("full")),
                    ("mmap_size", json!(0)),
                ]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
                ..Default::default()
            },
            context: Context {
                server_version: version,
                server_major: 0,
                managed: true,
                // SAFETY: geteuid has no preconditions.
                root: unsafe { libc::geteuid() } == 0,
                direct_io: true,
                os_cache_limit: None,
                data_bytes: self.data_bytes,
                shared_buffers_bytes: self.cache_bytes,
                mem_bytes: 0,
            },
        })
    }

    fn backend(&self, spec: &WorkloadSpec) -> Result<SqliteBackend, DbError> {
        SqliteBackend::new(self.dir.clone(), self.cache_bytes, spec.redo_stress)
    }

    fn probes(&self) -> Probes {
        Probes::this_process(self.device.clone())
    }
}
