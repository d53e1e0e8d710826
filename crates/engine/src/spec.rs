//! The validated description of one raw I/O job (what `iolens run` measures).
//!
//! The CLI turns what the user typed into a [`JobSpec`]; [`JobSpec::validate`]
//! rejects impossible combinations with a message that says what to type
//! instead. Checks that need the targets (alignment, sizes) happen when the
//! targets are opened.

use crate::dist::Distribution;
use crate::engines::{Caps, FaultOptions, UringOptions};
use iolens_core::ByteSize;
use serde::Serialize;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

/// Access pattern, in fio's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Rw {
    Read,
    Write,
    Randread,
    Randwrite,
    Randrw,
    Rw,
}

impl Rw {
    /// Random offsets (as opposed to sequential streams).
    pub fn random(self) -> bool {
        matches!(self, Rw::Randread | Rw::Randwrite | Rw::Randrw)
    }
    /// Mixed reads and writes.
    pub fn mixed(self) -> bool {
        matches!(self, Rw::Randrw | Rw::Rw)
    }
    /// Whether the job writes at all.
    pub fn writes(self) -> bool {
        !matches!(self, Rw::Read | Rw::Randread)
    }
}

/// Which engine does the I/O. What each one can do is declared by the engine
/// itself ([`EngineKind::caps`]); [`crate::engines::dispatch`] maps a kind to
/// its engine type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    /// One synchronous pread/pwrite at a time per worker.
    Psync,
    /// io_uring with `qd` I/Os outstanding per worker.
    IoUring,
    /// No I/O at all: measures the tool itself.
    Null,
    /// The null engine with errors, short transfers and latency injected.
    Fault,
}

impl fmt::Display for EngineKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How several targets form one address space (ORION's `-simulate`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Layout {
    /// One after the other.
    Concat,
    /// Striped in `stripe`-sized chunks, round robin.
    Raid0,
}

/// Block sizes with weights (`--bs-split 4k/50:64k/50`).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BsSplit(pub Vec<(u64, u32)>);

impl FromStr for BsSplit {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || {
            format!("invalid --bs-split '{s}': expected SIZE/WEIGHT pairs separated by ':' (e.g. 4k/50:64k/50)")
        };
        let mut v = Vec::new();
        for part in s.split(':') {
            let (size, w) = part.split_once('/').ok_or_else(bad)?;
            let size = size.parse::<ByteSize>().map_err(|_| bad())?.0;
            let w: u32 = w.trim_end_matches('%').parse().map_err(|_| bad())?;
            if size == 0 {
                return Err(bad());
            }
            if w > 0 {
                v.push((size, w));
            }
        }
        if v.is_empty() {
            return Err(bad());
        }
        Ok(BsSplit(v))
    }
}

/// Every effective option of a raw I/O job (`config` in result.json).
#[derive(Clone, Debug, Serialize)]
pub struct JobSpec {
    pub name: String,
    pub targets: Vec<PathBuf>,
    pub layout: Layout,
    /// Stripe size for raid0, bytes.
    pub stripe: u64,
    pub rw: Rw,
    /// Share of reads in mixed modes, percent.
    pub mix_read: u32,
    /// Block size, bytes (ignored when `bs_split` is set).
    pub bs: u64,
    pub bs_split: Option<BsSplit>,
    /// Start of the region in each target, bytes.
    pub offset: u64,
    /// Length of the region used in each target, bytes (`None`: the rest of the target).
    pub size: Option<u64>,
    pub engine: EngineKind,
    pub qd: u32,
    /// io_uring's options (`submit_batch`).
    #[serde(flatten)]
    pub uring: UringOptions,
    pub threads: u32,
    pub direct: bool,
    #[serde(serialize_with = "secs")]
    pub runtime: Duration,
    #[serde(serialize_with = "secs")]
    pub ramp: Duration,
    pub seed: u64,
    pub distribution: Distribution,
    /// Total IOPS target over all workers (open loop).
    pub rate_iops: Option<u64>,
    /// fsync every N writes per worker.
    pub fsync: Option<u32>,
    /// fdatasync every N writes per worker.
    pub fdatasync: Option<u32>,
    pub verify: bool,
    pub allow_overwrite: bool,
    pub allow_destroy: bool,
    /// The fault engine's options (only with `--engine fault`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fault: Option<FaultOptions>,
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

impl Default for JobSpec {
    fn default() -> Self {
        JobSpec {
            name: "run".into(),
            targets: Vec::new(),
            layout: Layout::Concat,
            stripe: 1 << 20,
            rw: Rw::Randread,
            mix_read: 70,
            bs: 8192,
            bs_split: None,
            offset: 0,
            size: None,
            engine: EngineKind::IoUring,
            qd: 1,
            uring: UringOptions::default(),
            threads: 1,
            direct: true,
            runtime: Duration::from_secs(30),
            ramp: Duration::ZERO,
            seed: 0x10_1E45,
            distribution: Distribution::Uniform,
            rate_iops: None,
            fsync: None,
            fdatasync: None,
            verify: false,
            allow_overwrite: false,
            allow_destroy: false,
            fault: None,
        }
    }
}

impl JobSpec {
    /// Block sizes used, with weights.
    pub fn sizes(&self) -> Vec<(u64, u32)> {
        match &self.bs_split {
            Some(s) => s.0.clone(),
            None => vec![(self.bs, 1)],
        }
    }

