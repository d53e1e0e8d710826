//! `matrix`: ORION's matrix of small random and large I/O streams.
//!
//! A point is a pair (small outstanding I/Os, large outstanding I/Os or
//! streams); both streams run **at the same time** on the same targets for
//! `duration` (after an unmeasured `ramp`). Rows of the matrix are large
//! loads, columns small loads; the first row has no large I/O and the first
//! column no small I/O.
//!
//! Runs and matrices, as in ORION:
//!
//! | `--run` | means |
//! |---|---|
//! | simple | `--matrix basic`: small 8k random reads alone, then large 1m random reads alone |
//! | normal | `--matrix detailed`: also every combination |
//! | oltp | `--matrix row` with no large I/O: small random I/O up to `--num-small` |
//! | dss | `--matrix col` with no small I/O: large random I/O up to `--num-large`, 240 s a point |
//! | advanced | everything as given (`--matrix detailed` unless told) |
//!
//! | `--matrix` | points |
//! |---|---|
//! | basic | the first row and the first column: each stream alone |
//! | detailed | every (small, large) pair |
//! | row | small loads 0..num_small at the fixed large load `--num-large` |
//! | col | large loads 0..num_large at the fixed small load `--num-small` |
//! | max | the row at `--num-large` and the column at `--num-small` |
//! | point | the single point (`--num-small`, `--num-large`) |
//!
//! Loads run 1, 2, …, 20, then in quarter-octave steps (24, 28, 32, 40, …)
//! up to the maximum, which is always included. Without `--num-small` /
//! `--num-large` the maxima are ORION's: 5 × and 2 × `--num-disks` (by
//! default the number of targets).

use crate::concurrent::run_together;
use crate::split::split;
use iolens_core::result::matrix::{BestPoint, MatrixSummary};
use iolens_core::result::run::IoFigures;
use iolens_core::units::human_bytes;
use iolens_core::ByteSize;
use iolens_engine::report::device_total;
use iolens_engine::spec::BsSplit;
use iolens_engine::worker::DirStats;
use iolens_engine::{
    run_job, EngineKind, JobError, JobOutcome, JobSpec, Layout, Rw, TargetSet, TimeRow,
};
use serde::Serialize;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// ORION's `-run`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunKind {
    Simple,
    Normal,
    Advanced,
    Oltp,
    Dss,
}

/// ORION's `-matrix`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MatrixKind {
    Basic,
    Detailed,
    Row,
    Col,
    Max,
    Point,
}

/// ORION's `-type`: the large stream's access pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LargeType {
    /// Random large I/Os; the large load is the number outstanding.
    Rand,
    /// Sequential streams; the large load is the number of streams, each
    /// with `num_streamio` I/Os outstanding.
    Seq,
}

/// What the user typed (`None`: not given). [`MatrixOptions::resolve`]
/// applies the run's meaning and ORION's defaults, and refuses impossible
/// combinations.
#[derive(Clone, Debug)]
pub struct MatrixOptions {
    pub targets: Vec<PathBuf>,
    pub test: String,
    pub run: RunKind,
    pub matrix: Option<MatrixKind>,
    pub num_small: Option<u32>,
    pub num_large: Option<u32>,
    pub size_small: Option<u64>,
    pub size_large: Option<u64>,
    pub large_type: Option<LargeType>,
    pub num_streamio: Option<u32>,
    pub write_pct: Option<u32>,
    pub layout: Option<Layout>,
    pub stripe: Option<u64>,
    pub cache_size: Option<u64>,
    pub duration: Option<Duration>,
    pub ramp: Duration,
    pub num_disks: Option<u32>,
    pub offset: u64,
    pub size: Option<u64>,
    pub seed: u64,
    pub engine: EngineKind,
    pub max_threads: u32,
    pub allow_overwrite: bool,
    pub allow_destroy: bool,
}

impl Default for MatrixOptions {
    fn default() -> Self {
        MatrixOptions {
            targets: Vec::new(),
            test: "orion".into(),
            run: RunKind::Simple,
            matrix: None,
            num_small: None,
            num_large: None,
            size_small: None,
            size_large: None,
            large_type: None,
            num_streamio: None,
            write_pct: None,
            layout: None,
            stripe: None,
            cache_size: None,
            duration: None,
            ramp: Duration::ZERO,
            num_disks: None,
            offset: 0,
            size: None,
            seed: 0x10_1E45,
            engine: EngineKind::IoUring,
            max_threads: std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
            allow_overwrite: false,
            allow_destroy: false,
        }
    }
}

