//! `calibrate`: an open, repeatable `calibrate_io`.
//!
//! Each trial climbs two ladders of outstanding I/Os (see [`crate::ladder`])
//! over the named targets only:
//! - small random reads (`small_bs`, 8k): `max_iops` is the highest IOPS of
//!   any step whose **mean** latency stays within `max_latency`, and
//!   `latency` is that step's mean latency;
//! - large random reads (`large_bs`, 1m): `max_mbps` is the highest MB/s of
//!   any step (no latency limit: large reads measure throughput).
//!
//! Every step is one job of `step` measured seconds after `ramp` unmeasured
//! ones, with offsets drawn from `seed` (and the trial, ladder and step), so
//! the same options on the same targets ask for the same blocks. `trials`
//! repeats the whole measurement; the report gives each figure's mean, min,
//! max and coefficient of variation.

use crate::concurrent::run_together;
use crate::ladder::{self, LadderConfig, LadderOutcome, Phase, Sample, Stop};
use crate::split::split;
use crate::stats::{monotonic, spread, Spread};
use iolens_core::fmt::{fixed, ms, rate};
use iolens_core::units::human_bytes;
use iolens_core::ByteSize;
use iolens_engine::report::device_total;
use iolens_engine::spec::BsSplit;
use iolens_engine::{EngineKind, JobError, JobOutcome, JobSpec, Layout, Rw, TargetSet};
use serde::Serialize;
use std::fmt::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use iolens_core::result::calibrate::{
    CalibrateFigures, CalibrateSummary, IoKind, LadderPoint, TrialResult,
};

/// A number per ladder, mixed into the seeds and the job names.
fn tag(io: IoKind) -> u64 {
    match io {
        IoKind::Small => 1,
        IoKind::Large => 2,
    }
}

/// Every effective option of a calibration (`config` in result.json).
#[derive(Clone, Debug, Serialize)]
pub struct CalibrateConfig {
    pub targets: Vec<PathBuf>,
    pub layout: Layout,
    /// raid0 stripe, bytes.
    pub stripe: u64,
    /// Start of the region in each target, bytes.
    pub offset: u64,
    /// Length of the region in each target, bytes (`None`: to the end).
    pub size: Option<u64>,
    /// Small random read size, bytes.
    pub small_bs: u64,
    /// Large random read size, bytes.
    pub large_bs: u64,
    /// Mean latency limit for `max_iops`.
    #[serde(rename = "max_latency_ms", serialize_with = "as_ms")]
    pub max_latency: Duration,
    pub trials: u32,
    /// Measured time of each step.
    #[serde(rename = "step_s", serialize_with = "as_s")]
    pub step: Duration,
    /// Unmeasured time at the start of each step.
    #[serde(rename = "ramp_s", serialize_with = "as_s")]
    pub ramp: Duration,
    pub seed: u64,
    /// Starting point of the ladders (a hint, nothing more).
    pub num_disks: Option<u32>,
    pub max_outstanding: u32,
    /// Refinement steps after each climb.
    pub refine: u32,
    /// Least gain, percent, that keeps a ladder climbing.
    pub min_gain_pct: f64,
    pub engine: EngineKind,
    /// Most workers per step (outstanding I/Os are split over them).
    pub max_threads: u32,
}

fn as_ms<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64() * 1e3)
}

fn as_s<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// Most memory the slot buffers of one step may take.
const MAX_BUFFER_BYTES: u64 = 4 << 30;

impl Default for CalibrateConfig {
    fn default() -> Self {
        CalibrateConfig {
            targets: Vec::new(),
            layout: Layout::Concat,
            stripe: 1 << 20,
            offset: 0,
            size: None,
            small_bs: 8 << 10,
            large_bs: 1 << 20,
            max_latency: Duration::from_millis(20),
            trials: 3,
            step: Duration::from_secs(2),
            ramp: Duration::from_millis(500),
            seed: 0x10_1E45,
            num_disks: None,
            max_outstanding: 256,
            refine: 2,
            min_gain_pct: 3.0,
            engine: EngineKind::IoUring,
            max_threads: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
        }
    }
}

