//! `iolens matrix`: options → resolved matrix (ORION's runs and defaults) →
//! targets (opened once) → points → ORION's files plus `result.json`, all
//! rewritten after every point so an interrupt keeps the finished ones.

use crate::args::{EngineArg, LayoutArg, OutputArgs};
use crate::cmd_run::target_infos;
use crate::errors::{usage, UsageError};
use crate::output::{progress_shown, result_dir, Progress};
use anyhow::Result;
use clap::{Args, ValueEnum};
use iolens_calibrate::matrix::{self, LargeType, MatrixEvent, MatrixKind, MatrixOptions, RunKind};
use iolens_calibrate::orion;
use iolens_core::result::matrix::{MatrixFiles, MatrixResult};
use iolens_core::{ByteSize, DurationArg, Status};
use iolens_engine::TargetSet;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunArg {
    Simple,
    Normal,
    Advanced,
    Oltp,
    Dss,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatrixArg {
    Basic,
    Detailed,
    Row,
    #[value(alias = "column")]
    Col,
    Max,
    Point,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LargeTypeArg {
    Rand,
    Seq,
}

/// `iolens matrix`.
#[derive(Args, Debug, Clone)]
pub struct MatrixArgs {
    /// File or block device (repeatable; ORION's LUNs). Only read unless --write; a missing file is created with --size.
    #[arg(long = "target", short = 't', value_name = "PATH", required = true)]
    pub targets: Vec<PathBuf>,
    /// simple: small and large I/O each alone; normal: also combined; oltp: small only; dss: large only; advanced: as given.
    #[arg(long, value_enum, default_value = "simple")]
    pub run: RunArg,
    /// Points for --run advanced: basic, detailed (default), row, col, max or point.
    #[arg(long, value_enum)]
    pub matrix: Option<MatrixArg>,
    /// Most small outstanding I/Os (the fixed small load for --matrix col and point).
    #[arg(long, value_name = "N")]
    pub num_small: Option<u32>,
    /// Most large outstanding I/Os or streams (the fixed large load for --matrix row and point).
    #[arg(long, value_name = "N")]
    pub num_large: Option<u32>,
    /// Small I/O size [default: 8k].
    #[arg(long)]
    pub size_small: Option<ByteSize>,
    /// Large I/O size [default: 1m].
    #[arg(long)]
    pub size_large: Option<ByteSize>,
    /// Large I/O pattern: rand (random) or seq (sequential streams) [default: rand].
    #[arg(long, value_enum, visible_alias = "type")]
    pub large_type: Option<LargeTypeArg>,
    /// Outstanding I/Os per sequential stream (--large-type seq) [default: 4].
    #[arg(long = "num-streamio", value_name = "N")]
    pub num_streamio: Option<u32>,
    /// Share of writes, percent (destroys data: needs --allow-overwrite or --allow-destroy).
    #[arg(long, value_name = "PCT")]
    pub write: Option<u32>,
    /// How several targets form one address space (ORION's -simulate) [default: concat].
    #[arg(long, value_enum, visible_alias = "simulate")]
    pub layout: Option<LayoutArg>,
    /// Stripe size for --layout raid0 [default: 1m].
    #[arg(long)]
    pub stripe: Option<ByteSize>,
    /// Array cache to warm before each point with large random reads (not measured).
    #[arg(long)]
    pub cache_size: Option<ByteSize>,
    /// Measured time of each point [default: 60s; 240s for --run dss].
    #[arg(long)]
    pub duration: Option<DurationArg>,
    /// Unmeasured time at the start of each point.
    #[arg(long, default_value = "0s")]
    pub ramp: DurationArg,
    /// Number of disks behind the targets: sets the default loads (5× small, 2× large) [default: number of targets].
    #[arg(long, value_name = "N")]
    pub num_disks: Option<u32>,
    /// Test name: prefix of the ORION files (<test>_<YYYYMMDD_HHMM>_summary.txt, ...).
    #[arg(long, default_value = "orion")]
    pub test: String,
    /// Start of the region used in each target.
    #[arg(long, default_value = "0")]
    pub offset: ByteSize,
    /// Length of the region used in each target (and the size of files created).
    #[arg(long)]
    pub size: Option<ByteSize>,
    /// Seed for offsets and data (same seed, same offsets).
    #[arg(long, default_value_t = 0x10_1E45)]
    pub seed: u64,
    /// I/O engine: io_uring or psync (one worker per outstanding I/O).
    #[arg(long, value_enum, default_value = "io_uring")]
    pub engine: EngineArg,
    /// Most workers per stream (default: the number of CPUs).
    #[arg(long, value_name = "N")]
    pub max_threads: Option<u32>,
    /// Allow writing to an existing file that iolens did not create.
    #[arg(long)]
    pub allow_overwrite: bool,
    /// Allow writing to a block device (destroys its data; never while mounted).
    #[arg(long)]
    pub allow_destroy: bool,
    #[command(flatten)]
    pub out: OutputArgs,
}

/// What the user typed, for the resolver.
pub fn options(a: &MatrixArgs) -> MatrixOptions {
    MatrixOptions {
        targets: a.targets.clone(),
        test: a.test.clone(),
        run: match a.run {
            RunArg::Simple => RunKind::Simple,
            RunArg::Normal => RunKind::Normal,
            RunArg::Advanced => RunKind::Advanced,
            RunArg::Oltp => RunKind::Oltp,
            RunArg::Dss => RunKind::Dss,
        },
        matrix: a.matrix.map(|m| match m {
            MatrixArg::Basic => MatrixKind::Basic,
            MatrixArg::Detailed => MatrixKind::Detailed,
            MatrixArg::Row => MatrixKind::Row,
            MatrixArg::Col => MatrixKind::Col,
            MatrixArg::Max => MatrixKind::Max,
            MatrixArg::Point => MatrixKind::Point,
        }),
        num_small: a.num_small,
        num_large: a.num_large,
        size_small: a.size_small.map(|s| s.0),
        size_large: a.size_large.map(|s| s.0),
        large_type: a.large_type.map(|t| match t {
            LargeTypeArg::Rand => LargeType::Rand,
            LargeTypeArg::Seq => LargeType::Seq,
        }),
        num_streamio: a.num_streamio,
        write_pct: a.write,
        layout: a.layout.map(Into::into),
        stripe: a.stripe.map(|s| s.0),
        cache_size: a.cache_size.map(|s| s.0),
        duration: a.duration.map(|d| d.0),
        ramp: a.ramp.0,
        num_disks: a.num_disks,
        offset: a.offset.0,
        size: a.size.map(|s| s.0),
        seed: a.seed,
        engine: a.engine.into(),
        max_threads: a
            .max_threads
            .unwrap_or_else(|| MatrixOptions::default().max_threads),
        allow_overwrite: a.allow_overwrite,
        allow_destroy: a.allow_destroy,
    }
}

/// The command line as typed, for the summary (arguments with spaces quoted).
fn commandline() -> String {
    std::env::args()
        .map(|a| {
            if a.is_empty() || a.contains(char::is_whitespace) {
                format!("'{a}'")
            } else {
                a
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn run(a: MatrixArgs) -> Result<u8> {
    let cfg = match options(&a).resolve() {
        Ok(c) => c,
        Err(e) => return usage(e),
    };
    let targets = Arc::new(TargetSet::open(&cfg.open_spec())?);
    let name = a.out.name.clone().unwrap_or_else(|| cfg.test.clone());
    let dir = result_dir(&a.out, &name)?;
    let prefix = format!("{}_{}", cfg.test, orion::stamp(SystemTime::now()));
    let [f_summary, f_iops, f_mbps, f_lat, f_trace] = orion::file_names(&prefix);
    let cmdline = commandline();
    let infos = target_infos(&targets);
    let mut doc = MatrixResult::new("matrix", &name);
    doc.targets = infos.clone();
    doc.config = serde_json::to_value(&cfg)?;
    doc.extra.files = Some(MatrixFiles {
        summary: f_summary.clone(),
        iops: f_iops.clone(),
        mbps: f_mbps.clone(),
        lat: f_lat.clone(),
        trace: f_trace.clone(),
    });
    dir.write_result(&doc)?;
    let mut trace = dir.append(&f_trace)?;
    trace.write_all(orion::trace_header(&cfg, &cmdline).as_bytes())?;

    let write_files = |run: &matrix::MatrixRun,
                       doc: &MatrixResult,
                       status: &str,
                       warnings: &[String]|
     -> Result<String> {
        dir.write_file(&f_iops, orion::iops_csv(&cfg, run).as_bytes())?;
        dir.write_file(&f_mbps, orion::mbps_csv(&cfg, run).as_bytes())?;
        dir.write_file(&f_lat, orion::lat_csv(&cfg, run).as_bytes())?;
        let text = orion::summary_txt(&cfg, run, &infos, &cmdline, status, warnings);
        dir.write_file(&f_summary, text.as_bytes())?;
        dir.write_result(doc)?;
        Ok(text)
    };

    let total = cfg.points.len();
    // The bar counts milliseconds of planned work, so that its ETA moves
    // within a point as well as between points.
    let planned_ms = ((cfg.ramp + cfg.duration).as_secs_f64() * 1e3) as u64;
    let progress = Progress::counted(progress_shown(a.out.quiet), total as u64 * planned_ms);
    let started = Instant::now();
    let mut point_started = Instant::now();
    let mut current = (0usize, 0u32, 0u32);
    let mut write_error: Option<anyhow::Error> = None;
    let outcome = matrix::run(
        &cfg,
        &targets,
        &iolens_core::interrupt::STOP,
        &mut |ev| match ev {
            MatrixEvent::Start {
                point,
                small,
                large,
                ..
            } => {
                current = (point, small, large);
                point_started = Instant::now();
            }
            MatrixEvent::Tick => {
                let in_point = (point_started.elapsed().as_millis() as u64).min(planned_ms);
                progress.set_position((current.0 as u64 - 1) * planned_ms + in_point);
                progress.line(&format!(
                    "{}/{total} Small={} Large={}",
                    current.0, current.1, current.2
                ));
            }
            MatrixEvent::Done(run) => {
                if let (Some(p), Some(rows)) = (run.points.last(), run.rows.last()) {
                    let _ = trace.write_all(orion::trace_point(total, p, rows).as_bytes());
                    let _ = trace.flush();
                }
                doc.duration_s = started.elapsed().as_secs_f64();
                doc.extra.points = run.points.clone();
                if let Err(e) = write_files(run, &doc, "running", &[]) {
                    write_error.get_or_insert(e);
                }
            }
        },
    )
    .map_err(|e| UsageError(e.0))?;
    progress.clear();
    if let Some(e) = write_error {
        return Err(e);
    }

    doc.duration_s = started.elapsed().as_secs_f64();
    doc.status = Status::ended(outcome.error.is_some(), outcome.interrupted);
    doc.error = outcome.error.clone();
    doc.summary = Some(outcome.summary(total));
    doc.extra.points = outcome.points.clone();
    let warnings = orion::warnings(&cfg, &outcome);
    doc.extra.warnings = Some(warnings.clone());
    let status = serde_json::to_value(doc.status)?;
    let text = write_files(&outcome, &doc, status.as_str().unwrap_or(""), &warnings)?;
    dir.write_file("summary.txt", text.as_bytes())?;
    if a.out.json {
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!("{text}");
        println!("result: {} ({prefix}_*)", dir.path().display());
    }
    Ok(doc.status.exit_code() as u8)
}
