//! The job runner: opens nothing itself, but starts the workers together,
//! collects their per-second intervals into time-series rows as the run goes,
//! and merges their histograms at the end.

use crate::engines::{self, Caps, Engine, EngineSetup, WithEngine};
use crate::spec::JobSpec;
use crate::target::TargetSet;
use crate::worker::{self, DirStats, Msg, SlotBuffers, VerifyStats, WorkerOutcome, WorkerPlan};
use iolens_core::LatencyHistogram;
use iolens_probe::{process_cpu, DiskDelta, DiskStats, ProcessCpu};
use std::collections::BTreeMap;
use std::os::unix::io::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier, OnceLock};
use std::time::{Duration, Instant};

/// Rates of one direction over one second.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct RowDir {
    pub iops: f64,
    pub mbps: f64,
    pub lat_mean_us: f64,
    pub lat_p99_us: f64,
}

/// One row of `timeseries.csv`.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct TimeRow {
    /// Second since the start (ramp included).
    pub sec: u32,
    /// Whether the second belongs to the ramp (not counted).
    pub ramp: bool,
    /// Length of the interval (1 s, less for the last one).
    pub interval_s: f64,
    pub read: RowDir,
    pub write: RowDir,
}

impl TimeRow {
    /// CSV header matching [`TimeRow::fields`].
    pub const CSV_HEADER: &'static str = "sec,phase,interval_s,read_iops,read_mbps,read_lat_mean_us,read_lat_p99_us,write_iops,write_mbps,write_lat_mean_us,write_lat_p99_us";

    /// The columns of [`TimeRow::CSV_HEADER`].
    pub fn csv_header() -> Vec<&'static str> {
        Self::CSV_HEADER.split(',').collect()
    }

    /// The row's fields, in the order of [`TimeRow::CSV_HEADER`].
    pub fn fields(&self) -> Vec<String> {
        let mut f = vec![
            self.sec.to_string(),
            (if self.ramp { "ramp" } else { "run" }).to_string(),
            format!("{:.3}", self.interval_s),
        ];
        for r in [&self.read, &self.write] {
            f.push(format!("{:.1}", r.iops));
            f.push(format!("{:.3}", r.mbps));
            f.push(format!("{:.2}", r.lat_mean_us));
            f.push(format!("{:.2}", r.lat_p99_us));
        }
        f
    }
}

/// What a job measured over its counted window.
#[derive(Debug, Default)]
pub struct JobOutcome {
    pub read: DirStats,
    pub write: DirStats,
    pub sync: LatencyHistogram,
    /// Length of the counted window (after the ramp), seconds.
    pub measured_s: f64,
    /// CPU of this process over the counted window.
    pub cpu: ProcessCpu,
    /// What each device under the targets saw over the counted window.
    pub disks: Vec<DiskDelta>,
    pub verify: VerifyStats,
    /// The first error a worker met; the job stopped there.
    pub error: Option<String>,
    /// Stopped early by the `interrupt` flag.
    pub interrupted: bool,
}

/// Errors that stop a job before it measures anything (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct JobError(pub String);

/// One worker thread from its start to its outcome: builds the job's engine
/// (compiled once per engine type, see [`engines::dispatch`]) and runs the
/// worker loop on it.
struct WorkerStart {
    id: u32,
    spec: Arc<JobSpec>,
    targets: Arc<TargetSet>,
    fds: Vec<i32>,
    ramp_ns: u64,
    end_ns: u64,
    stop: Arc<AtomicBool>,
    tx: mpsc::Sender<Msg>,
    ready_tx: mpsc::Sender<Result<(), String>>,
    go: Arc<Barrier>,
    t0: Arc<OnceLock<Instant>>,
}

impl WithEngine for WorkerStart {
    type Out = WorkerOutcome;

    fn call<E: Engine>(self) -> WorkerOutcome {
        let spec = &self.spec;
        let (region_start, region_len) = if spec.verify {
            // Each worker owns a slice: no two workers write one block.
            let bs = spec.bs;
            let per = self.targets.len / spec.threads as u64 / bs * bs;
            (per * self.id as u64, per)
        } else {
            (0, self.targets.len)
        };
        let mut bufs = SlotBuffers::new(
            spec.qd as usize,
            spec.max_bs() as usize,
            spec.seed ^ self.id as u64,
        );
        if region_len < spec.max_bs() {
            return self.not_ready(format!(
                "the region is too small for {} workers with --verify; use fewer --threads or a larger --size",
                spec.threads
            ));
        }
        let iovecs = if E::CAPS.has(Caps::REGISTERS_BUFFERS) {
            bufs.iovecs()
        } else {
            Vec::new()
        };
        let setup = EngineSetup {
            fds: &self.fds,
            depth: spec.qd,
            buffers: &iovecs,
            spec,
        };
        let mut engine = match E::open(&setup) {
            Ok(e) => e,
            Err(e) => return self.not_ready(E::setup_error(&e)),
        };
        let _ = self.ready_tx.send(Ok(()));
        self.go.wait();
        if self.stop.load(Ordering::Relaxed) {
            return WorkerOutcome::default();
        }
        let plan = WorkerPlan {
            id: self.id,
            spec: self.spec.clone(),
            targets: self.targets.clone(),
            region_start,
            region_len,
            t0: *self.t0.get().expect("t0 is set before the start barrier"),
            ramp_ns: self.ramp_ns,
            end_ns: self.end_ns,
            stop: self.stop.clone(),
            tx: self.tx.clone(),
        };
        worker::run(plan, &mut engine, &mut bufs)
    }
}

