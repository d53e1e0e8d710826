//! The database part: the SLOB layout loaded once under the assessed
//! directory, then one `db run` per point of the plan, each written to
//! `db-s<sessions>-u<update %>/`; a managed cluster is torn down at the end.

use crate::budget::{self, PointTime};
use crate::options::Backend;
use crate::raw::{exit_code, message};
use crate::{interrupted, Assessment};
use iolens_core::interrupt::STOP;
use iolens_core::result::assess::DbPoint;
use iolens_core::result::db::DbResult;
use iolens_core::Output;
use iolens_core::Status;
use iolens_db::command::{self, RunOptions, RunReport, WorkloadOptions};
use iolens_db::workload::RedoStress;
use iolens_db::{DbError, LayoutSpec, SetupReport};
use iolens_db_postgres::{PgDatabase, PgOptions};
use iolens_db_sqlite::{SqliteDatabase, SqliteOptions};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The database's files (a cluster or the schema files) under `work`, and
/// how the server is configured.
struct Server {
    backend: Backend,
    data: PathBuf,
    /// Memory cgroup limit of a managed server during the runs.
    os_cache_limit: Option<u64>,
}

impl Server {
    fn new(backend: Backend, work: &Path) -> Server {
        // Loading runs without a memory limit (VACUUM needs memory); the runs
        // put the server in a memory cgroup that leaves it a small OS page
        // cache (root, cgroup v1 or v2), so that its reads reach the storage.
        // SAFETY: geteuid has no preconditions.
        let root = unsafe { libc::geteuid() } == 0;
        let cgroups = Path::new("/sys/fs/cgroup/memory").is_dir()
            || Path::new("/sys/fs/cgroup/cgroup.controllers").exists();
        let limited = backend == Backend::Postgres && root && cgroups;
        Server {
            backend,
            data: work.join("db"),
            os_cache_limit: limited.then_some(4 << 20),
        }
    }

    /// The managed cluster, kept running between the commands.
    fn postgres(&self, os_cache_limit: Option<u64>) -> PgOptions {
        PgOptions {
            pg_dir: Some(self.data.clone()),
            cache_bytes: 16 << 20,
            os_cache_limit,
            keep: true,
            ..PgOptions::default()
        }
    }

    fn sqlite(&self) -> SqliteOptions {
        SqliteOptions {
            path: self.data.clone(),
            cache_bytes: 1 << 20,
        }
    }

    /// Blocks per schema. PostgreSQL reads through the OS page cache: its
    /// data set must be much larger than the cache the memory cgroup leaves it.
    fn scale(&self) -> u64 {
        match self.backend {
            Backend::Postgres => 16384,
            Backend::Sqlite => 4096,
        }
    }

    /// Time kept after the last point (teardown, summary).
    fn reserve(&self) -> Duration {
        Duration::from_secs_f64(match self.backend {
            Backend::Postgres => 3.0,
            Backend::Sqlite => 1.0,
        })
    }

    fn setup(&self, spec: &LayoutSpec) -> Result<SetupReport, DbError> {
        let none = |_: u64, _: u64| {};
        match self.backend {
            Backend::Postgres => {
                let o = self.postgres(None);
                command::setup(|| PgDatabase::for_setup(&o, spec), spec, &STOP, &none)
            }
            Backend::Sqlite => {
                let o = self.sqlite();
                command::setup(|| SqliteDatabase::open(&o), spec, &STOP, &none)
            }
        }
    }

    fn run(&self, opts: &RunOptions) -> Result<RunReport, DbError> {
        match self.backend {
            Backend::Postgres => {
                let o = self.postgres(self.os_cache_limit);
                command::run(|w| PgDatabase::for_run(&o, w), opts, &STOP, &mut ())
            }
            Backend::Sqlite => {
                let o = self.sqlite();
                command::run(|_| SqliteDatabase::open(&o), opts, &STOP, &mut ())
            }
        }
    }
}

/// Runs the database part; the points that ran.
pub(crate) fn run(a: &mut Assessment<'_>) -> Vec<DbPoint> {
    let server = Server::new(a.backend, &a.work);
    a.say(&format!(
        "database: {} setup, 2 schemas × {} blocks",
        a.backend.as_str(),
        server.scale()
    ));
    let points = if setup(a, &server) {
        run_points(a, &server)
    } else {
        Vec::new()
    };
    if a.backend == Backend::Postgres && !a.opts.keep {
        if let Err(e) = iolens_db_postgres::database::teardown(&server.data) {
            a.error(&message(&e));
        }
    }
    points
}