    /// Largest block size used.
    pub fn max_bs(&self) -> u64 {
        self.sizes().iter().map(|s| s.0).max().unwrap_or(self.bs)
    }

    /// Smallest block size used.
    pub fn min_bs(&self) -> u64 {
        self.sizes().iter().map(|s| s.0).min().unwrap_or(self.bs)
    }

    /// Share of reads, 0..=100, given the mode.
    pub fn read_pct(&self) -> u32 {
        match self.rw {
            Rw::Read | Rw::Randread => 100,
            Rw::Write | Rw::Randwrite => 0,
            Rw::Randrw | Rw::Rw => self.mix_read,
        }
    }

    /// Checks combinations that are wrong whatever the targets are.
    pub fn validate(&self) -> Result<(), String> {
        self.validate_load()?;
        self.validate_sizes()?;
        self.validate_syncs()?;
        self.validate_checks_and_limits()
    }

    /// Targets, read share, queue depth and threads.
    fn validate_load(&self) -> Result<(), String> {
        let caps = self.engine.caps();
        if self.targets.is_empty() && !caps.has(Caps::NO_STORAGE) {
            return Err("no target: give --target PATH (a file or a block device)".into());
        }
        if self.mix_read > 100 {
            return Err(format!(
                "--mix-read {} is not a percentage; use 0..100",
                self.mix_read
            ));
        }
        if self.qd == 0 {
            return Err("--qd must be at least 1".into());
        }
        if self.qd > 1 && caps.has(Caps::SYNC_IO) {
            return Err(format!(
                "--qd {} needs an asynchronous engine: {} has one I/O in flight per worker; use --engine io_uring or raise --threads",
                self.qd, self.engine
            ));
        }
        if self.qd > 4096 {
            return Err(format!("--qd {} is too deep; use at most 4096", self.qd));
        }
        self.uring.validate(self.qd)?;
        if self.threads == 0 || self.threads > 4096 {
            return Err("--threads must be 1..4096".into());
        }
        Ok(())
    }

    /// Block sizes, and a raid0 stripe that holds whole blocks.
    fn validate_sizes(&self) -> Result<(), String> {
        for (bs, _) in self.sizes() {
            if bs == 0 || bs > (64 << 20) {
                return Err(format!(
                    "block size {} is out of range; use 512..64m",
                    ByteSize(bs)
                ));
            }
        }
        if self.layout == Layout::Raid0 {
            if self.stripe == 0 {
                return Err("--stripe must be > 0".into());
            }
            for (bs, _) in self.sizes() {
                if !self.stripe.is_multiple_of(bs) {
                    return Err(format!(
                        "--stripe {} is not a multiple of the block size {}: an I/O would span two targets; use a stripe that is a multiple of --bs",
                        ByteSize(self.stripe),
                        ByteSize(bs)
                    ));
                }
            }
        }
        Ok(())
    }

    /// `--fsync` / `--fdatasync`.
    fn validate_syncs(&self) -> Result<(), String> {
        if self.fsync.is_some() && self.fdatasync.is_some() {
            return Err("give either --fsync or --fdatasync, not both".into());
        }
        if matches!(self.fsync, Some(0)) || matches!(self.fdatasync, Some(0)) {
            return Err("--fsync/--fdatasync N needs N ≥ 1 (sync every N writes)".into());
        }
        if (self.fsync.is_some() || self.fdatasync.is_some()) && !self.rw.writes() {
            return Err(format!("--fsync/--fdatasync need writes, but --rw {:?} only reads; use --rw randwrite, randrw, write or rw", self.rw).to_lowercase());
        }
        Ok(())
    }