impl WorkerStart {
    /// Reports a setup failure and waits for the others at the start line.
    fn not_ready(&self, why: String) -> WorkerOutcome {
        let _ = self.ready_tx.send(Err(why));
        self.go.wait();
        WorkerOutcome::default()
    }
}

/// Runs `spec` on `targets`. `interrupt` (set by a signal handler) ends the
/// run early; `on_row` receives each second of the time series as it completes.
pub fn run_job(
    spec: Arc<JobSpec>,
    targets: Arc<TargetSet>,
    interrupt: &AtomicBool,
    mut on_row: impl FnMut(&TimeRow),
) -> Result<JobOutcome, JobError> {
    spec.engine.probe().map_err(JobError)?;
    let threads = spec.threads as usize;
    let ramp_ns = spec.ramp.as_nanos() as u64;
    let end_ns = ramp_ns + spec.runtime.as_nanos() as u64;
    let crew = Crew::spawn(&spec, &targets, ramp_ns, end_ns)?;

    let setup_error = crew.wait_ready(threads);
    let devices = target_devices(&targets);
    let t0 = Instant::now();
    crew.t0.set(t0).expect("t0 is set once");
    if setup_error.is_some() {
        crew.stop.store(true, Ordering::Relaxed);
    }
    let base = (ramp_ns == 0).then(window_start);
    crew.go.wait();
    if let Some(e) = setup_error {
        for h in crew.handles {
            let _ = h.join();
        }
        return Err(JobError(e));
    }

    let mut rows = Rows::new(threads, ramp_ns);
    let (base, interrupted) = crew.follow(t0, base, interrupt, &mut rows, &mut on_row);
    let mut out = JobOutcome {
        interrupted,
        ..Default::default()
    };
    let last_ns = join_workers(crew.handles, &mut out)?;
    let end_disk = DiskStats::read().ok();
    let end_cpu = process_cpu();
    let final_ns = last_ns.clamp(ramp_ns, end_ns);
    rows.finish(final_ns, &mut on_row);
    out.measured_s = (final_ns - ramp_ns) as f64 / 1e9;
    if let Some((disk0, cpu0, _)) = base {
        out.cpu = end_cpu.since(&cpu0);
        if let (Some(a), Some(b)) = (end_disk.as_ref(), disk0.as_ref()) {
            out.disks = devices.iter().filter_map(|d| a.delta(b, d)).collect();
        }
    }
    Ok(out)
}

/// Device and CPU counters at the start of the counted window.
type WindowStart = (Option<DiskStats>, ProcessCpu, Instant);

fn window_start() -> WindowStart {
    (DiskStats::read().ok(), process_cpu(), Instant::now())
}

/// The devices under the targets, each once, sorted.
fn target_devices(targets: &TargetSet) -> Vec<String> {
    let mut v: Vec<String> = targets
        .targets
        .iter()
        .filter_map(|t| t.device.as_ref().map(|d| d.name.clone()))
        .collect();
    v.sort();
    v.dedup();
    v
}

/// The job's worker threads and what the runner holds to steer them.
struct Crew {
    handles: Vec<std::thread::JoinHandle<WorkerOutcome>>,
    rx: mpsc::Receiver<Msg>,
    ready_rx: mpsc::Receiver<Result<(), String>>,
    stop: Arc<AtomicBool>,
    go: Arc<Barrier>,
    t0: Arc<OnceLock<Instant>>,
}