/// The resolved matrix (`config` in result.json).
#[derive(Clone, Debug, Serialize)]
pub struct MatrixConfig {
    pub targets: Vec<PathBuf>,
    pub test: String,
    pub run: RunKind,
    pub matrix: MatrixKind,
    /// Most (or, for `col`, the fixed) small outstanding I/Os.
    pub num_small: u32,
    /// Most (or, for `row`, the fixed) large outstanding I/Os or streams.
    pub num_large: u32,
    pub size_small: u64,
    pub size_large: u64,
    pub large_type: LargeType,
    /// Outstanding I/Os per sequential stream.
    pub num_streamio: u32,
    /// Share of writes, percent.
    pub write_pct: u32,
    pub layout: Layout,
    pub stripe: u64,
    /// Bytes of large random reads before each point, not measured.
    pub cache_size: u64,
    #[serde(rename = "duration_s", serialize_with = "as_s")]
    pub duration: Duration,
    #[serde(rename = "ramp_s", serialize_with = "as_s")]
    pub ramp: Duration,
    pub num_disks: u32,
    pub offset: u64,
    pub size: Option<u64>,
    pub seed: u64,
    pub engine: EngineKind,
    pub max_threads: u32,
    pub allow_overwrite: bool,
    pub allow_destroy: bool,
    /// The points, in the order they run: (small, large).
    pub points: Vec<(u32, u32)>,
}

fn as_s<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// Highest load either stream may be given.
const MAX_LOAD: u32 = 4096;
/// Most memory the buffers of one point may take.
const MAX_BUFFER_BYTES: u64 = 4 << 30;

/// Loads from 1 to `max`: every integer up to 20, then quarter-octave steps;
/// `max` itself always ends the series.
pub fn levels(max: u32) -> Vec<u32> {
    let mut v: Vec<u32> = (1..=max.min(20)).collect();
    let mut p = 16u32;
    while p < max {
        let step = (p / 4).max(1);
        let mut x = p;
        while x < p.saturating_mul(2) && x < max {
            if x > 20 {
                v.push(x);
            }
            x += step;
        }
        p = p.saturating_mul(2);
    }
    if max > 0 && v.last() != Some(&max) {
        v.push(max);
    }
    v
}

/// The points of a matrix, in the order they run.
pub fn points(matrix: MatrixKind, num_small: u32, num_large: u32) -> Vec<(u32, u32)> {
    let with0 = |v: Vec<u32>| std::iter::once(0).chain(v).collect::<Vec<_>>();
    let sl = levels(num_small);
    let ll = levels(num_large);
    let mut pts: Vec<(u32, u32)> = match matrix {
        MatrixKind::Basic => sl
            .iter()
            .map(|&s| (s, 0))
            .chain(ll.iter().map(|&l| (0, l)))
            .collect(),
        MatrixKind::Detailed => with0(ll.clone())
            .into_iter()
            .flat_map(|l| with0(sl.clone()).into_iter().map(move |s| (s, l)))
            .collect(),
        MatrixKind::Row => with0(sl).into_iter().map(|s| (s, num_large)).collect(),
        MatrixKind::Col => with0(ll).into_iter().map(|l| (num_small, l)).collect(),
        MatrixKind::Max => with0(sl)
            .into_iter()
            .map(|s| (s, num_large))
            .chain(with0(ll).into_iter().map(|l| (num_small, l)))
            .collect(),
        MatrixKind::Point => vec![(num_small, num_large)],
    };
    pts.retain(|&p| p != (0, 0));
    let mut seen = std::collections::HashSet::new();
    pts.retain(|p| seen.insert(*p));
    pts
}