impl CalibrateConfig {
    /// Checks the options; the message says what to type instead.
    pub fn validate(&self) -> Result<(), String> {
        if self.targets.is_empty() {
            return Err("no target: give --target PATH (a file or a block device)".into());
        }
        if self.engine.no_storage() {
            return Err(format!(
                "--engine {} measures no storage; use --engine io_uring or psync",
                self.engine
            ));
        }
        if !(1..=100).contains(&self.trials) {
            return Err(format!(
                "--trials {} is out of range; use 1..100",
                self.trials
            ));
        }
        if self.step.is_zero() {
            return Err("--step-time must be > 0 (e.g. 2s)".into());
        }
        if self.max_latency.is_zero() {
            return Err("--max-latency must be > 0 (e.g. 20ms)".into());
        }
        if !(1..=4096).contains(&self.max_outstanding) {
            return Err(format!(
                "--max-outstanding {} is out of range; use 1..4096",
                self.max_outstanding
            ));
        }
        if matches!(self.num_disks, Some(0)) {
            return Err("--num-disks must be at least 1".into());
        }
        if !(0.0..100.0).contains(&self.min_gain_pct) {
            return Err(format!(
                "--min-gain {} is not a percentage; use 0..100 (e.g. 3)",
                self.min_gain_pct
            ));
        }
        if self.max_threads == 0 {
            return Err("--max-threads must be at least 1".into());
        }
        if self.engine.sync_io() && self.max_outstanding > 1024 {
            return Err(format!(
                "--engine {} runs one worker per outstanding I/O: --max-outstanding {} would start that many threads; use 1024 or less, or --engine io_uring",
                self.engine, self.max_outstanding
            ));
        }
        let buffers = self.large_bs.max(self.small_bs) * self.max_outstanding as u64;
        if buffers > MAX_BUFFER_BYTES {
            return Err(format!(
                "--max-outstanding {} with --large-bs {} needs {} of I/O buffers; lower one of them",
                self.max_outstanding,
                ByteSize(self.large_bs),
                human_bytes(buffers)
            ));
        }
        if matches!(self.size, Some(0)) {
            return Err("--size must be > 0".into());
        }
        for (flag, bs) in [("--small-bs", self.small_bs), ("--large-bs", self.large_bs)] {
            if bs == 0 || bs % 4096 != 0 || bs > (64 << 20) {
                return Err(format!(
                    "{flag} {} does not suit direct I/O; use a multiple of 4k up to 64m (e.g. 8k, 1m)",
                    ByteSize(bs)
                ));
            }
        }
        self.open_spec().validate()
    }

    /// The spec the targets are opened with: read only, direct, aligned for
    /// both block sizes, large enough for the large reads.
    pub fn open_spec(&self) -> JobSpec {
        let mut sizes = vec![(self.small_bs, 1)];
        if self.large_bs != self.small_bs {
            sizes.push((self.large_bs, 1));
        }
        JobSpec {
            name: "calibrate".into(),
            targets: self.targets.clone(),
            layout: self.layout,
            stripe: self.stripe,
            rw: Rw::Randread,
            bs: self.small_bs,
            bs_split: Some(BsSplit(sizes)),
            offset: self.offset,
            size: self.size,
            engine: self.engine,
            direct: true,
            seed: self.seed,
            ..Default::default()
        }
    }

    fn bs(&self, io: IoKind) -> u64 {
        match io {
            IoKind::Small => self.small_bs,
            IoKind::Large => self.large_bs,
        }
    }

    /// The job of one step.
    pub fn step_spec(&self, trial: u32, io: IoKind, outstanding: u32, index: u32) -> JobSpec {
        let (threads, qd) = split(outstanding, self.engine, self.max_threads);
        JobSpec {
            name: format!("calibrate-{}", tag(io)),
            bs: self.bs(io),
            bs_split: None,
            threads,
            qd,
            runtime: self.step,
            ramp: self.ramp,
            seed: step_seed(self.seed, trial, io, outstanding, index),
            ..self.open_spec()
        }
    }

    fn ladder_config(&self, io: IoKind) -> LadderConfig {
        LadderConfig {
            start: self.num_disks.unwrap_or(1),
            max_outstanding: self.max_outstanding,
            max_latency_us: (io == IoKind::Small).then_some(self.max_latency.as_secs_f64() * 1e6),
            min_gain: self.min_gain_pct / 100.0,
            refine: self.refine,
        }
    }
}