impl Crew {
    /// Starts one thread per worker; each builds its engine and waits at the
    /// start barrier.
    fn spawn(
        spec: &Arc<JobSpec>,
        targets: &Arc<TargetSet>,
        ramp_ns: u64,
        end_ns: u64,
    ) -> Result<Crew, JobError> {
        let threads = spec.threads as usize;
        let stop = Arc::new(AtomicBool::new(false));
        let (tx, rx) = mpsc::channel::<Msg>();
        let (ready_tx, ready_rx) = mpsc::channel::<Result<(), String>>();
        let go = Arc::new(Barrier::new(threads + 1));
        let t0: Arc<OnceLock<Instant>> = Arc::new(OnceLock::new());
        let fds: Vec<i32> = targets.targets.iter().map(|t| t.file.as_raw_fd()).collect();

        let mut handles = Vec::with_capacity(threads);
        for id in 0..threads as u32 {
            let start = WorkerStart {
                id,
                spec: spec.clone(),
                targets: targets.clone(),
                fds: fds.clone(),
                ramp_ns,
                end_ns,
                stop: stop.clone(),
                tx: tx.clone(),
                ready_tx: ready_tx.clone(),
                go: go.clone(),
                t0: t0.clone(),
            };
            let engine = spec.engine;
            let h = std::thread::Builder::new()
                .name(format!("iolens-w{id}"))
                .spawn(move || {
                    // SAFETY: prctl on the calling thread; a tiny timer slack keeps
                    // rate-limited sleeps close to their deadline.
                    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1u64, 0, 0, 0) };
                    engines::dispatch(engine, start)
                })
                .map_err(|e| JobError(format!("cannot start worker threads: {e}")))?;
            handles.push(h);
        }
        Ok(Crew {
            handles,
            rx,
            ready_rx,
            stop,
            go,
            t0,
        })
    }

    /// Waits until every worker has built its engine; the first setup error.
    fn wait_ready(&self, threads: usize) -> Option<String> {
        let mut setup_error = None;
        for _ in 0..threads {
            if let Ok(Err(e)) = self.ready_rx.recv() {
                setup_error.get_or_insert(e);
            }
        }
        setup_error
    }

    /// Collects the workers' intervals into rows until every worker is done,
    /// takes the window's start counters when the ramp ends, and stops the
    /// workers when `interrupt` is set. Returns the start counters and
    /// whether the run was interrupted.
    fn follow(
        &self,
        t0: Instant,
        mut base: Option<WindowStart>,
        interrupt: &AtomicBool,
        rows: &mut Rows,
        on_row: &mut dyn FnMut(&TimeRow),
    ) -> (Option<WindowStart>, bool) {
        let ramp_at = t0 + Duration::from_nanos(rows.ramp_ns);
        let mut done = 0;
        let mut interrupted = false;
        while done < rows.threads {
            let wait = if base.is_none() {
                ramp_at
                    .saturating_duration_since(Instant::now())
                    .min(Duration::from_millis(100))
            } else {
                Duration::from_millis(100)
            };
            match self.rx.recv_timeout(wait) {
                Ok(Msg::Interval(iv)) => rows.add(&iv, t0, on_row),
                Ok(Msg::Done(_)) => done += 1,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            if base.is_none() && Instant::now() >= ramp_at {
                base = Some(window_start());
            }
            if interrupt.load(Ordering::Relaxed) && !self.stop.load(Ordering::Relaxed) {
                interrupted = true;
                self.stop.store(true, Ordering::Relaxed);
            }
        }
        (base, interrupted)
    }
}

/// Merges every worker's outcome into `out`; the time of the last I/O.
fn join_workers(
    handles: Vec<std::thread::JoinHandle<WorkerOutcome>>,
    out: &mut JobOutcome,
) -> Result<u64, JobError> {
    let mut last_ns = 0;
    for h in handles {
        let w = h
            .join()
            .map_err(|_| JobError("a worker thread panicked".into()))?;
        out.read.merge(&w.read);
        out.write.merge(&w.write);
        out.sync.merge(&w.sync);
        out.verify.checked += w.verify.checked;
        out.verify.unstamped += w.verify.unstamped;
        last_ns = last_ns.max(w.last_ns);
        if out.error.is_none() {
            out.error = w.error;
        }
    }
    Ok(last_ns)
}

/// The time series as it comes in: per second, how many workers reported it
/// and their merged reads and writes.
struct Rows {
    threads: usize,
    ramp_ns: u64,
    pending: BTreeMap<u32, (usize, DirStats, DirStats)>,
}

impl Rows {
    fn new(threads: usize, ramp_ns: u64) -> Rows {
        Rows {
            threads,
            ramp_ns,
            pending: BTreeMap::new(),
        }
    }

    /// Adds one worker's interval; emits the rows that are complete.
    fn add(&mut self, iv: &worker::Interval, t0: Instant, on_row: &mut dyn FnMut(&TimeRow)) {
        let e = self
            .pending
            .entry(iv.sec)
            .or_insert_with(|| (0, DirStats::default(), DirStats::default()));
        e.0 += 1;
        e.1.merge(&iv.read);
        e.2.merge(&iv.write);
        let over = Instant::now().saturating_duration_since(t0).as_nanos() as u64;
        while let Some(entry) = self.pending.first_entry() {
            // A row is written once every worker reported it and the second is over.
            if entry.get().0 < self.threads || (*entry.key() as u64 + 1) * 1_000_000_000 > over {
                break;
            }
            let (sec, (_, r, w)) = entry.remove_entry();
            self.emit(sec, &r, &w, 1.0, on_row);
        }
    }