impl MatrixOptions {
    /// Applies the run's meaning and the defaults; refuses impossible
    /// matrices with a message that says what to type instead.
    pub fn resolve(&self) -> Result<MatrixConfig, String> {
        self.check_targets()?;
        let disks = self.num_disks.unwrap_or(self.targets.len() as u32).max(1);
        if matches!(self.num_disks, Some(0)) {
            return Err("--num-disks must be at least 1".into());
        }
        let (matrix, num_small, num_large) = self.loads(disks)?;
        check_loads(matrix, num_small, num_large)?;
        let (large_type, num_streamio, write_pct) = self.stream_options()?;
        let duration = self.duration()?;
        self.check_test_name()?;
        let (size_small, size_large) = self.io_sizes()?;
        let large_ios = match large_type {
            LargeType::Rand => num_large as u64,
            LargeType::Seq => num_large as u64 * num_streamio as u64,
        };
        let buffers = large_ios * size_large + num_small as u64 * size_small;
        if buffers > MAX_BUFFER_BYTES {
            return Err(format!(
                "the largest point needs {} of I/O buffers; lower --num-large, --num-streamio or --size-large",
                human_bytes(buffers)
            ));
        }
        if matches!(self.size, Some(0)) {
            return Err("--size must be > 0".into());
        }
        let cfg = MatrixConfig {
            targets: self.targets.clone(),
            test: self.test.clone(),
            run: self.run,
            matrix,
            num_small,
            num_large,
            size_small,
            size_large,
            large_type,
            num_streamio,
            write_pct,
            layout: self.layout.unwrap_or(Layout::Concat),
            stripe: self.stripe.unwrap_or(1 << 20),
            cache_size: self.cache_size.unwrap_or(0),
            duration,
            ramp: self.ramp,
            num_disks: disks,
            offset: self.offset,
            size: self.size,
            seed: self.seed,
            engine: self.engine,
            max_threads: self.max_threads.max(1),
            allow_overwrite: self.allow_overwrite,
            allow_destroy: self.allow_destroy,
            points: points(matrix, num_small, num_large),
        };
        if cfg.engine.sync_io() && large_ios + num_small as u64 > 2048 {
            return Err(format!("--engine {} runs one worker per outstanding I/O: this matrix would start more than 2048 threads; use --engine io_uring or smaller loads", cfg.engine));
        }
        cfg.open_spec().validate()?;
        Ok(cfg)
    }

    /// At least one target, and an engine that touches storage.
    fn check_targets(&self) -> Result<(), String> {
        if self.targets.is_empty() {
            return Err("no target: give --target PATH (a file or a block device)".into());
        }
        if self.engine.no_storage() {
            return Err(format!(
                "--engine {} measures no storage; use --engine io_uring or psync",
                self.engine
            ));
        }
        Ok(())
    }

    /// The matrix and its most small and large loads, as the run sets them;
    /// refuses the options the run decides itself.
    fn loads(&self, disks: u32) -> Result<(MatrixKind, u32, u32), String> {
        let run_name = format!("{:?}", self.run).to_lowercase();
        let reject = |given: bool, flag: &str, why: &str| -> Result<(), String> {
            if given {
                Err(format!("{flag} does not go with --run {run_name} ({why}); use --run advanced to choose it"))
            } else {
                Ok(())
            }
        };
        Ok(match self.run {
            RunKind::Simple | RunKind::Normal => {
                let why = if self.run == RunKind::Simple {
                    "it runs 8k random and 1m random reads, each alone, at loads set by --num-disks"
                } else {
                    "it runs 8k random and 1m random reads and their combinations, at loads set by --num-disks"
                };
                reject(self.matrix.is_some(), "--matrix", why)?;
                reject(self.num_small.is_some(), "--num-small", why)?;
                reject(self.num_large.is_some(), "--num-large", why)?;
                reject(self.size_small.is_some(), "--size-small", why)?;
                reject(self.size_large.is_some(), "--size-large", why)?;
                reject(self.large_type.is_some(), "--large-type", why)?;
                reject(self.num_streamio.is_some(), "--num-streamio", why)?;
                reject(self.write_pct.is_some(), "--write", why)?;
                reject(self.layout.is_some(), "--layout", why)?;
                reject(self.stripe.is_some(), "--stripe", why)?;
                let m = if self.run == RunKind::Simple {
                    MatrixKind::Basic
                } else {
                    MatrixKind::Detailed
                };
                (m, 5 * disks, 2 * disks)
            }
            RunKind::Oltp => {
                let why = "it runs small random I/O alone";
                reject(self.matrix.is_some(), "--matrix", why)?;
                reject(self.num_large.is_some(), "--num-large", why)?;
                reject(self.size_large.is_some(), "--size-large", why)?;
                reject(self.large_type.is_some(), "--large-type", why)?;
                reject(self.num_streamio.is_some(), "--num-streamio", why)?;
                (MatrixKind::Row, self.num_small.unwrap_or(5 * disks), 0)
            }
            RunKind::Dss => {
                let why = "it runs large random I/O alone";
                reject(self.matrix.is_some(), "--matrix", why)?;
                reject(self.num_small.is_some(), "--num-small", why)?;
                reject(self.size_small.is_some(), "--size-small", why)?;
                (MatrixKind::Col, 0, self.num_large.unwrap_or(2 * disks))
            }
            RunKind::Advanced => self.advanced_loads(disks)?,
        })
    }

