//! `iolens calibrate`: options → validated calibration → targets (opened
//! once) → ladders → result directory (`result.json` rewritten after every
//! step, `ladder.csv`, `summary.txt`).

use crate::args::{EngineArg, LayoutArg, OutputArgs};
use crate::cmd_run::target_infos;
use crate::errors::{usage, UsageError};
use crate::output::{result_dir, Progress};
use anyhow::Result;
use clap::Args;
use iolens_calibrate::calibrate::{self, CalibrateConfig, Event, IoKind};
use iolens_calibrate::ladder::Phase;
use iolens_core::result::calibrate::CalibrateResult;
use iolens_core::{ByteSize, DurationArg, Status};
use iolens_engine::TargetSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

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
    let targets = Arc::new(TargetSet::open(&cfg.open_spec())?);
    let name = a.out.name.clone().unwrap_or_else(|| "calibrate".into());
    let dir = result_dir(&a.out, &name)?;
    let mut doc = CalibrateResult::new("calibrate", &name);
    doc.targets = target_infos(&targets);
    doc.config = serde_json::to_value(&cfg)?;
    dir.write_result(&doc)?;

    let progress = Progress::new(&a.out);
    let started = Instant::now();
    let mut step_no = 0u32;
    let mut current = String::new();
    let mut step_started = Instant::now();
    let step_s = (cfg.step + cfg.ramp).as_secs_f64();
    let mut write_error = None;
    let cal =
        calibrate::run(
            &cfg,
            &targets,
            &iolens_core::interrupt::STOP,
            &mut |ev| match ev {
                Event::Step {
                    trial,
                    io,
                    phase,
                    outstanding,
                    started,
                } => {
                    step_no += 1;
                    step_started = started;
                    current =
                        format!(
                    "trial {trial}/{} {} reads, {outstanding} outstanding{} (step {step_no})",
                    cfg.trials,
                    if io == IoKind::Small { "small" } else { "large" },
                    if phase == Phase::Refine { ", refining" } else { "" },
                );
                }
                Event::Tick => {
                    let in_step = step_started.elapsed().as_secs_f64();
                    progress.line(&format!(
                        "{current}: {:.0}/{:.0}s",
                        in_step.min(step_s),
                        step_s
                    ));
                }
                Event::Measured(c) => {
                    doc.duration_s = started.elapsed().as_secs_f64();
                    doc.summary = Some(c.summary());
                    doc.extra.ladder = Some(c.points.clone());
                    doc.extra.trials = Some(c.trials.clone());
                    if let Err(e) = dir.write_result(&doc) {
                        write_error.get_or_insert(e);
                    }
                }
            },
        )
        .map_err(|e| UsageError(e.0))?;
    progress.clear();
    if let Some(e) = write_error {
        return Err(e.into());
    }

    doc.duration_s = started.elapsed().as_secs_f64();
    doc.status = Status::ended(cal.error.is_some(), cal.interrupted);
    doc.error = cal.error.clone();
    doc.summary = Some(cal.summary());
    doc.extra.ladder = Some(cal.points.clone());
    doc.extra.trials = Some(cal.trials.clone());
    let warnings = calibrate::warnings(&cfg, &cal);
    doc.extra.warnings = Some(warnings.clone());
    dir.write_result(&doc)?;
    dir.write_file("ladder.csv", calibrate::ladder_csv(&cal).as_bytes())?;
    let status = serde_json::to_value(doc.status)?;
    let text = calibrate::report_text(&cfg, &cal, status.as_str().unwrap_or(""), &warnings);
    dir.write_file("summary.txt", text.as_bytes())?;
    if a.out.json {
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!("{text}");
        println!("result: {}", dir.path().display());
    }
    Ok(doc.status.exit_code() as u8)
}