/// Loads the layout; whether it is there to run on.
fn setup(a: &mut Assessment<'_>, server: &Server) -> bool {
    let spec = LayoutSpec {
        schemas: 2,
        scale: server.scale(),
        scan_blocks: 64,
        load_parallel: 2,
        reload: false,
        seed: 0x5107,
    };
    let code = match server.setup(&spec) {
        Ok(r) if r.interrupted => {
            a.error("setup interrupted; the next `iolens db setup` reloads the incomplete schemas");
            130
        }
        Ok(SetupReport {
            failure: Some(f), ..
        }) => {
            a.error(&f);
            1
        }
        Ok(_) => 0,
        Err(e) => {
            a.error(&message(&e));
            exit_code(&e)
        }
    };
    if code != 0 {
        a.warnings.push(format!(
            "db setup exited with code {code}: the database part was skipped"
        ));
    }
    code == 0
}

/// The points of the plan, each given its share of the time left.
fn run_points(a: &mut Assessment<'_>, server: &Server) -> Vec<DbPoint> {
    let plan = budget::db_plan(&a.opts.sessions);
    let mut points = Vec::new();
    for (i, &(n, u)) in plan.iter().enumerate() {
        if interrupted() {
            break;
        }
        let Some(time) = budget::point_time(a.clock.left(), server.reserve(), plan.len() - i)
        else {
            a.warnings.push(
                "time ran out before every database point ran: use a longer --duration".into(),
            );
            break;
        };
        let dir = a.out.join(format!("db-s{n}-u{u}"));
        a.say(&format!(
            "database: {n} session(s), {u} % updates, {:.0}s",
            time.run_s
        ));
        points.extend(run_point(a, server, n, u, time, &dir));
    }
    points
}

/// One `db run` of `sessions` sessions with `update_pct` % updates into `dir`.
fn run_point(
    a: &mut Assessment<'_>,
    server: &Server,
    sessions: u32,
    update_pct: u32,
    time: PointTime,
    dir: &Path,
) -> Option<DbPoint> {
    let opts = RunOptions {
        workload: workload(sessions, update_pct, time),
        evict: true,
        out: Output {
            name: "db".into(),
            dir: Some(dir.to_path_buf()),
        },
    };
    let (doc, code) = match server.run(&opts) {
        Ok(r) => {
            let code = r.exit_code();
            (Some(r.doc), code)
        }
        Err(e) => {
            a.error(&message(&e));
            (None, exit_code(&e))
        }
    };
    if code != 0 && !interrupted() {
        a.warnings.push(format!(
            "db run ({sessions} sessions, {update_pct} % updates) exited with code {code}"
        ));
    }
    let mut p = match doc {
        Some(doc) => point(&doc),
        // A run that failed after its directory was made left it marked failed.
        None if dir.join("result.json").exists() => DbPoint {
            status: Some(Status::Failed),
            ..DbPoint::default()
        },
        None => return None,
    };
    p.sessions = sessions;
    p.update_pct = update_pct;
    p.dir = dir.file_name().map(|x| x.to_string_lossy().into_owned());
    Some(p)
}

/// SLOB's work loop as `db run` does it by default, with these sessions,
/// updates and times.
fn workload(sessions: u32, update_pct: u32, time: PointTime) -> WorkloadOptions {
    WorkloadOptions {
        sessions: Some(sessions),
        threads_per_schema: None,
        schemas: None,
        update_pct,
        scan_pct: 0,
        work_unit: 64,
        update_work_unit: 8,
        redo_stress: RedoStress::Lite,
        hotspot: None,
        hot_schema_every: None,
        think: None,
        runtime: time.runtime,
        work_loop: None,
        warmup: time.warmup,
        seed: 0x10_1E45,
    }
}

/// The figures of one run (its place in the plan is set by the caller).
fn point(r: &DbResult) -> DbPoint {
    let s = r.summary.as_ref();
    let d = s.map(|s| &s.db);
    DbPoint {
        status: Some(r.status),
        physical_read_iops: d.map(|d| d.physical_read_iops),
        physical_write_iops: d.and_then(|d| d.physical_write_iops),
        read_lat_us: d.and_then(|d| d.read_lat_us),
        reads_per_db_cpu_s: d.and_then(|d| d.reads_per_db_cpu_s),
        tps: d.map(|d| d.tps),
        device_read_iops: s.and_then(|s| s.os.as_ref()).map(|o| o.read_iops),
        os_cache_hit_pct: s.and_then(|s| s.os_cache_hit_pct),
        ..DbPoint::default()
    }
}