    /// `--run advanced`: the matrix and loads as given, ORION's defaults for
    /// the rest.
    fn advanced_loads(&self, disks: u32) -> Result<(MatrixKind, u32, u32), String> {
        let m = self.matrix.unwrap_or(MatrixKind::Detailed);
        Ok(match m {
            MatrixKind::Point => match (self.num_small, self.num_large) {
                (Some(s), Some(l)) => (m, s, l),
                _ => {
                    return Err("--matrix point needs the point: give --num-small N and --num-large M (either may be 0)".into())
                }
            },
            MatrixKind::Row => (m, self.num_small.unwrap_or(5 * disks), self.num_large.unwrap_or(0)),
            MatrixKind::Col => (m, self.num_small.unwrap_or(0), self.num_large.unwrap_or(2 * disks)),
            _ => (
                m,
                self.num_small.unwrap_or(5 * disks),
                self.num_large.unwrap_or(2 * disks),
            ),
        })
    }

    /// The large stream's pattern, the I/Os per sequential stream and the
    /// share of writes.
    fn stream_options(&self) -> Result<(LargeType, u32, u32), String> {
        let large_type = self.large_type.unwrap_or(LargeType::Rand);
        if self.num_streamio.is_some() && large_type != LargeType::Seq {
            return Err("--num-streamio sets the outstanding I/Os of each sequential stream; it needs --large-type seq".into());
        }
        let num_streamio = self.num_streamio.unwrap_or(4);
        if num_streamio == 0 || num_streamio > 1024 {
            return Err("--num-streamio must be 1..1024".into());
        }
        let write_pct = self.write_pct.unwrap_or(0);
        if write_pct > 100 {
            return Err(format!(
                "--write {write_pct} is not a percentage; use 0..100"
            ));
        }
        Ok((large_type, num_streamio, write_pct))
    }

    /// Measured time of each point: 60 s, 240 s for `--run dss`.
    fn duration(&self) -> Result<Duration, String> {
        let duration = self
            .duration
            .unwrap_or(Duration::from_secs(if self.run == RunKind::Dss {
                240
            } else {
                60
            }));
        if duration.is_zero() {
            return Err("--duration must be > 0 (e.g. 60s)".into());
        }
        Ok(duration)
    }

    /// The test name prefixes file names: letters, digits, '-', '_', '.'.
    fn check_test_name(&self) -> Result<(), String> {
        if self.test.is_empty()
            || !self
                .test
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
        {
            return Err(format!(
                "--test '{}' names output files: use letters, digits, '-', '_' or '.'",
                self.test
            ));
        }
        Ok(())
    }

    /// Small and large I/O sizes, both fit for direct I/O.
    fn io_sizes(&self) -> Result<(u64, u64), String> {
        let size_small = self.size_small.unwrap_or(8 << 10);
        let size_large = self.size_large.unwrap_or(1 << 20);
        for (flag, bs) in [("--size-small", size_small), ("--size-large", size_large)] {
            if bs == 0 || bs % 4096 != 0 || bs > (64 << 20) {
                return Err(format!(
                    "{flag} {} does not suit direct I/O; use a multiple of 4k up to 64m (e.g. 8k, 1m)",
                    ByteSize(bs)
                ));
            }
        }
        Ok((size_small, size_large))
    }
}

/// Loads within [`MAX_LOAD`], and a matrix with at least one point.
fn check_loads(matrix: MatrixKind, num_small: u32, num_large: u32) -> Result<(), String> {
    if num_small > MAX_LOAD || num_large > MAX_LOAD {
        return Err(format!(
            "--num-small/--num-large go up to {MAX_LOAD} outstanding I/Os"
        ));
    }
    match matrix {
        MatrixKind::Row if num_small == 0 => {
            Err("--matrix row varies the small load from 1 to --num-small, but --num-small is 0: nothing to measure; give --num-small N".into())
        }
        MatrixKind::Col if num_large == 0 => {
            Err("--matrix col varies the large load from 1 to --num-large, but --num-large is 0: nothing to measure; give --num-large N".into())
        }
        _ if num_small == 0 && num_large == 0 => Err(format!(
            "--matrix {} with --num-small 0 and --num-large 0 has no point to measure; give at least one of them",
            format!("{matrix:?}").to_lowercase()
        )),
        _ => Ok(()),
    }
}

/// Which stream of a point a job belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Stream {
    Small,
    Large,
}

impl MatrixConfig {
    /// Whether any point has large I/O.
    pub fn has_large(&self) -> bool {
        self.points.iter().any(|p| p.1 > 0)
    }

    /// Whether any point has small I/O.
    pub fn has_small(&self) -> bool {
        self.points.iter().any(|p| p.0 > 0)
    }