/// A seed per step, derived from the user's: the same options ask for the
/// same blocks, and no two steps re-read each other's blocks from a cache.
fn step_seed(seed: u64, trial: u32, io: IoKind, outstanding: u32, index: u32) -> u64 {
    let mut z = seed
        ^ ((trial as u64) << 48)
        ^ (tag(io) << 40)
        ^ ((index as u64) << 24)
        ^ outstanding as u64;
    // splitmix64 finaliser
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// The step `o` measured, as `ladder[]` of result.json holds it.
fn ladder_point(
    cfg: &CalibrateConfig,
    trial: u32,
    io: IoKind,
    phase: Phase,
    spec: &JobSpec,
    o: &JobOutcome,
) -> LadderPoint {
    let secs = o.measured_s.max(1e-9);
    let lat = o.read.hist.summary();
    let cpu = o.cpu.total_s();
    let within = io == IoKind::Large || lat.mean <= cfg.max_latency.as_secs_f64() * 1e6;
    LadderPoint {
        trial,
        io,
        phase,
        outstanding: spec.threads * spec.qd,
        threads: spec.threads,
        qd: spec.qd,
        bs: spec.bs,
        measured_s: o.measured_s,
        ops: o.read.ops,
        iops: o.read.ops as f64 / secs,
        mbps: o.read.bytes as f64 / secs / 1e6,
        within_latency: within,
        device_read_ios: (!o.disks.is_empty()).then(|| o.disks.iter().map(|d| d.read_ios).sum()),
        device: device_total(&o.disks),
        cpu_us_per_io: if o.read.ops > 0 {
            cpu * 1e6 / o.read.ops as f64
        } else {
            0.0
        },
        interrupted: o.interrupted || o.error.is_some(),
        lat_us: lat,
    }
}

/// The figure the step's ladder climbs on.
fn ladder_value(p: &LadderPoint) -> f64 {
    match p.io {
        IoKind::Small => p.iops,
        IoKind::Large => p.mbps,
    }
}

/// Everything a calibration measured so far.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Calibration {
    /// Every step of every trial, in the order they ran.
    pub points: Vec<LadderPoint>,
    pub trials: Vec<TrialResult>,
    /// The first I/O error; the calibration stopped there.
    pub error: Option<String>,
    /// Stopped by an interrupt.
    pub interrupted: bool,
}

/// What the calibration is doing, for progress displays and incremental writes.
pub enum Event<'a> {
    /// A step starts.
    Step {
        trial: u32,
        io: IoKind,
        phase: Phase,
        outstanding: u32,
        started: Instant,
    },
    /// About every 50 ms while a step runs.
    Tick,
    /// A step ended; the calibration so far.
    Measured(&'a Calibration),
}

/// Runs the calibration on opened targets. `interrupt` ends it early,
/// keeping every finished step; `observe` sees each event.
pub fn run(
    cfg: &CalibrateConfig,
    targets: &Arc<TargetSet>,
    interrupt: &AtomicBool,
    observe: &mut dyn FnMut(Event<'_>),
) -> Result<Calibration, JobError> {
    let mut cal = Calibration::default();
    'trials: for trial in 1..=cfg.trials {
        let mut tr = TrialResult {
            trial,
            ..Default::default()
        };
        for io in [IoKind::Small, IoKind::Large] {
            let lcfg = cfg.ladder_config(io);
            let first = cal.points.len();
            let mut index = 0u32;
            let outcome = ladder::search(&lcfg, |o, phase| {
                if interrupt.load(Ordering::Relaxed) || cal.error.is_some() {
                    return Ok(None);
                }
                let step = StepPlan {
                    trial,
                    io,
                    phase,
                    outstanding: o,
                    index,
                };
                index += 1;
                run_step(cfg, targets, interrupt, observe, &mut cal, step)
            })?;
            record_trial(&mut tr, io, &lcfg, &outcome, &cal.points[first..]);
            if outcome.cut_short || outcome.stop == Stop::Stopped {
                cal.trials.push(tr);
                break 'trials;
            }
        }
        cal.trials.push(tr);
        observe(Event::Measured(&cal));
    }
    Ok(cal)
}

/// Which ladder step to run.
struct StepPlan {
    trial: u32,
    io: IoKind,
    phase: Phase,
    outstanding: u32,
    /// Steps of this ladder before this one.
    index: u32,
}

