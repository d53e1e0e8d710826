//! One measured run of the work loop against any [`Backend`].
//!
//! Phases: every session connects and prepares, then all start together
//! (barrier); a warm-up runs uncounted; the sessions pause, publish their
//! counters, and the start snapshot is taken (database counters,
//! `/proc/diskstats`, server CPU and I/O, machine CPU); the measured window
//! runs; the sessions pause and publish again and the end snapshot is taken.
//! Both edges are exact: no session works while a snapshot is taken.
//! Meanwhile the main thread samples waits every 100 ms (ASH) and writes one
//! row per second.

use crate::backend::{Backend, DbStats, Monitor, Session};
use crate::error::DbError;
use crate::procs::{self, ProcUsage};
use crate::workload::{LoopPlan, OpKind, WorkloadSpec};
use iolens_core::LatencyHistogram;
use iolens_probe::{machine_cpu, DiskDelta, DiskStats, MachineCpu};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Barrier, Mutex};
use std::time::{Duration, Instant};

/// Receives every wait sample: seconds since start, `[(event, sessions)]`.
pub type AshSink<'a> = &'a mut dyn FnMut(f64, &[(String, u32)]);

/// How often waits are sampled.
pub const ASH_INTERVAL: Duration = Duration::from_millis(100);

/// What the runner can see of the server from the OS.
pub struct Probes {
    /// The block device under the data directory (a /proc/diskstats name).
    pub device: Option<String>,
    /// The server's processes (empty when they are not visible here).
    pub server_pids: Box<dyn Fn() -> Vec<u32> + Send + Sync>,
    /// Whether the server still runs (a managed server's postmaster).
    pub server_alive: Box<dyn Fn() -> bool + Send + Sync>,
}

impl Probes {
    /// Probes of a database that runs inside this process, on `device`.
    pub fn this_process(device: Option<String>) -> Probes {
        let pid = std::process::id();
        Probes {
            device,
            server_pids: Box::new(move || vec![pid]),
            server_alive: Box::new(|| true),
        }
    }
}

/// Everything counted at one instant.
#[derive(Clone, Debug)]
struct Snapshot {
    at: Instant,
    db: DbStats,
    disk: Option<DiskStats>,
    server: ProcUsage,
    cpu: MachineCpu,
    ops: [u64; 3],
    op_ns: [u64; 3],
}

/// One row of `timeseries.csv`.
#[derive(Clone, Debug, Default)]
pub struct SecondRow {
    /// Seconds since the sessions started (warm-up included).
    pub sec: u64,
    /// `warmup` or `run`.
    pub phase: &'static str,
    pub interval_s: f64,
    /// Operations completed, by kind (select, update, scan), per second.
    pub ops_per_s: [f64; 3],
    /// Their mean latency, µs.
    pub lat_mean_us: [f64; 3],
    pub db: DbStats,
    pub device: Option<DiskDelta>,
    /// Server CPU seconds per second.
    pub server_cpu: Option<f64>,
    /// Average active sessions by event over the second.
    pub aas: BTreeMap<String, f64>,
}

/// One kind of operation over the measured window.
#[derive(Clone, Debug, Default)]
pub struct OpTotals {
    pub ops: u64,
    pub rows: u64,
    pub hist: LatencyHistogram,
}

/// What a run measured.
#[derive(Clone, Debug, Default)]
pub struct RunOutcome {
    /// Length of the measured window, s.
    pub measured_s: f64,
    /// Warm-up actually run, s.
    pub warmup_s: f64,
    /// Select, update, scan.
    pub ops: [OpTotals; 3],
    /// Operations per session and kind over the window.
    pub per_session: Vec<[u64; 3]>,
    /// The database's counters over the window.
    pub db: DbStats,
    /// What the device under the data directory did over the window.
    pub device: Option<DiskDelta>,
    /// The server's processes over the window (None when not visible).
    pub server: Option<ProcUsage>,
    /// Machine CPU busy over the window, %.
    pub machine_busy_pct: f64,
    /// Wait samples over the window: event → session-samples.
    pub waits: BTreeMap<String, u64>,
    /// Number of sampling instants over the window.
    pub ash_samples: u64,
    pub interrupted: bool,
    /// What ended the run early, if anything did.
    pub error: Option<String>,
}

struct Shared {
    /// Ends the current phase (time up, interrupt, failure).
    phase_end: AtomicBool,
    /// Whether the measured window is on.
    measuring: AtomicBool,
    /// A failure: skip all remaining work (barriers are still passed).
    abort: AtomicBool,
    error: Mutex<Option<String>>,
    barrier: Barrier,
    ids: Mutex<Vec<i64>>,
    /// Sessions done with their work loops in the window.
    finished: AtomicUsize,
    live_ops: [AtomicU64; 3],
    live_ns: [AtomicU64; 3],
}