    /// Emits what is left once the workers are done; the last second ends
    /// at `final_ns`.
    fn finish(&mut self, final_ns: u64, on_row: &mut dyn FnMut(&TimeRow)) {
        for (sec, (_, r, w)) in std::mem::take(&mut self.pending) {
            let start = sec as u64 * 1_000_000_000;
            let len = final_ns
                .saturating_sub(start)
                .clamp(1_000_000, 1_000_000_000) as f64
                / 1e9;
            self.emit(sec, &r, &w, len, on_row);
        }
    }

    fn emit(
        &self,
        sec: u32,
        r: &DirStats,
        w: &DirStats,
        interval_s: f64,
        on_row: &mut dyn FnMut(&TimeRow),
    ) {
        let dir = |d: &DirStats| RowDir {
            iops: d.ops as f64 / interval_s,
            mbps: d.bytes as f64 / interval_s / 1e6,
            lat_mean_us: d.hist.mean_ns() / 1e3,
            lat_p99_us: d.hist.quantile_ns(0.99) as f64 / 1e3,
        };
        on_row(&TimeRow {
            sec,
            ramp: (sec as u64 + 1) * 1_000_000_000 <= self.ramp_ns,
            interval_s,
            read: dir(r),
            write: dir(w),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::FaultOptions;
    use crate::spec::EngineKind;

    fn spec(engine: EngineKind, runtime_ms: u64) -> JobSpec {
        JobSpec {
            engine,
            threads: 2,
            qd: 4,
            runtime: Duration::from_millis(runtime_ms),
            ..Default::default()
        }
    }

    fn job(spec: JobSpec, interrupt: &AtomicBool) -> (Result<JobOutcome, JobError>, Vec<TimeRow>) {
        let mut rows = Vec::new();
        let targets = Arc::new(TargetSet::none(1 << 30));
        let r = run_job(Arc::new(spec), targets, interrupt, |row| {
            rows.push(row.clone())
        });
        (r, rows)
    }

    #[test]
    fn workers_are_merged_and_every_second_becomes_a_row() {
        let (out, rows) = job(spec(EngineKind::Null, 1200), &AtomicBool::new(false));
        let out = out.unwrap();
        assert!(out.error.is_none() && !out.interrupted);
        assert!(out.read.ops > 0);
        assert!((out.measured_s - 1.2).abs() < 0.5, "{}", out.measured_s);
        assert_eq!(rows.len(), 2, "one full second and the last part");
        assert_eq!(rows[0].sec, 0);
        assert!(
            (rows[1].interval_s - 0.2).abs() < 0.15,
            "{}",
            rows[1].interval_s
        );
    }

    #[test]
    fn an_injected_error_ends_the_job_with_that_error() {
        let s = JobSpec {
            fault: Some(FaultOptions {
                error_at: vec![100],
                ..Default::default()
            }),
            ..spec(EngineKind::Fault, 30_000)
        };
        let started = Instant::now();
        let (out, _) = job(s, &AtomicBool::new(false));
        let out = out.unwrap();
        let err = out.error.unwrap();
        assert!(err.starts_with("read of 8192 bytes"), "{err}");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the job stops at the first error"
        );
    }

    #[test]
    fn an_interrupt_ends_the_job_and_says_so() {
        let interrupt = Arc::new(AtomicBool::new(false));
        let i2 = interrupt.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            i2.store(true, Ordering::Relaxed);
        });
        let (out, _) = job(spec(EngineKind::Fault, 60_000), &interrupt);
        t.join().unwrap();
        let out = out.unwrap();
        assert!(out.interrupted && out.error.is_none());
        assert!(out.measured_s < 10.0, "{}", out.measured_s);
    }

    #[test]
    fn a_worker_that_cannot_start_fails_the_job_before_it_measures() {
        let s = JobSpec {
            verify: true,
            rw: crate::spec::Rw::Randrw,
            threads: 4,
            ..spec(EngineKind::Null, 1000)
        };
        let mut rows = 0;
        let r = run_job(
            Arc::new(s),
            Arc::new(TargetSet::none(16384)),
            &AtomicBool::new(false),
            |_| rows += 1,
        );
        let e = r.unwrap_err();
        assert!(
            e.0.starts_with("the region is too small for 4 workers"),
            "{e}"
        );
        assert_eq!(rows, 0);
    }
}
