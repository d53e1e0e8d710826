//! `db setup` and `db run` as library calls on any [`Database`]: typed
//! options in, a typed outcome out, progress through an observer. The
//! command line only parses options and prints what comes back.
//!
//! The pipeline of `db run`: options checked → database opened (a managed
//! server started, or an existing one reached) → layout found and the plan
//! proven → OS page cache dropped for the data files → result directory
//! created and written as running ([`Recorder`]) → measured run
//! ([`crate::run`]) with `timeseries.csv` and `ash.csv` appended as it goes →
//! result.json with the cache verdict and summary.txt (AWR-like).

use crate::database::{Database, LayoutSpec, Loading, SetupReport};
use crate::error::DbError;
use crate::report::{self, CacheVerdict, Context};
use crate::run::{Probes, RunOutcome, SecondRow};
use crate::timeseries::{ts_fields, TS_HEADER};
use crate::workload::{Hotspot, RedoStress, Think, WorkloadSpec};
use crate::Backend;
use iolens_core::result::db::{DbResult, DbSections, DbSummary};
use iolens_core::result::Status;
use iolens_core::{Output, Recorder};
use serde_json::json;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The work loop as the user asked for it, before the layout is known.
#[derive(Clone, Debug)]
pub struct WorkloadOptions {
    /// Sessions in all (default: one per schema).
    pub sessions: Option<u32>,
    /// Sessions per schema.
    pub threads_per_schema: Option<u32>,
    /// Use only the first N schemas of the layout.
    pub schemas: Option<u32>,
    pub update_pct: u32,
    pub scan_pct: u32,
    pub work_unit: u64,
    pub update_work_unit: u64,
    pub redo_stress: RedoStress,
    pub hotspot: Option<Hotspot>,
    pub hot_schema_every: Option<u32>,
    pub think: Option<Think>,
    pub runtime: Duration,
    pub work_loop: Option<u64>,
    pub warmup: Duration,
    pub seed: u64,
}

impl WorkloadOptions {
    /// Checks that need no database.
    pub fn check(&self) -> Result<(), DbError> {
        if self.update_pct > 100 || (51..=99).contains(&self.update_pct) {
            return Err(DbError::usage(format!(
                "--update-pct {}: use 0..50 or 100 (51-99 cannot be mixed deterministically, as in SLOB)",
                self.update_pct
            )));
        }
        if self.sessions == Some(0) || self.threads_per_schema == Some(0) {
            return Err(DbError::usage(
                "--sessions and --threads-per-schema must be at least 1",
            ));
        }
        Ok(())
    }

    /// The most sessions these options can ask for (a server needs room for them).
    pub fn max_sessions(&self) -> u32 {
        self.sessions
            .unwrap_or(0)
            .max(self.threads_per_schema.unwrap_or(1) * self.schemas.unwrap_or(1))
    }

    /// The work loop's plan for a layout of `available` schemas of `scale` blocks.
    pub fn resolve(&self, available: u32, scale: u64) -> Result<WorkloadSpec, DbError> {
        let schemas = self.schemas.unwrap_or(available);
        if schemas == 0 || schemas > available {
            return Err(DbError::usage(format!(
                "--schemas {schemas}: the layout has {available} schemas"
            )));
        }
        let sessions = match (self.sessions, self.threads_per_schema) {
            (Some(n), _) => n,
            (None, Some(t)) => t * schemas,
            (None, None) => schemas,
        };
        let spec = WorkloadSpec {
            sessions,
            schemas,
            scale,
            update_pct: self.update_pct,
            scan_pct: self.scan_pct,
            work_unit: self.work_unit,
            update_work_unit: self.update_work_unit,
            redo_stress: self.redo_stress,
            hotspot: self.hotspot,
            hot_schema_every: self.hot_schema_every,
            think: self.think,
            runtime: self.runtime,
            work_loop: self.work_loop,
            warmup: self.warmup,
            seed: self.seed,
        };
        spec.validate().map_err(DbError::Usage)?;
        Ok(spec)
    }
}

/// Everything `db run` needs besides the database.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub workload: WorkloadOptions,
    /// Drop the data files from the OS page cache first.
    pub evict: bool,
    /// The run's name and result directory.
    pub out: Output,
}