impl Shared {
    fn fail(&self, msg: String) {
        self.error.lock().unwrap().get_or_insert(msg);
        self.abort.store(true, Ordering::SeqCst);
        self.phase_end.store(true, Ordering::SeqCst);
    }
}

type SessionResult = ([OpTotals; 3], [u64; 3]);

fn session_body<S: Session>(
    sess: Option<S>,
    spec: &WorkloadSpec,
    i: u32,
    sh: &Shared,
) -> SessionResult {
    let mut sess = sess;
    let mut totals: [OpTotals; 3] = Default::default();
    let mut counts = [0u64; 3];
    let mut plan = LoopPlan::new(spec, i);
    sh.barrier.wait(); // all connected
    let mut work =
        |s: &mut S, measuring: bool, totals: &mut [OpTotals; 3], counts: &mut [u64; 3]| {
            let mut loops = 0u64;
            while !sh.phase_end.load(Ordering::Relaxed) {
                if measuring && spec.work_loop.is_some_and(|n| loops >= n) {
                    break;
                }
                let op = plan.next_op();
                let t = Instant::now();
                let r = match op.kind {
                    OpKind::Select => s.select(op.schema, op.lo, op.hi),
                    OpKind::Update => s.update(op.schema, op.lo, op.hi),
                    OpKind::Scan => s.scan(op.schema),
                };
                let ns = t.elapsed().as_nanos() as u64;
                match r {
                    Ok(rows) => {
                        let k = op.kind.index();
                        sh.live_ops[k].fetch_add(1, Ordering::Relaxed);
                        sh.live_ns[k].fetch_add(ns, Ordering::Relaxed);
                        if measuring {
                            totals[k].ops += 1;
                            totals[k].rows += rows;
                            totals[k].hist.record(ns);
                            counts[k] += 1;
                        }
                    }
                    Err(e) => {
                        sh.fail(format!("session {}: {e}", i + 1));
                        return;
                    }
                }
                loops += 1;
                if let Some(th) = op.think {
                    let until = Instant::now() + th;
                    while Instant::now() < until && !sh.phase_end.load(Ordering::Relaxed) {
                        std::thread::sleep((until - Instant::now()).min(Duration::from_millis(50)));
                    }
                }
            }
            if measuring {
                sh.finished.fetch_add(1, Ordering::SeqCst);
            }
        };
    let flush = |s: &mut S| {
        if let Err(e) = s.flush_stats() {
            sh.fail(format!("session {}: {e}", i + 1));
        }
    };
    // Warm-up (uncounted), then publish counters for the start snapshot.
    if let Some(s) = sess.as_mut() {
        if !sh.abort.load(Ordering::SeqCst) {
            if !spec.warmup.is_zero() {
                work(s, false, &mut totals, &mut counts);
            }
            flush(s);
        }
    }
    sh.barrier.wait(); // main takes the start snapshot
    sh.barrier.wait(); // go
    if let Some(s) = sess.as_mut() {
        if !sh.abort.load(Ordering::SeqCst) {
            work(s, true, &mut totals, &mut counts);
            flush(s);
        } else {
            sh.finished.fetch_add(1, Ordering::SeqCst);
        }
    }
    sh.barrier.wait(); // main takes the end snapshot
    drop(sess.take());
    (totals, counts)
}

fn snapshot(monitor: &mut dyn Monitor, pids: &[u32], sh: &Shared) -> Result<Snapshot, DbError> {
    let db = monitor.stats()?;
    Ok(Snapshot {
        at: Instant::now(),
        db,
        disk: DiskStats::read().ok(),
        server: procs::usage(pids),
        cpu: machine_cpu(),
        ops: std::array::from_fn(|k| sh.live_ops[k].load(Ordering::Relaxed)),
        op_ns: std::array::from_fn(|k| sh.live_ns[k].load(Ordering::Relaxed)),
    })
}

fn second_row(
    a: &Snapshot,
    b: &Snapshot,
    probes: &Probes,
    sec: u64,
    phase: &'static str,
) -> SecondRow {
    let dt = b.at.duration_since(a.at).as_secs_f64().max(1e-9);
    let mut row = SecondRow {
        sec,
        phase,
        interval_s: dt,
        db: b.db.since(&a.db),
        device: match (&probes.device, &a.disk, &b.disk) {
            (Some(d), Some(x), Some(y)) => y.delta(x, d),
            _ => None,
        },
        server_cpu: (b.server.processes > 0).then(|| b.server.since(&a.server).cpu_s() / dt),
        ..Default::default()
    };
    for k in 0..3 {
        let n = b.ops[k] - a.ops[k];
        row.ops_per_s[k] = n as f64 / dt;
        row.lat_mean_us[k] = if n == 0 {
            0.0
        } else {
            (b.op_ns[k] - a.op_ns[k]) as f64 / n as f64 / 1e3
        };
    }
    row
}

