//! `iolens calibrate`: options → validated calibration → the library's
//! calibration ([`iolens_calibrate::command::calibrate`]) with its progress
//! drawn → the summary or the document printed.

use crate::args::{EngineArg, LayoutArg, OutputArgs};
use crate::errors::usage;
use crate::output::{print_result, Progress};
use anyhow::Result;
use clap::Args;
use iolens_calibrate::calibrate::CalibrateConfig;
use iolens_calibrate::command::calibrate;
use iolens_core::{ByteSize, DurationArg};
use std::path::PathBuf;

/// `iolens calibrate`.
#[derive(Args, Debug, Clone)]
pub struct CalibrateArgs {
    /// File or block device to calibrate (repeatable). Only read; a missing file is created with --size.
    #[arg(long = "target", short = 't', value_name = "PATH", required = true)]
    pub targets: Vec<PathBuf>,
    /// How several targets form one address space.
    #[arg(long, value_enum, default_value = "concat")]
    pub layout: LayoutArg,
    /// Stripe size for --layout raid0.
    #[arg(long, default_value = "1m")]
    pub stripe: ByteSize,
    /// Start of the region used in each target.
    #[arg(long, default_value = "0")]
    pub offset: ByteSize,
    /// Length of the region used in each target (and the size of files created).
    #[arg(long)]
    pub size: Option<ByteSize>,
    /// Size of the small random reads that give max_iops.
    #[arg(long, default_value = "8k")]
    pub small_bs: ByteSize,
    /// Size of the large random reads that give max_mbps.
    #[arg(long, default_value = "1m")]
    pub large_bs: ByteSize,
    /// max_iops is the highest IOPS whose mean latency stays within this.
    #[arg(long, default_value = "20ms")]
    pub max_latency: DurationArg,
    /// Repeat the whole measurement N times; each figure is reported with its mean, min, max and CV.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub trials: u32,
    /// Measured time of each ladder step.
    #[arg(long, default_value = "2s")]
    pub step_time: DurationArg,
    /// Unmeasured time at the start of each step (queues fill, caches settle).
    #[arg(long, default_value = "0.5s")]
    pub ramp: DurationArg,
    /// Seed for the offsets (same seed, same offsets).
    #[arg(long, default_value_t = 0x10_1E45)]
    pub seed: u64,
    /// Where the ladders start (N outstanding I/Os instead of 1). A starting hint, nothing more.
    #[arg(long, value_name = "N")]
    pub num_disks: Option<u32>,
    /// Highest number of outstanding I/Os the ladders try.
    #[arg(long, default_value_t = 256, value_name = "N")]
    pub max_outstanding: u32,
    /// Refinement steps between the last two steps of each ladder.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub refine: u32,
    /// A ladder stops when a step gains less than this over the best before it (percent).
    #[arg(long, default_value_t = 3.0, value_name = "PCT")]
    pub min_gain: f64,
    /// I/O engine: io_uring (outstanding I/Os split over few workers) or psync (one worker per I/O).
    #[arg(long, value_enum, default_value = "io_uring")]
    pub engine: EngineArg,
    /// Most workers per step (default: the number of CPUs).
    #[arg(long, value_name = "N")]
    pub max_threads: Option<u32>,
    #[command(flatten)]
    pub out: OutputArgs,
}

/// Turns what the user typed into a validated calibration.
pub fn config(a: &CalibrateArgs) -> Result<CalibrateConfig> {
    let c = CalibrateConfig {
        targets: a.targets.clone(),
        layout: a.layout.into(),
        stripe: a.stripe.0,
        offset: a.offset.0,
        size: a.size.map(|s| s.0),
        small_bs: a.small_bs.0,
        large_bs: a.large_bs.0,
        max_latency: a.max_latency.0,
        trials: a.trials,
        step: a.step_time.0,
        ramp: a.ramp.0,
        seed: a.seed,
        num_disks: a.num_disks,
        max_outstanding: a.max_outstanding,
        refine: a.refine,
        min_gain_pct: a.min_gain,
        engine: a.engine.into(),
        max_threads: a
            .max_threads
            .unwrap_or_else(|| CalibrateConfig::default().max_threads),
    };
    if let Err(e) = c.validate() {
        return usage(e);
    }
    Ok(c)
}

pub fn run(a: CalibrateArgs) -> Result<u8> {
    let cfg = config(&a)?;
    let progress = Progress::new(&a.out);
    let report = calibrate::run(
        &cfg,
        &a.out.output("calibrate"),
        &iolens_core::interrupt::STOP,
        &mut |p| progress.line(&p.to_string()),
    );
    progress.clear();
    let r = report?;
    print_result(&a.out, &r.doc, &r.text, r.dir.display(), r.exit_code())
}