/// The recorder of a `db run` result directory.
type DbRecorder = Recorder<Option<DbSummary>, DbSections>;

/// Hears how a run goes.
pub trait RunObserver {
    /// One second of the run ended (warm-up included); the run lasts `total_s`.
    fn second(&mut self, _row: &SecondRow, _total_s: f64) {}
    /// The work loop ended; the report is written next.
    fn ended(&mut self) {}
}

/// An observer that ignores everything.
impl RunObserver for () {}

/// What `db run` produced.
#[derive(Debug)]
pub struct RunReport {
    /// result.json as written.
    pub doc: DbResult,
    /// summary.txt.
    pub text: String,
    /// The result directory.
    pub dir: PathBuf,
}

impl RunReport {
    /// The exit code of the run's status.
    pub fn exit_code(&self) -> i32 {
        self.doc.status.exit_code()
    }
}

/// `db setup`: checks `spec`, opens the database with `open` and loads the layout.
pub fn setup<D: Database>(
    open: impl FnOnce() -> Result<D, DbError>,
    spec: &LayoutSpec,
    stop: &AtomicBool,
    progress: &(dyn Fn(u64, u64) + Sync),
) -> Result<SetupReport, DbError> {
    spec.validate()?;
    let mut db = open()?;
    db.setup(spec, Loading { stop, progress })
}

/// `db run`: checks the options, opens the database with `open`, proves
/// the plan, measures, and writes the result directory. An error before
/// the sessions start is returned (with the result written as failed when
/// its directory exists); a failure during the run is the report's status.
pub fn run<D: Database>(
    open: impl FnOnce(&WorkloadOptions) -> Result<D, DbError>,
    opts: &RunOptions,
    stop: &AtomicBool,
    observer: &mut dyn RunObserver,
) -> Result<RunReport, DbError> {
    let started = Instant::now();
    opts.workload.check()?;
    let mut db = open(&opts.workload)?;
    let layout = db.layout()?;
    let spec = opts.workload.resolve(layout.schemas, layout.scale)?;
    let check = db.check(&spec)?;
    let evicted = if opts.evict { db.evict() } else { None };
    let described = db.describe(&spec)?;
    let mut doc = DbResult::new("db", &opts.out.name);
    doc.targets = vec![described.target.clone()];
    doc.config = json!({
        "workload": spec,
        "server": described.config,
        "evict_os_cache": opts.evict,
        "evicted_bytes": evicted.map(|e| e.bytes),
        "evicted_files": evicted.map(|e| e.files),
    });
    doc.extra.server = Some(described.server);
    doc.extra.plan = Some(check.plan);
    let mut cx = described.context;
    cx.mem_bytes = doc.host.mem_bytes;
    let rec = Recorder::start(opts.out.create()?, doc, started)?;
    let backend = db.backend(&spec)?;
    let probes = db.probes();
    let m = Measure {
        spec,
        probes,
        rec,
        warnings: check.warnings,
        cx,
        name: opts.out.name.clone(),
    };
    measure(&mut db, &backend, m, stop, observer)
}

/// What a measured run needs besides the database.
struct Measure {
    spec: WorkloadSpec,
    probes: Probes,
    rec: DbRecorder,
    warnings: Vec<String>,
    cx: Context,
    name: String,
}

