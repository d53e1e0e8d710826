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
    mut sess: Option<S>,
    spec: &WorkloadSpec,
    i: u32,
    sh: &Shared,
) -> SessionResult {
    let mut work = SessionWork {
        spec,
        i,
        sh,
        plan: LoopPlan::new(spec, i),
        totals: Default::default(),
        counts: [0; 3],
    };
    sh.barrier.wait(); // all connected
                       // Warm-up (uncounted), then publish counters for the start snapshot.
    if let Some(s) = sess.as_mut() {
        if !sh.abort.load(Ordering::SeqCst) {
            if !spec.warmup.is_zero() {
                work.phase(s, false);
            }
            work.flush(s);
        }
    }
    sh.barrier.wait(); // main takes the start snapshot
    sh.barrier.wait(); // go
    if let Some(s) = sess.as_mut() {
        if !sh.abort.load(Ordering::SeqCst) {
            work.phase(s, true);
            work.flush(s);
        } else {
            sh.finished.fetch_add(1, Ordering::SeqCst);
        }
    }
    sh.barrier.wait(); // main takes the end snapshot
    drop(sess.take());
    (work.totals, work.counts)
}

/// The work loops of session `i` and what they measured.
struct SessionWork<'a> {
    spec: &'a WorkloadSpec,
    i: u32,
    sh: &'a Shared,
    plan: LoopPlan,
    totals: [OpTotals; 3],
    counts: [u64; 3],
}