/// Runs one ladder step and adds it to `cal`; the sample the ladder goes
/// on with, or `None` when the step was cut short.
fn run_step(
    cfg: &CalibrateConfig,
    targets: &Arc<TargetSet>,
    interrupt: &AtomicBool,
    observe: &mut dyn FnMut(Event<'_>),
    cal: &mut Calibration,
    step: StepPlan,
) -> Result<Option<Sample>, JobError> {
    let spec = Arc::new(cfg.step_spec(step.trial, step.io, step.outstanding, step.index));
    observe(Event::Step {
        trial: step.trial,
        io: step.io,
        phase: step.phase,
        outstanding: step.outstanding,
        started: Instant::now(),
    });
    let mut runs = run_together(std::slice::from_ref(&spec), targets, interrupt, || {
        observe(Event::Tick)
    })?;
    let out = runs.remove(0).outcome;
    let p = ladder_point(cfg, step.trial, step.io, step.phase, &spec, &out);
    let sample = Sample {
        value: ladder_value(&p),
        lat_us: p.lat_us.mean,
    };
    let cut = p.interrupted;
    cal.points.push(p);
    if let Some(e) = out.error {
        cal.error = Some(e);
    }
    if interrupt.load(Ordering::Relaxed) {
        cal.interrupted = true;
    }
    observe(Event::Measured(cal));
    Ok(if cut { None } else { Some(sample) })
}

/// Takes the figures of one finished ladder into its trial; `points` are its steps.
fn record_trial(
    tr: &mut TrialResult,
    io: IoKind,
    lcfg: &LadderConfig,
    outcome: &LadderOutcome,
    points: &[LadderPoint],
) {
    let stop = (outcome.stop != Stop::Stopped).then_some(outcome.stop);
    match io {
        IoKind::Small => {
            tr.small_stop = stop;
            let best = lcfg.best(&outcome.steps).map(|i| (i, true)).or_else(|| {
                // Nothing within the limit: report the lowest-latency step.
                (0..outcome.steps.len())
                    .min_by(|&a, &b| {
                        outcome.steps[a]
                            .sample
                            .lat_us
                            .total_cmp(&outcome.steps[b].sample.lat_us)
                    })
                    .map(|i| (i, false))
            });
            if let Some((i, within)) = best {
                let p = &points[i];
                tr.max_iops = Some(p.iops);
                tr.latency_ms = Some(p.lat_us.mean / 1e3);
                tr.latency_p99_ms = Some(p.lat_us.p99 / 1e3);
                tr.iops_outstanding = Some(p.outstanding);
                tr.iops_within_latency = within;
            }
        }
        IoKind::Large => {
            tr.large_stop = stop;
            if let Some(i) = lcfg.best(&outcome.steps) {
                let p = &points[i];
                tr.max_mbps = Some(p.mbps);
                tr.mbps_outstanding = Some(p.outstanding);
                tr.mbps_latency_ms = Some(p.lat_us.mean / 1e3);
            }
        }
    }
}

/// The spread of each figure over the trials that measured it.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Figures {
    pub max_iops: Spread,
    pub latency_ms: Spread,
    pub max_mbps: Spread,
}

impl Calibration {
    /// Each figure over the trials (complete or not) that measured it.
    pub fn figures(&self) -> Figures {
        let col = |f: fn(&TrialResult) -> Option<f64>| {
            self.trials.iter().filter_map(f).collect::<Vec<_>>()
        };
        Figures {
            max_iops: spread(&col(|t| t.max_iops)),
            latency_ms: spread(&col(|t| t.latency_ms)),
            max_mbps: spread(&col(|t| t.max_mbps)),
        }
    }

    /// `summary` of result.json: each figure's mean over trials (rounded),
    /// its coefficient of variation and its spread.
    pub fn summary(&self) -> CalibrateSummary {
        let f = self.figures();
        let r = |v: f64, d: i32| {
            let m = 10f64.powi(d);
            (v * m).round() / m
        };
        let mean = |s: &Spread, d: i32| (s.n > 0).then(|| r(s.mean, d));
        let cv = |s: &Spread| (s.n > 0).then(|| r(s.cv_pct, 2));
        let rounded = |s: &Spread, d: i32| {
            (s.n > 0).then(|| Spread {
                n: s.n,
                mean: r(s.mean, d),
                min: r(s.min, d),
                max: r(s.max, d),
                stddev: r(s.stddev, d + 1),
                cv_pct: r(s.cv_pct, 2),
            })
        };
        CalibrateSummary {
            max_iops: mean(&f.max_iops, 1),
            latency_ms: mean(&f.latency_ms, 4),
            max_mbps: mean(&f.max_mbps, 3),
            cv: CalibrateFigures {
                max_iops: cv(&f.max_iops),
                latency_ms: cv(&f.latency_ms),
                max_mbps: cv(&f.max_mbps),
            },
            spread: CalibrateFigures {
                max_iops: rounded(&f.max_iops, 1),
                latency_ms: rounded(&f.latency_ms, 4),
                max_mbps: rounded(&f.max_mbps, 3),
            },
            trials_complete: self.trials.iter().filter(|t| t.complete()).count() as u64,
            within_latency: self
                .trials
                .iter()
                .filter(|t| t.max_iops.is_some())
                .all(|t| t.iops_within_latency),
            steps: self.points.len() as u64,
        }
    }
}

