//! The command line, as typed (clap definitions), and the conversions of
//! its value enums into the library's types (written once, here).
//! Validation and normalization into typed job descriptions happen in the
//! commands.

use clap::{Args, Parser, Subcommand, ValueEnum};
use iolens_core::{ByteSize, DurationArg};
use iolens_engine::dist::Distribution;
use iolens_engine::engines::{parse_errno, Caps, FaultDelay, FaultOptions, UringOptions};
use iolens_engine::spec::BsSplit;
use iolens_engine::{EngineKind, Layout, Rw};
use std::path::PathBuf;

/// Storage benchmark that looks at storage through the lens of a database.
#[derive(Parser, Debug)]
#[command(name = "iolens", version, about, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// The whole picture from one command: raw calibration, a database run, and why they differ.
    Assess(crate::cmd_assess::AssessArgs),
    /// One raw I/O workload point against files or block devices (fio's job, in fio's words).
    Run(RunArgs),
    /// Run a command over a plan of points (axes or a list) from a TOML file, one result per point.
    Sweep(crate::cmd_sweep::SweepArgs),
    /// Tables, knees, charts and an HTML page from result directories (any kind, sweeps too).
    Report(crate::cmd_report::ReportArgs),
    /// Systems or configurations side by side, with ratios against the first.
    Compare(crate::cmd_compare::CompareArgs),
    /// max_iops, latency and max_mbps the open way: ladders of outstanding reads, repeated over trials.
    Calibrate(crate::cmd_calibrate::CalibrateArgs),
    /// ORION's matrix of small random and large I/O streams, with ORION's output files.
    Matrix(crate::cmd_matrix::MatrixArgs),
    /// The SLOB method on PostgreSQL: storage seen through a database's buffer cache.
    Db(crate::cmd_db::DbArgs),
}

/// Where results go and how they are shown (shared by every measuring command).
#[derive(Args, Debug, Clone)]
pub struct OutputArgs {
    /// Name of the run (used in the result directory name).
    #[arg(long)]
    pub name: Option<String>,
    /// Result directory (default: iolens-results/<UTC timestamp>-<name>/).
    #[arg(long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Print result.json to stdout instead of the summary.
    #[arg(long)]
    pub json: bool,
    /// No live progress on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RwArg {
    Read,
    Write,
    Randread,
    Randwrite,
    Randrw,
    Rw,
}

impl From<RwArg> for Rw {
    fn from(a: RwArg) -> Rw {
        match a {
            RwArg::Read => Rw::Read,
            RwArg::Write => Rw::Write,
            RwArg::Randread => Rw::Randread,
            RwArg::Randwrite => Rw::Randwrite,
            RwArg::Randrw => Rw::Randrw,
            RwArg::Rw => Rw::Rw,
        }
    }
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineArg {
    Psync,
    #[value(name = "io_uring", alias = "io-uring", alias = "uring")]
    IoUring,
    Null,
    // The null engine with injected errors, short transfers and latency
    // (--fault-*). No doc comment: clap would switch the help to long form.
    Fault,
}

impl From<EngineArg> for EngineKind {
    fn from(a: EngineArg) -> EngineKind {
        match a {
            EngineArg::Psync => EngineKind::Psync,
            EngineArg::IoUring => EngineKind::IoUring,
            EngineArg::Null => EngineKind::Null,
            EngineArg::Fault => EngineKind::Fault,
        }
    }
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayoutArg {
    Concat,
    Raid0,
}

impl From<LayoutArg> for Layout {
    fn from(a: LayoutArg) -> Layout {
        match a {
            LayoutArg::Concat => Layout::Concat,
            LayoutArg::Raid0 => Layout::Raid0,
        }
    }
}

/// io_uring's own options.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "io_uring engine options")]
pub struct UringArgs {
    /// io_uring: hand queued I/Os to the kernel once this many are queued (fio's iodepth_batch_submit).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub submit_batch: u32,
}

impl From<&UringArgs> for UringOptions {
    fn from(a: &UringArgs) -> UringOptions {
        UringOptions {
            submit_batch: a.submit_batch,
        }
    }
}

/// The fault engine's own options (`--engine fault`).
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "fault engine options")]
pub struct FaultArgs {
    /// Fail these operations (1 = a worker's first request) with --fault-errno.
    #[arg(long, value_name = "N[,N..]", value_delimiter = ',')]
    pub fault_error_at: Vec<u64>,
    /// The error injected by --fault-error-at: EIO (default), ENOSPC, EAGAIN, ... or a number.
    #[arg(long, value_name = "ERRNO", value_parser = parse_errno)]
    pub fault_errno: Option<i32>,
    /// Cut these reads/writes short: they transfer half their length.
    #[arg(long, value_name = "N[,N..]", value_delimiter = ',')]
    pub fault_short_at: Vec<u64>,
    /// Add latency: DURATION at every operation, @every:N of them, or @N,N.. (e.g. 5ms@every:100).
    #[arg(long, value_name = "DUR[@WHEN]")]
    pub fault_delay: Option<FaultDelay>,
}

impl FaultArgs {
    /// The fault options of a job with `engine`: set for an engine that
    /// injects faults, or when a --fault-* flag was given (validation then
    /// says which engine they need).
    pub fn options(&self, engine: EngineKind) -> Option<FaultOptions> {
        let given = !self.fault_error_at.is_empty()
            || self.fault_errno.is_some()
            || !self.fault_short_at.is_empty()
            || self.fault_delay.is_some();
        (given || engine.caps().has(Caps::INJECTS_FAULTS)).then(|| FaultOptions {
            error_at: self.fault_error_at.clone(),
            errno: self.fault_errno.unwrap_or(FaultOptions::default().errno),
            short_at: self.fault_short_at.clone(),
            delay: self.fault_delay.clone(),
        })
    }
}

