//! The options of `iolens matrix` (ORION's parameters) and their
//! conversion into the resolver's options.

use crate::args::{EngineArg, LayoutArg, OutputArgs};
use clap::{Args, ValueEnum};
use iolens_calibrate::matrix::{LargeType, MatrixKind, MatrixOptions, RunKind};
use iolens_core::{ByteSize, DurationArg};
use std::path::PathBuf;

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

impl MatrixArgs {
    /// What the user typed, for the resolver.
    pub fn options(&self) -> MatrixOptions {
        let a = self;
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
}