/// Runs the work loop of `spec` against `backend`. `stop` ends it early
/// (interrupt); `on_second` gets one row per second, `on_ash` every wait
/// sample `(seconds since start, [(event, sessions)])`. Errors before the
/// sessions start (connection refused, too many connections) are returned;
/// a failure after that ends the run and is reported in the outcome.
pub fn run<B: Backend>(
    backend: &B,
    spec: &WorkloadSpec,
    probes: &Probes,
    stop: &AtomicBool,
    on_second: &mut dyn FnMut(&SecondRow),
    on_ash: AshSink<'_>,
) -> Result<RunOutcome, DbError> {
    let mut monitor = backend.monitor()?;
    let n = spec.sessions as usize;
    let sh = Shared {
        phase_end: AtomicBool::new(false),
        measuring: AtomicBool::new(false),
        abort: AtomicBool::new(false),
        error: Mutex::new(None),
        barrier: Barrier::new(n + 1),
        ids: Mutex::new(Vec::new()),
        finished: AtomicUsize::new(0),
        live_ops: Default::default(),
        live_ns: Default::default(),
    };
    let connect_error: Mutex<Option<DbError>> = Mutex::new(None);
    let mut out = RunOutcome::default();
    let results: Vec<SessionResult> = std::thread::scope(|sc| {
        let mut handles = Vec::new();
        for i in 0..spec.sessions {
            let sh = &sh;
            let connect_error = &connect_error;
            handles.push(sc.spawn(move || {
                let sess = backend.connect().and_then(|mut s| {
                    s.prepare(spec.schema_of(i))?;
                    if spec.hot_schema_every.is_some() {
                        s.prepare(1)?;
                    }
                    Ok(s)
                });
                let sess = match sess {
                    Ok(s) => {
                        sh.ids.lock().unwrap().push(s.id());
                        Some(s)
                    }
                    Err(e) => {
                        sh.abort.store(true, Ordering::SeqCst);
                        connect_error.lock().unwrap().get_or_insert(e);
                        None
                    }
                };
                session_body(sess, spec, i, sh)
            }));
        }
        self::main_loop(
            &mut *monitor,
            spec,
            probes,
            stop,
            &sh,
            &mut out,
            on_second,
            on_ash,
        );
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_default())
            .collect()
    });
    if let Some(e) = connect_error.into_inner().unwrap() {
        return Err(e);
    }
    for (totals, counts) in results {
        for (k, t) in totals.iter().enumerate() {
            out.ops[k].ops += t.ops;
            out.ops[k].rows += t.rows;
            out.ops[k].hist.merge(&t.hist);
        }
        out.per_session.push(counts);
    }
    out.error = sh.error.into_inner().unwrap();
    Ok(out)
}