/// Runs the work loop, writes the time series, ASH samples, result.json
/// and summary.txt.
fn measure<D: Database>(
    db: &mut D,
    backend: &D::Backend,
    m: Measure,
    stop: &AtomicBool,
    observer: &mut dyn RunObserver,
) -> Result<RunReport, DbError> {
    let Measure {
        spec,
        probes,
        mut rec,
        mut warnings,
        cx,
        name,
    } = m;
    let outcome = work(backend, &spec, &probes, &rec, stop, observer);
    observer.ended();
    let (outcome, ts_error) = match outcome {
        Ok(o) => o,
        Err(e) => {
            // Nothing was measured (a session could not connect): the
            // recorder, dropped, writes the result as failed with this error.
            rec.doc.error = Some(e.to_string());
            return Err(e);
        }
    };
    // A server that died mid-run is cleaned up (no process left behind).
    let mut error = outcome.error.clone();
    if let Some(e) = db.server_ended() {
        error.get_or_insert(e);
    }
    if let Some(e) = ts_error {
        warnings.push(format!(
            "timeseries.csv could not be written completely: {e}"
        ));
    }
    let interrupted = outcome.interrupted || stop.load(Ordering::SeqCst);
    let status = Status::ended(error.is_some(), interrupted);
    let cache = report::cache_verdict(&outcome, &cx);
    warnings.extend(outcome_warnings(&outcome, &spec, &cache, status));
    let mut summary = report::summary(&outcome, &spec, &cache);
    db.decorate(&mut summary);
    rec.doc.summary = Some(summary);
    rec.doc.extra.warnings = Some(warnings.clone());
    let status = serde_json::to_value(status).unwrap_or_default();
    let text = report::summary_text(
        &name,
        status.as_str().unwrap_or(""),
        &outcome,
        &spec,
        &cx,
        &cache,
        &warnings,
    );
    rec.finish(error, interrupted, &text)?;
    Ok(RunReport {
        doc: rec.doc.clone(),
        text,
        dir: rec.path().to_path_buf(),
    })
}

/// The work loop with `timeseries.csv` and `ash.csv` written as it goes;
/// also says why the time series is incomplete, if it is.
fn work<B: Backend>(
    backend: &B,
    spec: &WorkloadSpec,
    probes: &Probes,
    rec: &DbRecorder,
    stop: &AtomicBool,
    observer: &mut dyn RunObserver,
) -> Result<(RunOutcome, Option<String>), DbError> {
    let total_s = (spec.warmup + spec.runtime).as_secs_f64();
    let header: Vec<&str> = TS_HEADER.split(',').collect();
    let mut ts = rec.series("timeseries.csv", &header)?;
    let mut ash = rec.series("ash.csv", &["t_s", "event", "sessions"])?;
    let ts_err: Mutex<Option<String>> = Mutex::new(None);
    let outcome = crate::run::run(
        backend,
        spec,
        probes,
        stop,
        &mut |row: &SecondRow| {
            if let Err(e) = ts.row(ts_fields(row)) {
                ts_err.lock().unwrap().get_or_insert(e.to_string());
            }
            observer.second(row, total_s);
        },
        &mut |t, waits| {
            for (ev, n) in waits {
                let _ = ash.row([format!("{t:.1}"), ev.to_string(), n.to_string()]);
            }
        },
    )?;
    Ok((outcome, ts_err.into_inner().unwrap()))
}

