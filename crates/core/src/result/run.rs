//! kind `run`: one job's figures (`summary`) and its advice (`warnings`).
//!
//! The pieces shared with other kinds live here too: [`IoFigures`] (one
//! direction of I/O), [`DeviceTotal`] and [`DeviceFigures`] (what the block
//! devices saw).

use super::Document;
use crate::latency::LatencySummary;
use serde::{Deserialize, Serialize};

/// A `run` result document.
pub type RunResult = Document<Option<RunSummary>, RunSections>;

/// `summary` of a `run` result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RunSummary {
    /// Length of the counted window (after the ramp), s.
    pub measured_s: f64,
    pub read: IoFigures,
    pub write: IoFigures,
    pub total: TotalFigures,
    /// CPU of the iolens process over the window.
    pub cpu: CpuFigures,
    /// The block devices under the targets, summed; `None` when none was found.
    pub device: Option<DeviceTotal>,
    /// The same per device.
    pub devices: Vec<DeviceFigures>,
    /// The sync calls (only with --fsync/--fdatasync).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sync: Option<SyncFigures>,
    /// Blocks checked (only with --verify).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verify: Option<VerifyFigures>,
}

/// One direction of I/O over a measured window (`read`, `write`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct IoFigures {
    pub ops: u64,
    pub iops: f64,
    pub bytes: u64,
    /// 10^6 bytes per second.
    pub mbps: f64,
    pub lat_us: LatencySummary,
}

/// Reads and writes together.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TotalFigures {
    pub ops: u64,
    pub iops: f64,
    pub mbps: f64,
}

/// CPU time of the iolens process over the window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CpuFigures {
    pub user_s: f64,
    pub sys_s: f64,
    pub iops_per_cpu_s: f64,
    pub cpu_us_per_io: f64,
}

/// What the block devices under the targets saw, summed over the devices
/// (`summary.device` of a run, `device` of a calibrate step or a matrix point).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeviceTotal {
    pub names: Vec<String>,
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub flush_ios: u64,
    /// Mean over the devices, weighted by their reads, ms.
    pub read_await_ms: f64,
    pub write_await_ms: f64,
    /// The busiest device's %util.
    pub util_pct: f64,
    /// Sum of the devices' queue sizes.
    pub avg_queue: f64,
}

/// What one block device saw over the window (`summary.devices[]`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DeviceFigures {
    pub device: String,
    pub interval_s: f64,
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub read_merges: u64,
    pub write_merges: u64,
    pub flush_ios: u64,
    pub read_await_ms: f64,
    pub write_await_ms: f64,
    pub avg_queue: f64,
    pub util_pct: f64,
}

/// The sync calls, timed apart from the writes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SyncFigures {
    pub ops: u64,
    pub lat_us: LatencySummary,
}

/// What --verify checked.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct VerifyFigures {
    pub checked: u64,
    /// Blocks without a header (never written with --verify).
    pub unstamped: u64,
}

/// Top-level sections of a `run` result.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RunSections {
    /// Advice drawn from the figures (written when the run ends).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warnings: Option<Vec<String>>,
}