    /// The spec the targets are opened with: both sizes, writes if any.
    pub fn open_spec(&self) -> JobSpec {
        let mut sizes = Vec::new();
        if self.has_small() {
            sizes.push((self.size_small, 1));
        }
        if self.has_large() && !sizes.iter().any(|s| s.0 == self.size_large) {
            sizes.push((self.size_large, 1));
        }
        if sizes.is_empty() {
            sizes.push((self.size_small, 1));
        }
        JobSpec {
            name: self.test.clone(),
            targets: self.targets.clone(),
            layout: self.layout,
            stripe: self.stripe,
            rw: if self.write_pct > 0 {
                Rw::Randrw
            } else {
                Rw::Randread
            },
            mix_read: 100 - self.write_pct,
            bs: sizes[0].0,
            bs_split: Some(BsSplit(sizes)),
            offset: self.offset,
            size: self.size,
            engine: self.engine,
            direct: true,
            seed: self.seed,
            allow_overwrite: self.allow_overwrite,
            allow_destroy: self.allow_destroy,
            ..Default::default()
        }
    }

    fn base(&self, name: &str, bs: u64, rw: Rw, threads: u32, qd: u32, seed: u64) -> JobSpec {
        JobSpec {
            name: name.into(),
            bs,
            bs_split: None,
            rw,
            threads,
            qd,
            runtime: self.duration,
            ramp: self.ramp,
            seed,
            ..self.open_spec()
        }
    }

    /// The jobs of point `index` (small outstanding `s`, large `l`).
    pub fn point_jobs(&self, index: usize, s: u32, l: u32) -> Vec<(Stream, Arc<JobSpec>)> {
        let seed = |k: u64| {
            let mut z = self.seed ^ ((index as u64) << 20) ^ (k << 56);
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        };
        let rand_rw = if self.write_pct > 0 {
            Rw::Randrw
        } else {
            Rw::Randread
        };
        let mut jobs = Vec::new();
        if s > 0 {
            let (t, q) = split(s, self.engine, self.max_threads);
            jobs.push((
                Stream::Small,
                Arc::new(self.base("small", self.size_small, rand_rw, t, q, seed(1))),
            ));
        }
        if l > 0 {
            match self.large_type {
                LargeType::Rand => {
                    let (t, q) = split(l, self.engine, self.max_threads);
                    jobs.push((
                        Stream::Large,
                        Arc::new(self.base("large", self.size_large, rand_rw, t, q, seed(2))),
                    ));
                }
                LargeType::Seq => {
                    // Each stream is wholly a reader or a writer (as in ORION).
                    let writers = ((l as u64 * self.write_pct as u64 + 50) / 100) as u32;
                    let (sio, one_per_worker) = if self.engine.sync_io() {
                        (1, true)
                    } else {
                        (self.num_streamio, false)
                    };
                    for (n, rw, k) in [(l - writers, Rw::Read, 2), (writers, Rw::Write, 3)] {
                        if n == 0 {
                            continue;
                        }
                        let threads = if one_per_worker {
                            n * self.num_streamio
                        } else {
                            n
                        };
                        jobs.push((
                            Stream::Large,
                            Arc::new(self.base(
                                "large",
                                self.size_large,
                                rw,
                                threads,
                                sio,
                                seed(k),
                            )),
                        ));
                    }
                }
            }
        }
        jobs
    }
}

pub use iolens_core::result::matrix::{MatrixPoint, StreamFigures};

/// The per-second rows of each stream of one point (for the trace file).
#[derive(Clone, Debug, Default)]
pub struct PointRows {
    pub small: Vec<TimeRow>,
    pub large: Vec<TimeRow>,
}

fn dir_figures(d: &DirStats, secs: f64) -> IoFigures {
    let secs = secs.max(1e-9);
    IoFigures {
        ops: d.ops,
        iops: d.ops as f64 / secs,
        bytes: d.bytes,
        mbps: d.bytes as f64 / secs / 1e6,
        lat_us: d.hist.summary(),
    }
}