/// Advice drawn from the figures: spread over trials and its likely cause,
/// unmet latency limits, ladders cut by the cap, I/O the device saw that
/// iolens did not issue.
pub fn warnings(cfg: &CalibrateConfig, cal: &Calibration) -> Vec<String> {
    let mut w = Vec::new();
    let f = cal.figures();
    spread_warnings(&mut w, cal, &f);
    latency_warnings(&mut w, cfg, cal);
    ladder_limit_warning(&mut w, cfg, cal);
    device_warnings(&mut w, cfg, cal, &f);
    let coarse = cal
        .points
        .iter()
        .filter(|p| !p.interrupted && p.ops < 200)
        .count();
    if coarse > 0 {
        w.push(format!(
            "{coarse} step(s) completed fewer than 200 I/Os: their figures are coarse; use a longer --step-time"
        ));
    }
    w
}

/// Requests the devices saw per read iolens issued, over the steps of `io`
/// with device counters (`None`: no such step).
fn device_read_ratio(cal: &Calibration, io: IoKind) -> Option<f64> {
    let (ours, dev) = cal
        .points
        .iter()
        .filter(|p| p.io == io)
        .filter_map(|p| p.device_read_ios.map(|d| (p.ops, d)))
        .fold((0u64, 0u64), |a, b| (a.0 + b.0, a.1 + b.1));
    (ours > 0).then(|| dev as f64 / ours as f64)
}

/// `max_iops` or `max_mbps` that vary over the trials, with the likely cause.
fn spread_warnings(w: &mut Vec<String>, cal: &Calibration, f: &Figures) {
    for (name, s, vals, io) in [
        (
            "max_iops",
            f.max_iops,
            cal.trials
                .iter()
                .filter_map(|t| t.max_iops)
                .collect::<Vec<_>>(),
            IoKind::Small,
        ),
        (
            "max_mbps",
            f.max_mbps,
            cal.trials
                .iter()
                .filter_map(|t| t.max_mbps)
                .collect::<Vec<_>>(),
            IoKind::Large,
        ),
    ] {
        if s.n < 2 || s.cv_pct <= 5.0 {
            continue;
        }
        let list = vals.iter().map(|v| rate(*v)).collect::<Vec<_>>().join(", ");
        let cause = match monotonic(&vals) {
            Some(true) => "it rises from trial to trial: a cache is warming up (in the device, the array, or the host's page cache under a virtual disk); use targets larger than those caches".to_string(),
            Some(false) => "it falls from trial to trial: burst credits running out, thermal throttling or background work in the device".to_string(),
            None => match device_read_ratio(cal, io) {
                Some(r) if io == IoKind::Small && r > 1.1 => format!(
                    "the devices saw {:.0} % more reads than iolens issued: other I/O shares the device; calibrate when it is idle",
                    (r - 1.0) * 100.0
                ),
                _ => "other load on the device or the host, or steps too short for this device; use a longer --step-time".to_string(),
            },
        };
        w.push(format!(
            "{name} varies by {:.1} % (CV) over {} trials ({list}): {cause}",
            s.cv_pct, s.n
        ));
    }
}

/// Trials where no step met `--max-latency`.
fn latency_warnings(w: &mut Vec<String>, cfg: &CalibrateConfig, cal: &Calibration) {
    for t in &cal.trials {
        if t.max_iops.is_some() && !t.iops_within_latency {
            w.push(format!(
                "trial {}: no step kept the mean latency of {} reads within --max-latency {} ms (lowest: {} ms at {} outstanding); max_iops is that step's IOPS. Raise --max-latency to see how the device scales",
                t.trial,
                ByteSize(cfg.small_bs),
                ms(cfg.max_latency.as_secs_f64() * 1e3),
                ms(t.latency_ms.unwrap_or(0.0)),
                t.iops_outstanding.unwrap_or(0)
            ));
        }
    }
}

/// The first ladder that reached `--max-outstanding` while still growing.
fn ladder_limit_warning(w: &mut Vec<String>, cfg: &CalibrateConfig, cal: &Calibration) {
    for (io, stop) in cal
        .trials
        .iter()
        .flat_map(|t| [(IoKind::Small, t.small_stop), (IoKind::Large, t.large_stop)])
    {
        if stop == Some(Stop::Limit) {
            w.push(format!(
                "the {} ladder reached --max-outstanding {} while still growing: the device may deliver more; raise --max-outstanding",
                if io == IoKind::Small { "small-read" } else { "large-read" },
                cfg.max_outstanding
            ));
            break;
        }
    }
}