/// `iolens run`.
#[derive(Args, Debug, Clone)]
pub struct RunArgs {
    /// File or block device to use (repeatable). A missing file is created and filled to --size.
    #[arg(long = "target", short = 't', value_name = "PATH")]
    pub targets: Vec<PathBuf>,
    /// How several targets form one address space.
    #[arg(long, value_enum, default_value = "concat")]
    pub layout: LayoutArg,
    /// Stripe size for --layout raid0.
    #[arg(long, default_value = "1m")]
    pub stripe: ByteSize,
    /// Access pattern.
    #[arg(long, value_enum, default_value = "randread")]
    pub rw: RwArg,
    /// Share of reads in randrw/rw, percent.
    #[arg(long, default_value_t = 70, value_name = "PCT")]
    pub mix_read: u32,
    /// Block size.
    #[arg(long, default_value = "8k")]
    pub bs: ByteSize,
    /// Several block sizes with weights, e.g. 4k/50:64k/50 (overrides --bs).
    #[arg(long, value_name = "SIZE/PCT:...")]
    pub bs_split: Option<BsSplit>,
    /// Start of the region used in each target.
    #[arg(long, default_value = "0")]
    pub offset: ByteSize,
    /// Length of the region used in each target (and the size of files created).
    #[arg(long)]
    pub size: Option<ByteSize>,
    /// I/O engine.
    #[arg(long, value_enum, default_value = "io_uring")]
    pub engine: EngineArg,
    /// Outstanding I/Os per worker (io_uring, null).
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub qd: u32,
    /// Number of workers.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub threads: u32,
    /// Go through the OS page cache (default: direct I/O).
    #[arg(long)]
    pub buffered: bool,
    /// Measured time.
    #[arg(long, default_value = "30s")]
    pub runtime: DurationArg,
    /// Time run before measuring starts (not counted).
    #[arg(long, default_value = "0s")]
    pub ramp: DurationArg,
    /// Seed for offsets and data (same seed, same offsets).
    #[arg(long, default_value_t = 0x10_1E45)]
    pub seed: u64,
    /// uniform, zipf:THETA, pareto:H or hotspot:PCT@OFFSET+SIZE.
    #[arg(long, default_value = "uniform")]
    pub distribution: Distribution,
    /// Total IOPS to issue (open loop: latency counts from each I/O's intended start).
    #[arg(long, value_name = "N")]
    pub rate_iops: Option<u64>,
    /// fsync after every N writes (per worker).
    #[arg(long, value_name = "N")]
    pub fsync: Option<u32>,
    /// fdatasync after every N writes (per worker).
    #[arg(long, value_name = "N")]
    pub fdatasync: Option<u32>,
    /// Stamp written blocks and check every read; a mismatch fails the run.
    #[arg(long)]
    pub verify: bool,
    /// Allow writing to an existing file that iolens did not create.
    #[arg(long)]
    pub allow_overwrite: bool,
    /// Allow writing to a block device (destroys its data; never while mounted).
    #[arg(long)]
    pub allow_destroy: bool,
    #[command(flatten)]
    pub out: OutputArgs,
    #[command(flatten)]
    pub uring: UringArgs,
    #[command(flatten)]
    pub fault: FaultArgs,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn run_parses_fio_vocabulary() {
        let c = Cli::try_parse_from([
            "iolens",
            "run",
            "--target",
            "/tmp/a",
            "--target",
            "/tmp/b",
            "--rw",
            "randrw",
            "--bs-split",
            "4k/50:64k/50",
            "--engine",
            "io_uring",
            "--qd",
            "32",
            "--distribution",
            "zipf:1.2",
            "--runtime",
            "5s",
        ])
        .unwrap();
        let Command::Run(r) = c.command else {
            panic!("not a run command")
        };
        assert_eq!(r.targets.len(), 2);
        assert_eq!(r.qd, 32);
        assert_eq!(r.runtime.0.as_secs(), 5);
        assert_eq!(r.distribution, Distribution::Zipf { theta: 1.2 });
    }

    #[test]
    fn malformed_values_are_rejected_by_the_parser() {
        for bad in [
            ["--bs", "8q"],
            ["--runtime", "soon"],
            ["--distribution", "gauss"],
            ["--engine", "libaio"],
        ] {
            let mut v = vec!["iolens", "run", "--target", "/tmp/a"];
            v.extend(bad);
            assert!(Cli::try_parse_from(v).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn engine_options_parse_into_their_groups() {
        let c = Cli::try_parse_from([
            "iolens",
            "run",
            "--engine",
            "fault",
            "--submit-batch",
            "2",
            "--fault-error-at",
            "3,9",
            "--fault-errno",
            "ENOSPC",
            "--fault-delay",
            "5ms@every:100",
        ])
        .unwrap();
        let Command::Run(r) = c.command else {
            panic!("not a run command")
        };
        assert_eq!(EngineKind::from(r.engine), EngineKind::Fault);
        assert_eq!(UringOptions::from(&r.uring).submit_batch, 2);
        let f = r.fault.options(EngineKind::Fault).unwrap();
        assert_eq!(f.error_at, [3, 9]);
        assert_eq!(f.errno, libc::ENOSPC);
        assert_eq!(f.delay.unwrap().to_string(), "5ms@every:100");
        assert!(r.fault.options(EngineKind::Null).is_some());
        let plain = FaultArgs {
            fault_error_at: vec![],
            fault_errno: None,
            fault_short_at: vec![],
            fault_delay: None,
        };
        assert!(plain.options(EngineKind::Null).is_none());
        assert_eq!(
            plain.options(EngineKind::Fault),
            Some(FaultOptions::default())
        );
    }
}