impl SessionWork<'_> {
    /// Work loops until the phase ends (or, measuring, the loops asked for
    /// are done); counted only when `measuring`.
    fn phase<S: Session>(&mut self, s: &mut S, measuring: bool) {
        let sh = self.sh;
        let mut loops = 0u64;
        while !sh.phase_end.load(Ordering::Relaxed) {
            if measuring && self.spec.work_loop.is_some_and(|n| loops >= n) {
                break;
            }
            let op = self.plan.next_op();
            let t = Instant::now();
            let r = match op.kind {
                OpKind::Select => s.select(op.schema, op.lo, op.hi),
                OpKind::Update => s.update(op.schema, op.lo, op.hi),
                OpKind::Scan => s.scan(op.schema),
            };
            let ns = t.elapsed().as_nanos() as u64;
            match r {
                Ok(rows) => self.record(op.kind.index(), ns, rows, measuring),
                Err(e) => {
                    sh.fail(format!("session {}: {e}", self.i + 1));
                    return;
                }
            }
            loops += 1;
            if let Some(th) = op.think {
                self.think(th);
            }
        }
        if measuring {
            sh.finished.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// One operation of kind `k` that took `ns` and touched `rows`: live
    /// counters always, the totals when `measuring`.
    fn record(&mut self, k: usize, ns: u64, rows: u64, measuring: bool) {
        self.sh.live_ops[k].fetch_add(1, Ordering::Relaxed);
        self.sh.live_ns[k].fetch_add(ns, Ordering::Relaxed);
        if measuring {
            let t = &mut self.totals[k];
            t.ops += 1;
            t.rows += rows;
            t.hist.record(ns);
            self.counts[k] += 1;
        }
    }

    /// Waits `th` between loops, cut short when the phase ends.
    fn think(&self, th: Duration) {
        let until = Instant::now() + th;
        while Instant::now() < until && !self.sh.phase_end.load(Ordering::Relaxed) {
            std::thread::sleep((until - Instant::now()).min(Duration::from_millis(50)));
        }
    }

    /// Publishes the session's counters to the database's statistics.
    fn flush<S: Session>(&self, s: &mut S) {
        if let Err(e) = s.flush_stats() {
            self.sh.fail(format!("session {}: {e}", self.i + 1));
        }
    }
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

/// The main thread's side of a run: samples waits every [`ASH_INTERVAL`],
/// takes a snapshot every second, and the snapshots at the window's edges.
struct Sampler<'a, 'f> {
    monitor: &'a mut dyn Monitor,
    spec: &'a WorkloadSpec,
    probes: &'a Probes,
    stop: &'a AtomicBool,
    sh: &'a Shared,
    on_second: &'a mut dyn FnMut(&SecondRow),
    on_ash: AshSink<'f>,
    /// When the sessions started.
    t0: Instant,
    /// The sessions' identities in wait samples.
    ids: Vec<i64>,
    /// The server's processes.
    pids: Vec<u32>,
    /// The last per-second snapshot.
    last: Option<Snapshot>,
    /// Wait samples of the current second.
    sec_waits: BTreeMap<String, u64>,
    sec_samples: u64,
    next_sec: Instant,
}

impl Sampler<'_, '_> {
    fn fail(&self, msg: String) {
        self.sh.fail(msg);
    }

    fn aborted(&self) -> bool {
        self.sh.abort.load(Ordering::SeqCst)
    }

    fn snapshot(&mut self, pids: &[u32]) -> Option<Snapshot> {
        match snapshot(self.monitor, pids, self.sh) {
            Ok(s) => Some(s),
            Err(e) => {
                self.fail(format!("monitor: {e}"));
                None
            }
        }
    }

    /// Whether the phase is over: failure, stop, time up, all loops done,
    /// or the server gone.
    fn phase_over(&self, measuring: bool, until: Option<Instant>, out: &mut RunOutcome) -> bool {
        if self.aborted() || self.sh.phase_end.load(Ordering::Relaxed) {
            return true;
        }
        if self.stop.load(Ordering::Relaxed) {
            out.interrupted = true;
            return true;
        }
        if until.is_some_and(|u| Instant::now() >= u) {
            return true;
        }
        if measuring
            && self.spec.work_loop.is_some()
            && self.sh.finished.load(Ordering::SeqCst) >= self.spec.sessions as usize
        {
            return true;
        }
        if !(self.probes.server_alive)() {
            self.fail("the database server ended during the run".into());
            return true;
        }
        false
    }

    /// One wait sample; false when the monitor failed.
    fn sample_waits(&mut self, measuring: bool, out: &mut RunOutcome) -> bool {
        let now = Instant::now();
        match self.monitor.sample_waits(&self.ids) {
            Ok(w) => {
                (self.on_ash)(now.duration_since(self.t0).as_secs_f64(), &w);
                self.sec_samples += 1;
                if measuring {
                    out.ash_samples += 1;
                }
                for (ev, c) in w {
                    if measuring {
                        *out.waits.entry(ev.clone()).or_default() += c as u64;
                    }
                    *self.sec_waits.entry(ev).or_default() += c as u64;
                }
                true
            }
            Err(e) => {
                self.fail(format!("monitor: {e}"));
                false
            }
        }
    }

    /// The row of the second that just ended; false when the monitor failed.
    fn end_second(&mut self, phase: &'static str) -> bool {
        let pids = self.pids.clone();
        let Some(s) = self.snapshot(&pids) else {
            return false;
        };
        if let Some(prev) = self.last.as_ref() {
            let sec = (self.next_sec - self.t0).as_secs().saturating_sub(1);
            let mut row = second_row(prev, &s, self.probes, sec, phase);
            let n = self.sec_samples.max(1) as f64;
            row.aas = self
                .sec_waits
                .iter()
                .map(|(k, v)| (k.clone(), *v as f64 / n))
                .collect();
            (self.on_second)(&row);
        }
        self.last = Some(s);
        self.sec_waits.clear();
        self.sec_samples = 0;
        self.next_sec += Duration::from_secs(1);
        true
    }

    /// Samples until `until`, the end of the phase, or a stop.
    fn sample(&mut self, phase: &'static str, until: Option<Instant>, out: &mut RunOutcome) {
        let measuring = phase == "run";
        let mut next = Instant::now();
        loop {
            if self.phase_over(measuring, until, out) || !self.sample_waits(measuring, out) {
                return;
            }
            if Instant::now() >= self.next_sec && !self.end_second(phase) {
                return;
            }
            next += ASH_INTERVAL;
            let now = Instant::now();
            if next > now {
                std::thread::sleep(next - now);
            } else {
                next = now;
            }
        }
    }

    /// The counters over the window from `start` to now.
    fn finish(&mut self, start: Snapshot, out: &mut RunOutcome) {
        let end_pids = {
            let mut p = (self.probes.server_pids)();
            p.retain(|x| self.pids.contains(x) || procs::alive(*x));
            p
        };
        let end = self.snapshot(&end_pids).unwrap_or_else(|| {
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
        });
        out.db = end.db.since(&start.db);
        out.device = match (&self.probes.device, &start.disk, &end.disk) {
            (Some(d), Some(a), Some(b)) => b.delta(a, d),
            _ => None,
        };
        out.server = (start.server.processes > 0).then(|| end.server.since(&start.server));
        out.machine_busy_pct = end.cpu.busy_pct_since(&start.cpu);
    }
}

/// The main thread during a run: the phases, in step with the sessions
/// (see the barriers in [`session_body`]).
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
    let mut s = Sampler {
        monitor,
        spec,
        probes,
        stop,
        sh,
        on_second,
        on_ash,
        t0,
        ids: sh.ids.lock().unwrap().clone(),
        pids: (probes.server_pids)(),
        last: None,
        sec_waits: BTreeMap::new(),
        sec_samples: 0,
        next_sec: t0 + Duration::from_secs(1),
    };
    if !s.aborted() {
        let pids = s.pids.clone();
        s.last = s.snapshot(&pids);
    }
    if !s.aborted() && !spec.warmup.is_zero() {
        s.sample("warmup", Some(t0 + spec.warmup), out);
    }
    out.warmup_s = t0.elapsed().as_secs_f64();
    sh.phase_end.store(true, Ordering::SeqCst);
    sh.barrier.wait(); // sessions paused and published
    let start = if s.aborted() || out.interrupted {
        None
    } else {
        s.pids = (probes.server_pids)();
        let pids = s.pids.clone();
        s.snapshot(&pids)
    };
    if out.interrupted {
        // Interrupted during the warm-up: nothing to measure.
        sh.abort.store(true, Ordering::SeqCst);
    }
    sh.phase_end.store(false, Ordering::SeqCst);
    sh.measuring.store(true, Ordering::SeqCst);
    sh.barrier.wait(); // go
    let w0 = Instant::now();
    if !s.aborted() {
        let until = (spec.work_loop.is_none()).then(|| w0 + spec.runtime);
        // With --work-loop, --runtime still caps the run when given explicitly.
        let until = until.or_else(|| (!spec.runtime.is_zero()).then(|| w0 + spec.runtime));
        s.sample("run", until, out);
    }
    sh.phase_end.store(true, Ordering::SeqCst);
    sh.barrier.wait(); // sessions paused and published
    out.measured_s = w0.elapsed().as_secs_f64();
    sh.measuring.store(false, Ordering::SeqCst);
    if let Some(start) = start {
        s.finish(start, out);
    }
}