/// What the device counters say: missing, large reads split, foreign I/O.
fn device_warnings(w: &mut Vec<String>, cfg: &CalibrateConfig, cal: &Calibration, f: &Figures) {
    if cal.points.iter().all(|p| p.device.is_none()) && !cal.points.is_empty() {
        w.push("no block device found under the targets (tmpfs, overlay?): device counters are missing and the figures may not reflect any storage".into());
    }
    let small_ratio = device_read_ratio(cal, IoKind::Small).unwrap_or(1.0);
    if let Some(r) = device_read_ratio(cal, IoKind::Large) {
        // Only when small reads show no foreign I/O: then extra requests are splits.
        if r >= 1.5 && small_ratio <= 1.1 {
            w.push(format!(
                "each {} read reached the device as about {:.1} requests (the block layer splits it at the queue's max_sectors_kb / max_segments): limits that count requests, or charge each piece, see more I/O than was issued",
                ByteSize(cfg.large_bs),
                r
            ));
        }
    }
    if let Some(r) = device_read_ratio(cal, IoKind::Small) {
        if r > 1.1 && f.max_iops.cv_pct <= 5.0 {
            w.push(format!(
                "the devices under the targets saw {:.0} % more small reads than iolens issued: other I/O shared the device during the calibration",
                (r - 1.0) * 100.0
            ));
        }
    }
}

/// The familiar line: `max_iops = 3766  latency = 18.21 ms  max_mbps = 358`.
pub fn headline(cal: &Calibration) -> String {
    let f = cal.figures();
    let or_dash = |s: &Spread, fmt: &dyn Fn(f64) -> String| {
        if s.n > 0 {
            fmt(s.mean)
        } else {
            "-".to_string()
        }
    };
    format!(
        "max_iops = {}  latency = {} ms  max_mbps = {}",
        or_dash(&f.max_iops, &|v| format!("{v:.0}")),
        or_dash(&f.latency_ms, &ms),
        or_dash(&f.max_mbps, &rate)
    )
}

/// The human report: the familiar line, the spread over trials, and each
/// trial's ladder tables.
pub fn report_text(
    cfg: &CalibrateConfig,
    cal: &Calibration,
    status: &str,
    warnings: &[String],
) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "iolens calibrate: {} target(s), random reads {} (max_iops, mean latency ≤ {} ms) and {} (max_mbps), {} engine, {} trial(s) of {} s steps",
        cfg.targets.len(),
        ByteSize(cfg.small_bs),
        ms(cfg.max_latency.as_secs_f64() * 1e3),
        ByteSize(cfg.large_bs),
        cfg.engine,
        cfg.trials,
        fixed(cfg.step.as_secs_f64(), 2, 0)
    );
    if status != "ok" {
        let _ = writeln!(t, "status: {status}");
    }
    let _ = writeln!(t, "{}", headline(cal));
    write_spread_table(&mut t, &cal.figures());
    for tr in &cal.trials {
        for io in [IoKind::Small, IoKind::Large] {
            let pts: Vec<&LadderPoint> = cal
                .points
                .iter()
                .filter(|p| p.trial == tr.trial && p.io == io)
                .collect();
            if pts.is_empty() {
                continue;
            }
            let _ = writeln!(t);
            write_ladder_table(&mut t, cfg, tr, io, &pts);
        }
    }
    if let Some(e) = &cal.error {
        let _ = writeln!(t, "error: {e}");
    }
    for w in warnings {
        let _ = writeln!(t, "warning: {w}");
    }
    t
}

/// Mean, min, max and CV of each figure, when some trial repeated it.
fn write_spread_table(t: &mut String, f: &Figures) {
    if f.max_iops.n <= 1 && f.max_mbps.n <= 1 {
        return;
    }
    let _ = writeln!(t);
    let _ = writeln!(
        t,
        "{:<12}{:>12}{:>12}{:>12}{:>9}",
        "over trials", "mean", "min", "max", "CV"
    );
    for (name, s, fmt) in [
        (
            "max_iops",
            f.max_iops,
            &(|v: f64| format!("{v:.0}")) as &dyn Fn(f64) -> String,
        ),
        ("latency ms", f.latency_ms, &ms),
        ("max_mbps", f.max_mbps, &rate),
    ] {
        if s.n == 0 {
            continue;
        }
        let _ = writeln!(
            t,
            "{name:<12}{:>12}{:>12}{:>12}{:>7.2} %",
            fmt(s.mean),
            fmt(s.min),
            fmt(s.max),
            s.cv_pct
        );
    }
}