/// One stream of a point from its jobs: its figures and its per-second rows.
fn stream_figures(
    load: u32,
    jobs: &[(&JobSpec, &JobOutcome, &[TimeRow])],
) -> (StreamFigures, Vec<TimeRow>) {
    let mut read = DirStats::default();
    let mut write = DirStats::default();
    let mut secs: f64 = 0.0;
    for (_, o, _) in jobs {
        read.merge(&o.read);
        write.merge(&o.write);
        secs = secs.max(o.measured_s);
    }
    let ops = read.ops + write.ops;
    let lat_sum = read.hist.sum_ns() + write.hist.sum_ns();
    let mut rows: Vec<TimeRow> = Vec::new();
    for (_, _, rs) in jobs {
        for r in rs.iter() {
            match rows.iter_mut().find(|x| x.sec == r.sec) {
                Some(x) => {
                    // Combine the per-second rates of two jobs of one stream.
                    let merge = |a: &mut iolens_engine::job::RowDir,
                                 b: &iolens_engine::job::RowDir| {
                        let n = a.iops + b.iops;
                        if n > 0.0 {
                            a.lat_mean_us = (a.lat_mean_us * a.iops + b.lat_mean_us * b.iops) / n;
                        }
                        a.lat_p99_us = a.lat_p99_us.max(b.lat_p99_us);
                        a.iops = n;
                        a.mbps += b.mbps;
                    };
                    merge(&mut x.read, &r.read);
                    merge(&mut x.write, &r.write);
                }
                None => rows.push(r.clone()),
            }
        }
    }
    rows.sort_by_key(|r| r.sec);
    let figures = StreamFigures {
        load,
        layout: jobs
            .iter()
            .map(|(s, _, _)| {
                format!(
                    "{}×{} {}",
                    s.threads,
                    s.qd,
                    format!("{:?}", s.rw).to_lowercase()
                )
            })
            .collect(),
        read: dir_figures(&read, secs),
        write: dir_figures(&write, secs),
        measured_s: secs,
        iops: ops as f64 / secs.max(1e-9),
        mbps: (read.bytes + write.bytes) as f64 / secs.max(1e-9) / 1e6,
        lat_mean_us: if ops > 0 {
            lat_sum as f64 / ops as f64 / 1e3
        } else {
            0.0
        },
    };
    (figures, rows)
}

/// Everything a matrix run measured so far.
#[derive(Clone, Debug, Default)]
pub struct MatrixRun {
    pub points: Vec<MatrixPoint>,
    /// The per-second rows of each point, in the order of `points`.
    pub rows: Vec<PointRows>,
    /// The first I/O error; the run stopped there.
    pub error: Option<String>,
    pub interrupted: bool,
}

impl MatrixRun {
    /// Points that ran to their end (the ones the CSV files show).
    pub fn finished(&self) -> impl Iterator<Item = &MatrixPoint> {
        self.points.iter().filter(|p| !p.interrupted)
    }

    /// `summary` of a matrix result: the best points, as in ORION's summary.
    pub fn summary(&self, planned: usize) -> MatrixSummary {
        let best = |pick: &dyn Fn(&MatrixPoint) -> Option<f64>, max: bool| {
            self.finished()
                .filter_map(|p| pick(p).filter(|v| *v > 0.0).map(|v| (p, v)))
                .reduce(|a, b| {
                    if (b.1 > a.1) == max && b.1 != a.1 {
                        b
                    } else {
                        a
                    }
                })
                .map(|(p, v)| BestPoint {
                    value: v,
                    small: p.small_load,
                    large: p.large_load,
                })
        };
        MatrixSummary {
            points_planned: planned as u64,
            points_finished: self.finished().count() as u64,
            max_large_mbps: best(&|p| p.large.as_ref().map(|f| f.mbps), true),
            max_small_iops: best(&|p| p.small.as_ref().map(|f| f.iops), true),
            min_small_lat_us: best(&|p| p.small.as_ref().map(|f| f.lat_mean_us), false),
        }
    }
}

/// What the run is doing, for progress displays and incremental writes.
pub enum MatrixEvent<'a> {
    /// A point starts (1-based `point` of `total`).
    Start {
        point: usize,
        total: usize,
        small: u32,
        large: u32,
    },
    /// About every 50 ms while a point runs.
    Tick,
    /// A point ended; the run so far.
    Done(&'a MatrixRun),
}

/// Reads `cfg.cache_size` bytes of large random I/O, not measured (ORION's
/// cache warming), in short jobs until enough was read; gives up after five
/// minutes on a slow device. Returns the bytes read.
fn warm_cache(
    cfg: &MatrixConfig,
    targets: &Arc<TargetSet>,
    index: usize,
    interrupt: &AtomicBool,
) -> Result<u64, JobError> {
    let (t, q) = split(cfg.num_disks.clamp(1, 64) * 2, cfg.engine, cfg.max_threads);
    let started = Instant::now();
    let mut bytes = 0u64;
    let mut round = 0u64;
    while bytes < cfg.cache_size
        && !interrupt.load(Ordering::Relaxed)
        && started.elapsed() < Duration::from_secs(300)
    {
        let spec = Arc::new(JobSpec {
            name: "warmup".into(),
            rw: Rw::Randread,
            bs: cfg.size_large,
            bs_split: None,
            threads: t,
            qd: q,
            runtime: Duration::from_millis(200),
            ramp: Duration::ZERO,
            seed: cfg.seed ^ 0x3A7_0000 ^ ((index as u64) << 32) ^ round,
            ..cfg.open_spec()
        });
        round += 1;
        let o = run_job(spec, targets.clone(), interrupt, |_| {})?;
        if let Some(e) = o.error {
            return Err(JobError(format!("warming the cache: {e}")));
        }
        bytes += o.read.bytes;
    }
    Ok(bytes)
}