#[allow(clippy::too_many_arguments)]
fn main_loop(
    monitor: &mut dyn Monitor,
    spec: &WorkloadSpec,
    probes: &Probes,
    stop: &AtomicBool,
    sh: &Shared,
    out: &mut RunOutcome,
    on_second: &mut dyn FnMut(&SecondRow),
    on_ash: AshSink<'_>,
) {
    sh.barrier.wait(); // all connected (or failed to)
    let t0 = Instant::now();
    let ids = sh.ids.lock().unwrap().clone();
    let mut pids = (probes.server_pids)();
    let fail = |msg: String| sh.fail(msg);
    let aborted = || sh.abort.load(Ordering::SeqCst);

    // Samples until `until`, the end of the phase, or a stop.
    let mut last: Option<Snapshot> = None;
    let mut sec_waits: BTreeMap<String, u64> = BTreeMap::new();
    let mut sec_samples = 0u64;
    let mut next_sec = t0 + Duration::from_secs(1);
    let mut sampling = |phase: &'static str,
                        until: Option<Instant>,
                        monitor: &mut dyn Monitor,
                        out: &mut RunOutcome,
                        last: &mut Option<Snapshot>,
                        pids: &[u32]| {
        let measuring = phase == "run";
        let mut next = Instant::now();
        loop {
            if aborted() || sh.phase_end.load(Ordering::Relaxed) {
                return;
            }
            if stop.load(Ordering::Relaxed) {
                out.interrupted = true;
                return;
            }
            let now = Instant::now();
            if until.is_some_and(|u| now >= u) {
                return;
            }
            if measuring
                && spec.work_loop.is_some()
                && sh.finished.load(Ordering::SeqCst) >= spec.sessions as usize
            {
                return;
            }
            if !(probes.server_alive)() {
                fail("the database server ended during the run".into());
                return;
            }
            match monitor.sample_waits(&ids) {
                Ok(w) => {
                    on_ash(now.duration_since(t0).as_secs_f64(), &w);
                    sec_samples += 1;
                    if measuring {
                        out.ash_samples += 1;
                    }
                    for (ev, c) in w {
                        if measuring {
                            *out.waits.entry(ev.clone()).or_default() += c as u64;
                        }
                        *sec_waits.entry(ev).or_default() += c as u64;
                    }
                }
                Err(e) => {
                    fail(format!("monitor: {e}"));
                    return;
                }
            }
            if now >= next_sec {
                match snapshot(monitor, pids, sh) {
                    Ok(s) => {
                        if let Some(prev) = last.as_ref() {
                            let mut row = second_row(
                                prev,
                                &s,
                                probes,
                                (next_sec - t0).as_secs().saturating_sub(1),
                                phase,
                            );
                            row.aas = sec_waits
                                .iter()
                                .map(|(k, v)| (k.clone(), *v as f64 / sec_samples.max(1) as f64))
                                .collect();
                            on_second(&row);
                        }
                        *last = Some(s);
                    }
                    Err(e) => {
                        fail(format!("monitor: {e}"));
                        return;
                    }
                }
                sec_waits.clear();
                sec_samples = 0;
                next_sec += Duration::from_secs(1);
            }
            next += ASH_INTERVAL;
            let now = Instant::now();
            if next > now {
                std::thread::sleep(next - now);
            } else {
                next = now;
            }
        }
    };

    if !aborted() {
        match snapshot(monitor, &pids, sh) {
            Ok(s) => last = Some(s),
            Err(e) => fail(format!("monitor: {e}")),
        }
    }
    if !aborted() && !spec.warmup.is_zero() {
        sampling(
            "warmup",
            Some(t0 + spec.warmup),
            monitor,
            out,
            &mut last,
            &pids,
        );
    }
    out.warmup_s = t0.elapsed().as_secs_f64();
    sh.phase_end.store(true, Ordering::SeqCst);
    sh.barrier.wait(); // sessions paused and published
    let start = if aborted() || out.interrupted {
        None
    } else {
        pids = (probes.server_pids)();
        match snapshot(monitor, &pids, sh) {
            Ok(s) => Some(s),
            Err(e) => {
                fail(format!("monitor: {e}"));
                None
            }
        }
    };
    if out.interrupted {
        // Interrupted during the warm-up: nothing to measure.
        sh.abort.store(true, Ordering::SeqCst);
    }
    sh.phase_end.store(false, Ordering::SeqCst);
    sh.measuring.store(true, Ordering::SeqCst);
    sh.barrier.wait(); // go
    let w0 = Instant::now();
    if !aborted() {
        let until = (spec.work_loop.is_none()).then(|| w0 + spec.runtime);
        // With --work-loop, --runtime still caps the run when given explicitly.
        let until = until.or_else(|| (!spec.runtime.is_zero()).then(|| w0 + spec.runtime));
        sampling("run", until, monitor, out, &mut last, &pids);
    }
    sh.phase_end.store(true, Ordering::SeqCst);
    sh.barrier.wait(); // sessions paused and published
    out.measured_s = w0.elapsed().as_secs_f64();
    sh.measuring.store(false, Ordering::SeqCst);
    let Some(start) = start else { return };
    let end_pids = {
        let mut p = (probes.server_pids)();
        p.retain(|x| pids.contains(x) || procs::alive(*x));
        p
    };
    let end = match snapshot(monitor, &end_pids, sh) {
        Ok(s) => s,
        Err(e) => {
            fail(format!("monitor: {e}"));
            // The device and the OS still tell what happened.
            Snapshot {
                at: Instant::now(),
                db: start.db.clone(),
                disk: DiskStats::read().ok(),
                server: procs::usage(&end_pids),
                cpu: machine_cpu(),
                ops: start.ops,
                op_ns: start.op_ns,
            }
        }
    };
    out.db = end.db.since(&start.db);
    out.device = match (&probes.device, &start.disk, &end.disk) {
        (Some(d), Some(a), Some(b)) => b.delta(a, d),
        _ => None,
    };
    out.server = (start.server.processes > 0).then(|| end.server.since(&start.server));
    out.machine_busy_pct = end.cpu.busy_pct_since(&start.cpu);
}