/// One trial's ladder of `io`: what it found, why it stopped, and its steps.
fn write_ladder_table(
    t: &mut String,
    cfg: &CalibrateConfig,
    tr: &TrialResult,
    io: IoKind,
    pts: &[&LadderPoint],
) {
    let (what, result, stop) = match io {
        IoKind::Small => (
            format!("small random reads {}", ByteSize(cfg.small_bs)),
            tr.max_iops.map_or("-".into(), |v| {
                format!(
                    "max_iops {v:.0} at {} outstanding, mean latency {} ms",
                    tr.iops_outstanding.unwrap_or(0),
                    ms(tr.latency_ms.unwrap_or(0.0))
                )
            }),
            tr.small_stop,
        ),
        IoKind::Large => (
            format!("large random reads {}", ByteSize(cfg.large_bs)),
            tr.max_mbps.map_or("-".into(), |v| {
                format!(
                    "max_mbps {} at {} outstanding",
                    rate(v),
                    tr.mbps_outstanding.unwrap_or(0)
                )
            }),
            tr.large_stop,
        ),
    };
    let _ = writeln!(
        t,
        "trial {} — {what}: {result}; ladder stopped on {}",
        tr.trial,
        stop.map_or("an interrupt", |s| s.describe())
    );
    let _ = writeln!(
        t,
        "  {:>11} {:>10} {:>10} {:>10} {:>10} {:>10} {:>12}",
        "outstanding", "threads×qd", "IOPS", "MB/s", "mean ms", "p99 ms", "dev await ms"
    );
    for p in pts {
        let mark = match (p.phase, p.interrupted, p.within_latency) {
            (_, true, _) => "  (cut short)",
            (_, _, false) => "  > max latency",
            (Phase::Refine, _, _) => "  (refine)",
            _ => "",
        };
        let await_ms = p
            .device
            .as_ref()
            .map_or("-".into(), |d| ms(d.read_await_ms));
        let _ = writeln!(
            t,
            "  {:>11} {:>10} {:>10.0} {:>10} {:>10} {:>10} {:>12}{mark}",
            p.outstanding,
            format!("{}×{}", p.threads, p.qd),
            p.iops,
            fixed(p.mbps, 3, 2),
            ms(p.lat_us.mean / 1e3),
            ms(p.lat_us.p99 / 1e3),
            await_ms
        );
    }
}