/// Runs the matrix on opened targets. `interrupt` ends it early, keeping
/// every finished point; `observe` sees each event.
pub fn run(
    cfg: &MatrixConfig,
    targets: &Arc<TargetSet>,
    interrupt: &AtomicBool,
    observe: &mut dyn FnMut(MatrixEvent<'_>),
) -> Result<MatrixRun, JobError> {
    let mut run = MatrixRun::default();
    let total = cfg.points.len();
    for (i, &(s, l)) in cfg.points.iter().enumerate() {
        if interrupt.load(Ordering::Relaxed) {
            run.interrupted = true;
            break;
        }
        observe(MatrixEvent::Start {
            point: i + 1,
            total,
            small: s,
            large: l,
        });
        let warmup_bytes = if cfg.cache_size > 0 {
            warm_cache(cfg, targets, i, interrupt)?
        } else {
            0
        };
        if interrupt.load(Ordering::Relaxed) {
            run.interrupted = true;
            break;
        }
        let jobs = cfg.point_jobs(i, s, l);
        let specs: Vec<Arc<JobSpec>> = jobs.iter().map(|j| j.1.clone()).collect();
        let cpu0 = iolens_probe::process_cpu();
        let t0 = Instant::now();
        let runs = run_together(&specs, targets, interrupt, || observe(MatrixEvent::Tick))?;
        let cpu = iolens_probe::process_cpu().since(&cpu0);
        let stream = |which: Stream, load: u32| {
            let parts: Vec<_> = jobs
                .iter()
                .zip(&runs)
                .filter(|(j, _)| j.0 == which)
                .map(|(j, r)| (&*j.1, &r.outcome, r.rows.as_slice()))
                .collect();
            (!parts.is_empty()).then(|| stream_figures(load, &parts))
        };
        let (small, small_rows) = stream(Stream::Small, s).unzip();
        let (large, large_rows) = stream(Stream::Large, l).unzip();
        let error = runs.iter().find_map(|r| r.outcome.error.clone());
        let cut = runs.iter().any(|r| r.outcome.interrupted) || error.is_some();
        // The device view of the job that measured longest covers the point.
        let longest = runs
            .iter()
            .max_by(|a, b| a.outcome.measured_s.total_cmp(&b.outcome.measured_s));
        run.points.push(MatrixPoint {
            point: i + 1,
            small_load: s,
            large_load: l,
            measured_s: longest.map_or(0.0, |r| r.outcome.measured_s),
            wall_s: t0.elapsed().as_secs_f64(),
            small,
            large,
            device: longest.and_then(|r| device_total(&r.outcome.disks)),
            cpu_user_s: cpu.user_s,
            cpu_sys_s: cpu.sys_s,
            warmup_bytes,
            interrupted: cut,
        });
        run.rows.push(PointRows {
            small: small_rows.unwrap_or_default(),
            large: large_rows.unwrap_or_default(),
        });
        if error.is_some() {
            run.error = error;
        }
        if interrupt.load(Ordering::Relaxed) {
            run.interrupted = true;
        }
        observe(MatrixEvent::Done(&run));
        if run.error.is_some() || run.interrupted {
            break;
        }
    }
    Ok(run)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::assert_refused;

    /// ORION's defaults on one target.
    fn opts() -> MatrixOptions {
        let targets = vec!["/tmp/a".into()];
        MatrixOptions {
            targets,
            ..Default::default()
        }
    }

    /// `o` as `--run advanced --matrix m`.
    fn advanced(o: &mut MatrixOptions, m: Option<MatrixKind>) -> &mut MatrixOptions {
        (o.run, o.matrix) = (RunKind::Advanced, m);
        o
    }

    #[test]
    fn levels_are_dense_then_quarter_octaves() {
        assert_eq!(levels(0), Vec::<u32>::new());
        assert_eq!(levels(5), vec![1, 2, 3, 4, 5]);
        assert_eq!(levels(20), (1..=20).collect::<Vec<_>>());
        let l = levels(100);
        assert_eq!(&l[20..], &[24, 28, 32, 40, 48, 56, 64, 80, 96, 100]);
        assert!(l.windows(2).all(|w| w[0] < w[1]));
    }

    /// The matrix of `opts()` changed by `edit`.
    fn resolved(edit: impl FnOnce(&mut MatrixOptions)) -> MatrixConfig {
        let mut o = opts();
        edit(&mut o);
        o.resolve().unwrap()
    }

    #[test]
    fn orion_runs_map_to_their_matrices() {
        let simple = resolved(|o| o.run = RunKind::Simple);
        assert_eq!(simple.matrix, MatrixKind::Basic);
        // One disk: small 1..5 alone, then large 1..2 alone.
        assert_eq!(
            simple.points,
            vec![(1, 0), (2, 0), (3, 0), (4, 0), (5, 0), (0, 1), (0, 2)]
        );
        let normal = resolved(|o| o.run = RunKind::Normal);
        assert_eq!(normal.points.len(), 6 * 3 - 1);
        assert_eq!(normal.points[0], (1, 0));
        let oltp = resolved(|o| (o.run, o.num_small) = (RunKind::Oltp, Some(3)));
        assert_eq!(oltp.points, vec![(1, 0), (2, 0), (3, 0)]);
        let dss = resolved(|o| o.run = RunKind::Dss);
        assert_eq!(dss.points, vec![(0, 1), (0, 2)]);
        assert_eq!(dss.duration, Duration::from_secs(240));
    }

    #[test]
    fn advanced_matrices_have_orions_shapes() {
        let adv = |m, s: Option<u32>, l: Option<u32>| {
            MatrixOptions {
                run: RunKind::Advanced,
                matrix: Some(m),
                num_small: s,
                num_large: l,
                ..opts()
            }
            .resolve()
        };
        assert_eq!(
            adv(MatrixKind::Row, Some(2), Some(1)).unwrap().points,
            vec![(0, 1), (1, 1), (2, 1)]
        );
        assert_eq!(
            adv(MatrixKind::Col, Some(2), Some(2)).unwrap().points,
            vec![(2, 0), (2, 1), (2, 2)]
        );
        assert_eq!(
            adv(MatrixKind::Max, Some(2), Some(1)).unwrap().points,
            vec![(0, 1), (1, 1), (2, 1), (2, 0)]
        );
        assert_eq!(
            adv(MatrixKind::Point, Some(3), Some(0)).unwrap().points,
            vec![(3, 0)]
        );
        let d = adv(MatrixKind::Detailed, Some(2), Some(1)).unwrap();
        assert_eq!(d.points, vec![(1, 0), (2, 0), (0, 1), (1, 1), (2, 1)]);
    }

    #[test]
    fn impossible_matrices_are_refused_with_the_fix() {
        let refused = |edit: fn(&mut MatrixOptions), fix| {
            assert_refused(opts(), edit, MatrixOptions::resolve, fix)
        };
        refused(
            |o| advanced(o, Some(MatrixKind::Point)).num_small = Some(4),
            "--num-large",
        );
        refused(
            |o| o.num_large = Some(3),
            "--num-large does not go with --run simple",
        );
        refused(
            |o| advanced(o, Some(MatrixKind::Row)).num_small = Some(0),
            "nothing to measure",
        );
        refused(
            |o| (advanced(o, None).num_small, o.num_large) = (Some(0), Some(0)),
            "no point",
        );
        refused(
            |o| advanced(o, None).num_streamio = Some(2),
            "--large-type seq",
        );
        refused(
            |o| (o.run, o.num_large) = (RunKind::Oltp, Some(1)),
            "--run oltp",
        );
        refused(|o| advanced(o, None).write_pct = Some(120), "--write");
    }

    #[test]
    fn seq_streams_are_readers_or_writers_with_their_depth() {
        let c = MatrixOptions {
            run: RunKind::Advanced,
            matrix: Some(MatrixKind::Point),
            num_small: Some(2),
            num_large: Some(4),
            large_type: Some(LargeType::Seq),
            num_streamio: Some(3),
            write_pct: Some(25),
            ..opts()
        }
        .resolve()
        .unwrap();
        let jobs = c.point_jobs(0, 2, 4);
        assert_eq!(jobs.len(), 3);
        assert_eq!(jobs[0].0, Stream::Small);
        assert_eq!(jobs[0].1.rw, Rw::Randrw);
        assert_eq!(jobs[0].1.mix_read, 75);
        let (r, w) = (&jobs[1].1, &jobs[2].1);
        assert_eq!((r.rw, r.threads, r.qd), (Rw::Read, 3, 3));
        assert_eq!((w.rw, w.threads, w.qd), (Rw::Write, 1, 3));
        assert_eq!(r.bs, 1 << 20);
    }
}