/// Advice drawn from the figures: page cache, other readers of the device,
/// index misses, a short run.
fn outcome_warnings(
    outcome: &RunOutcome,
    spec: &WorkloadSpec,
    cache: &CacheVerdict,
    status: Status,
) -> Vec<String> {
    let mut warnings = Vec::new();
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
    if outcome.measured_s < 10.0 && status == Status::Ok {
        warnings.push(format!(
            "short run ({:.1} s measured): rates and percentiles vary; SLOB runs last minutes",
            outcome.measured_s
        ));
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::{DbStats, Monitor, Session};
    use crate::database::{Capabilities, Check, Description, Layout};
    use crate::pagecache::Evicted;
    use std::sync::atomic::AtomicU64;
    use std::sync::Arc;

    /// A database that only counts: the smallest implementation of the trait.
    struct Counting {
        reads: Arc<AtomicU64>,
    }

    struct CountingSession(Arc<AtomicU64>);

    impl Session for CountingSession {
        fn id(&self) -> i64 {
            1
        }
        fn prepare(&mut self, _: u32) -> Result<(), DbError> {
            Ok(())
        }
        fn select(&mut self, _: u32, lo: u64, hi: u64) -> Result<u64, DbError> {
            self.0.fetch_add(hi - lo + 1, Ordering::Relaxed);
            Ok(hi - lo + 1)
        }
        fn update(&mut self, _: u32, lo: u64, hi: u64) -> Result<u64, DbError> {
            Ok(hi - lo + 1)
        }
        fn scan(&mut self, _: u32) -> Result<u64, DbError> {
            Ok(0)
        }
        fn flush_stats(&mut self) -> Result<(), DbError> {
            Ok(())
        }
    }

    struct CountingMonitor(Arc<AtomicU64>);

    impl Monitor for CountingMonitor {
        fn stats(&mut self) -> Result<DbStats, DbError> {
            let n = self.0.load(Ordering::Relaxed);
            Ok(DbStats {
                logical_reads: n,
                physical_reads: n,
                ..Default::default()
            })
        }
        fn sample_waits(&mut self, s: &[i64]) -> Result<Vec<(String, u32)>, DbError> {
            Ok(vec![("CPU".into(), s.len() as u32)])
        }
    }

    impl Backend for Counting {
        type Session = CountingSession;
        fn connect(&self) -> Result<CountingSession, DbError> {
            Ok(CountingSession(self.reads.clone()))
        }
        fn monitor(&self) -> Result<Box<dyn Monitor>, DbError> {
            Ok(Box::new(CountingMonitor(self.reads.clone())))
        }
    }

    impl Database for Counting {
        type Backend = Counting;
        const CAPABILITIES: Capabilities = Capabilities {
            name: "counting",
            existing_server: false,
            os_cache_limit: false,
            direct_io_option: false,
        };
        fn setup(&mut self, _: &LayoutSpec, _: Loading) -> Result<SetupReport, DbError> {
            unimplemented!()
        }
        fn layout(&mut self) -> Result<Layout, DbError> {
            Ok(Layout {
                schemas: 2,
                scale: 1000,
            })
        }
        fn check(&mut self, _: &WorkloadSpec) -> Result<Check, DbError> {
            Ok(Check::default())
        }
        fn evict(&mut self) -> Option<Evicted> {
            None
        }
        fn describe(&mut self, _: &WorkloadSpec) -> Result<Description, DbError> {
            Ok(Description::default())
        }
        fn backend(&self, _: &WorkloadSpec) -> Result<Counting, DbError> {
            Ok(Counting {
                reads: self.reads.clone(),
            })
        }
        fn probes(&self) -> Probes {
            Probes::this_process(None)
        }
    }

    fn options(dir: &std::path::Path) -> RunOptions {
        RunOptions {
            workload: WorkloadOptions {
                sessions: None,
                threads_per_schema: Some(2),
                schemas: None,
                update_pct: 0,
                scan_pct: 0,
                work_unit: 8,
                update_work_unit: 8,
                redo_stress: RedoStress::Lite,
                hotspot: None,
                hot_schema_every: None,
                think: None,
                runtime: Duration::from_secs(10),
                work_loop: Some(50),
                warmup: Duration::ZERO,
                seed: 1,
            },
            evict: false,
            out: Output {
                name: "t".into(),
                dir: Some(dir.join("r")),
            },
        }
    }

    #[test]
    fn any_database_runs_through_the_library_entry_point() {
        let d = tempfile::tempdir().unwrap();
        let open = |_: &WorkloadOptions| {
            Ok(Counting {
                reads: Arc::default(),
            })
        };
        let stop = AtomicBool::new(false);
        let r = run(open, &options(d.path()), &stop, &mut ()).unwrap();
        assert_eq!(r.exit_code(), 0, "{}", r.text);
        assert_eq!(r.doc.status, Status::Ok);
        let summary = r
            .doc
            .summary
            .as_ref()
            .expect("a finished run has a summary");
        assert_eq!(summary.sessions, 4);
        assert_eq!(summary.ops.select.ops, 200);
        assert_eq!(summary.db.physical_reads, 200 * 8);
        for f in ["result.json", "summary.txt", "timeseries.csv", "ash.csv"] {
            assert!(r.dir.join(f).is_file(), "{f}");
        }
    }

    #[test]
    fn workload_options_are_checked_against_the_layout() {
        let d = tempfile::tempdir().unwrap();
        let mut o = options(d.path()).workload;
        assert_eq!(o.resolve(3, 100).unwrap().sessions, 6);
        assert_eq!(o.max_sessions(), 2);
        o.schemas = Some(4);
        assert!(o.resolve(3, 100).unwrap_err().is_usage());
        o.update_pct = 60;
        assert!(o.check().unwrap_err().to_string().contains("51-99"));
    }
}