/// `ladder.csv`: every step, one row each.
pub fn ladder_csv(cal: &Calibration) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let header = [
        "trial",
        "io",
        "phase",
        "outstanding",
        "threads",
        "qd",
        "bs",
        "measured_s",
        "ops",
        "iops",
        "mbps",
        "lat_mean_us",
        "lat_p50_us",
        "lat_p99_us",
        "lat_max_us",
        "within_latency",
        "device_read_ios",
        "interrupted",
    ];
    // Writing into memory cannot fail.
    let _ = w.write_record(header);
    for p in &cal.points {
        let _ = w.write_record(ladder_row(p));
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

/// One step as a row of `ladder.csv`.
fn ladder_row(p: &LadderPoint) -> [String; 18] {
    [
        p.trial.to_string(),
        match p.io {
            IoKind::Small => "small",
            IoKind::Large => "large",
        }
        .into(),
        match p.phase {
            Phase::Ladder => "ladder",
            Phase::Refine => "refine",
        }
        .into(),
        p.outstanding.to_string(),
        p.threads.to_string(),
        p.qd.to_string(),
        p.bs.to_string(),
        format!("{:.3}", p.measured_s),
        p.ops.to_string(),
        format!("{:.1}", p.iops),
        format!("{:.3}", p.mbps),
        format!("{:.2}", p.lat_us.mean),
        format!("{:.2}", p.lat_us.p50),
        format!("{:.2}", p.lat_us.p99),
        format!("{:.2}", p.lat_us.max),
        p.within_latency.to_string(),
        p.device_read_ios.map_or(String::new(), |d| d.to_string()),
        p.interrupted.to_string(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::assert_refused;

    fn cfg() -> CalibrateConfig {
        CalibrateConfig {
            targets: vec!["/tmp/x".into()],
            ..Default::default()
        }
    }

    #[test]
    fn defaults_are_valid_and_bad_values_say_what_to_type() {
        assert!(cfg().validate().is_ok());
        let refused = |edit: fn(&mut CalibrateConfig), fix| {
            assert_refused(cfg(), edit, |c| c.validate(), fix)
        };
        refused(|c| c.trials = 0, "--trials");
        refused(
            |c| (c.max_outstanding, c.large_bs) = (4096, 64 << 20),
            "buffers",
        );
        refused(|c| c.engine = EngineKind::Null, "io_uring");
        refused(
            |c| (c.layout, c.stripe) = (Layout::Raid0, 512 << 10),
            "--stripe",
        );
    }

    #[test]
    fn steps_split_their_outstanding_ios_and_get_their_own_seeds() {
        let c = CalibrateConfig {
            max_threads: 2,
            ..cfg()
        };
        let s = c.step_spec(1, IoKind::Small, 64, 0);
        assert_eq!((s.threads, s.qd, s.bs), (2, 32, 8192));
        let l = c.step_spec(1, IoKind::Large, 4, 1);
        assert_eq!((l.threads, l.qd, l.bs), (1, 4, 1 << 20));
        assert!(l.bs_split.is_none());
        assert_ne!(s.seed, l.seed);
        assert_ne!(
            c.step_spec(1, IoKind::Small, 8, 3).seed,
            c.step_spec(2, IoKind::Small, 8, 3).seed
        );
        // Same options, same seeds.
        assert_eq!(s.seed, c.step_spec(1, IoKind::Small, 64, 0).seed);
    }

    fn trial(n: u32, iops: f64, mbps: f64) -> TrialResult {
        TrialResult {
            trial: n,
            max_iops: Some(iops),
            latency_ms: Some(0.4),
            iops_outstanding: Some(4),
            iops_within_latency: true,
            small_stop: Some(Stop::Plateau),
            max_mbps: Some(mbps),
            mbps_outstanding: Some(2),
            large_stop: Some(Stop::Plateau),
            ..Default::default()
        }
    }

    /// Trials 1, 2, … with these (max_iops, max_mbps).
    fn calibration(figures: &[(f64, f64)]) -> Calibration {
        Calibration {
            trials: (1..)
                .zip(figures)
                .map(|(n, &(iops, mbps))| trial(n, iops, mbps))
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn summary_has_the_figures_and_their_spread() {
        let cal = calibration(&[(3000.0, 80.0), (3060.0, 80.0), (2940.0, 80.0)]);
        let s = cal.summary();
        assert_eq!(s.max_iops, Some(3000.0));
        assert_eq!(s.max_mbps, Some(80.0));
        assert_eq!(s.latency_ms, Some(0.4));
        assert_eq!(s.cv.max_iops, Some(2.0));
        assert_eq!(s.cv.max_mbps, Some(0.0));
        assert_eq!(s.spread.max_iops.map(|s| s.min), Some(2940.0));
        assert_eq!(s.trials_complete, 3);
        assert_eq!(
            headline(&cal),
            "max_iops = 3000  latency = 0.400 ms  max_mbps = 80.0"
        );
    }

    #[test]
    fn a_wide_spread_is_explained() {
        let rising = calibration(&[(1000.0, 80.0), (2000.0, 80.0), (3000.0, 80.0)]);
        let w = warnings(&cfg(), &rising);
        assert!(
            w.iter()
                .any(|w| w.contains("max_iops") && w.contains("cache")),
            "{w:?}"
        );
        let steady = calibration(&[(3000.0, 80.0), (3010.0, 80.2)]);
        assert!(warnings(&cfg(), &steady).is_empty());
    }

    #[test]
    fn ladder_csv_has_one_row_per_step() {
        let p = LadderPoint {
            trial: 1,
            io: IoKind::Large,
            phase: Phase::Refine,
            outstanding: 6,
            threads: 2,
            qd: 3,
            bs: 1 << 20,
            measured_s: 2.00049,
            ops: 1234,
            iops: 617.04,
            mbps: 646.9876,
            lat_us: iolens_core::latency::LatencySummary {
                mean: 9700.126,
                p50: 9000.0,
                p99: 20000.25,
                max: 31000.0,
                ..Default::default()
            },
            within_latency: true,
            device_read_ios: None,
            device: None,
            cpu_us_per_io: 0.0,
            interrupted: false,
        };
        let mut second = p.clone();
        (second.io, second.phase, second.device_read_ios) =
            (IoKind::Small, Phase::Ladder, Some(1300));
        let cal = Calibration {
            points: vec![p, second],
            ..Default::default()
        };
        assert_eq!(
            ladder_csv(&cal),
            "trial,io,phase,outstanding,threads,qd,bs,measured_s,ops,iops,mbps,lat_mean_us,lat_p50_us,lat_p99_us,lat_max_us,within_latency,device_read_ios,interrupted\n\
             1,large,refine,6,2,3,1048576,2.000,1234,617.0,646.988,9700.13,9000.00,20000.25,31000.00,true,,false\n\
             1,small,ladder,6,2,3,1048576,2.000,1234,617.0,646.988,9700.13,9000.00,20000.25,31000.00,true,1300,false\n"
        );
    }
}