    /// `--verify`, `--rate-iops`, `--runtime` and the fault options.
    fn validate_checks_and_limits(&self) -> Result<(), String> {
        if self.verify && self.bs_split.is_some() {
            return Err("--verify needs one block size; drop --bs-split".into());
        }
        if self.verify && self.bs < 64 {
            return Err("--verify needs --bs of at least 64 bytes for the block header".into());
        }
        if matches!(self.rate_iops, Some(0)) {
            return Err("--rate-iops must be > 0".into());
        }
        if self.runtime.is_zero() {
            return Err("--runtime must be > 0".into());
        }
        if let Some(f) = &self.fault {
            if !self.engine.caps().has(Caps::INJECTS_FAULTS) {
                return Err(format!(
                    "--fault-* options need --engine fault (not {}); add --engine fault",
                    self.engine
                ));
            }
            f.validate()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> JobSpec {
        JobSpec {
            targets: vec!["/tmp/x".into()],
            ..Default::default()
        }
    }

    #[test]
    fn psync_with_depth_is_refused_with_the_fix() {
        let s = JobSpec {
            qd: 8,
            engine: EngineKind::Psync,
            ..spec()
        };
        assert_eq!(
            s.validate().unwrap_err(),
            "--qd 8 needs an asynchronous engine: psync has one I/O in flight per worker; use --engine io_uring or raise --threads"
        );
    }

    #[test]
    fn mix_over_100_is_refused() {
        assert!(JobSpec {
            mix_read: 150,
            ..spec()
        }
        .validate()
        .is_err());
        assert!(spec().validate().is_ok());
    }

    #[test]
    fn stripe_must_hold_whole_blocks() {
        let s = JobSpec {
            layout: Layout::Raid0,
            stripe: 12288,
            bs: 8192,
            ..spec()
        };
        assert!(s.validate().unwrap_err().contains("multiple"));
    }

    #[test]
    fn bs_split_parses_and_rejects() {
        let b: BsSplit = "4k/50:64k/50".parse().unwrap();
        assert_eq!(b.0, vec![(4096, 50), (65536, 50)]);
        assert!("4k".parse::<BsSplit>().is_err());
        assert!("4k/x".parse::<BsSplit>().is_err());
    }

    #[test]
    fn engines_without_storage_need_no_target_and_others_do() {
        for (engine, ok) in [
            (EngineKind::Null, true),
            (EngineKind::Fault, true),
            (EngineKind::Psync, false),
            (EngineKind::IoUring, false),
        ] {
            let s = JobSpec {
                engine,
                ..Default::default()
            };
            assert_eq!(s.validate().is_ok(), ok, "{engine}");
        }
    }

    #[test]
    fn submit_batch_stays_within_the_depth() {
        let s = JobSpec {
            qd: 4,
            uring: UringOptions { submit_batch: 5 },
            ..spec()
        };
        assert_eq!(
            s.validate().unwrap_err(),
            "--submit-batch 5 must be 1..--qd (4)"
        );
    }

    #[test]
    fn fault_options_need_the_fault_engine() {
        let fault = Some(FaultOptions {
            error_at: vec![3],
            ..Default::default()
        });
        let s = JobSpec {
            engine: EngineKind::Null,
            fault: fault.clone(),
            ..Default::default()
        };
        assert!(s.validate().unwrap_err().contains("--engine fault"));
        let s = JobSpec {
            engine: EngineKind::Fault,
            fault,
            ..Default::default()
        };
        assert!(s.validate().is_ok());
    }

    #[test]
    fn config_keeps_submit_batch_at_the_top_level_and_fault_only_when_used() {
        let v = serde_json::to_value(spec()).unwrap();
        assert_eq!(v["submit_batch"], 1);
        assert!(v.get("uring").is_none() && v.get("fault").is_none());
        let v = serde_json::to_value(JobSpec {
            engine: EngineKind::Fault,
            fault: Some(FaultOptions::default()),
            ..spec()
        })
        .unwrap();
        assert_eq!(v["fault"]["errno"], libc::EIO);
    }

    #[test]
    fn sync_without_writes_is_refused() {
        let s = JobSpec {
            fsync: Some(4),
            ..spec()
        };
        assert!(s.validate().unwrap_err().contains("randwrite"));
    }
}
