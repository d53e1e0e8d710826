//! kind `matrix`: ORION's matrix of small and large loads (`points`), its
//! best points (`summary`) and the ORION files written beside it (`files`).

use super::run::{DeviceTotal, IoFigures};
use super::{sorted, Document};
use serde::{Deserialize, Serialize};

/// A `matrix` result document.
pub type MatrixResult = Document<Option<MatrixSummary>, MatrixSections>;

/// `summary` of a `matrix` result: the best points, as in ORION's summary.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MatrixSummary {
    pub points_planned: u64,
    /// Points that ran to their end (the ones in the CSV files).
    pub points_finished: u64,
    pub max_large_mbps: Option<BestPoint>,
    pub max_small_iops: Option<BestPoint>,
    pub min_small_lat_us: Option<BestPoint>,
}

/// A best figure and the point it was measured at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct BestPoint {
    pub value: f64,
    pub small: u32,
    pub large: u32,
}

/// The ORION file names in the result directory (`files`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MatrixFiles {
    pub summary: String,
    pub iops: String,
    pub mbps: String,
    pub lat: String,
    pub trace: String,
}

/// One measured point (`points[]`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MatrixPoint {
    /// 1-based position in the run.
    pub point: usize,
    pub small_load: u32,
    pub large_load: u32,
    /// Counted window of the point (the longest of its jobs).
    pub measured_s: f64,
    /// Wall time of the point, setup included: with both streams running at
    /// once it is close to `measured_s`, not the sum of the streams.
    pub wall_s: f64,
    pub small: Option<StreamFigures>,
    pub large: Option<StreamFigures>,
    /// What the devices under the targets saw over the point (all sources).
    pub device: Option<DeviceTotal>,
    /// CPU of the iolens process over the point.
    pub cpu_user_s: f64,
    pub cpu_sys_s: f64,
    /// Bytes read to warm the cache before the point (not measured).
    pub warmup_bytes: u64,
    /// The point was cut short (interrupt or error); it is left out of the CSV files.
    pub interrupted: bool,
}

/// One stream of one point.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StreamFigures {
    /// Outstanding I/Os (small, large rand) or streams (large seq).
    pub load: u32,
    /// Workers × outstanding I/Os per worker, per job of the stream.
    pub layout: Vec<String>,
    pub read: IoFigures,
    pub write: IoFigures,
    /// Counted window of the stream, seconds.
    pub measured_s: f64,
    /// Reads and writes together.
    pub iops: f64,
    pub mbps: f64,
    /// Mean latency of reads and writes together, µs.
    pub lat_mean_us: f64,
}

/// Top-level sections of a `matrix` result (in the order they are written).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct MatrixSections {
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "sorted"
    )]
    pub files: Option<MatrixFiles>,
    /// Every point measured so far, in running order.
    #[serde(default, serialize_with = "sorted")]
    pub points: Vec<MatrixPoint>,
    /// Advice drawn from the figures (written when the run ends).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warnings: Option<Vec<String>>,
}
