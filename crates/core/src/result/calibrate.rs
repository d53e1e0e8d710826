//! kind `calibrate`: the headline figures over trials (`summary`), each
//! trial's findings (`trials`) and every measured step (`ladder`).

use super::run::DeviceTotal;
use super::{sorted, Document};
use crate::latency::LatencySummary;
use serde::{Deserialize, Serialize};

/// A `calibrate` result document.
pub type CalibrateResult = Document<Option<CalibrateSummary>, CalibrateSections>;

/// `summary` of a `calibrate` result. A figure is `None` when no trial measured it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CalibrateSummary {
    /// Mean over trials of each trial's max_iops.
    pub max_iops: Option<f64>,
    /// Mean over trials of the mean latency at max_iops, ms.
    pub latency_ms: Option<f64>,
    /// Mean over trials of each trial's highest large-read MB/s.
    pub max_mbps: Option<f64>,
    /// Coefficient of variation over trials, percent.
    pub cv: CalibrateFigures<Option<f64>>,
    pub spread: CalibrateFigures<Option<Spread>>,
    /// Trials that measured both figures.
    pub trials_complete: u64,
    /// False when some trial had no small-read step within the latency limit.
    pub within_latency: bool,
    /// Number of steps measured.
    pub steps: u64,
}

/// One value per headline figure (`cv`, `spread`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CalibrateFigures<T> {
    pub max_iops: T,
    pub latency_ms: T,
    pub max_mbps: T,
}

/// Mean, extremes and coefficient of variation of repeated measurements.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Spread {
    /// Number of values.
    pub n: usize,
    pub mean: f64,
    pub min: f64,
    pub max: f64,
    /// Sample standard deviation (n − 1), 0 for a single value.
    pub stddev: f64,
    /// Coefficient of variation, percent of the mean (0 for a single value).
    pub cv_pct: f64,
}

/// Which of the two ladders a step belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IoKind {
    /// Small random reads → `max_iops`.
    Small,
    /// Large random reads → `max_mbps`.
    Large,
}

/// Whether a step belongs to the doubling ladder or to the refinement.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Ladder,
    Refine,
}

/// Why a ladder's climb stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    /// A step gained less than `min_gain` over the best step before it.
    Plateau,
    /// A step's mean latency exceeded the limit.
    Latency,
    /// `max_outstanding` was reached while the figure still grew.
    Limit,
    /// The measurement was cut short (interrupt or error) before the climb ended.
    Stopped,
}

impl Stop {
    /// A few words for tables and logs.
    pub fn describe(self) -> &'static str {
        match self {
            Stop::Plateau => "plateau",
            Stop::Latency => "latency limit",
            Stop::Limit => "max outstanding",
            Stop::Stopped => "stopped",
        }
    }
}

/// One measured step (`ladder[]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LadderPoint {
    pub trial: u32,
    pub io: IoKind,
    pub phase: Phase,
    pub outstanding: u32,
    pub threads: u32,
    pub qd: u32,
    pub bs: u64,
    pub measured_s: f64,
    pub ops: u64,
    pub iops: f64,
    pub mbps: f64,
    #[serde(default)]
    pub lat_us: LatencySummary,
    /// Mean latency within `max_latency` (always true for large reads).
    #[serde(default)]
    pub within_latency: bool,
    /// Reads the devices under the targets saw over the step (all sources).
    #[serde(default)]
    pub device_read_ios: Option<u64>,
    /// What those devices saw, as in `summary.device` of a run.
    #[serde(default)]
    pub device: Option<DeviceTotal>,
    #[serde(default)]
    pub cpu_us_per_io: f64,
    /// The step was cut short by an interrupt or an error.
    #[serde(default)]
    pub interrupted: bool,
}

/// What one trial found (`trials[]`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TrialResult {
    pub trial: u32,
    pub max_iops: Option<f64>,
    /// Mean latency at `max_iops`, ms.
    pub latency_ms: Option<f64>,
    /// 99th percentile latency at `max_iops`, ms.
    pub latency_p99_ms: Option<f64>,
    pub iops_outstanding: Option<u32>,
    /// Whether `max_iops` met `max_latency` (false: no step did, and the
    /// figures are those of the step with the lowest mean latency).
    pub iops_within_latency: bool,
    pub small_stop: Option<Stop>,
    pub max_mbps: Option<f64>,
    pub mbps_outstanding: Option<u32>,
    /// Mean latency of the large reads at `max_mbps`, ms.
    pub mbps_latency_ms: Option<f64>,
    pub large_stop: Option<Stop>,
}

impl TrialResult {
    /// Whether the trial measured both figures.
    pub fn complete(&self) -> bool {
        self.max_iops.is_some() && self.max_mbps.is_some()
    }
}

/// Top-level sections of a `calibrate` result (in the order they are written).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CalibrateSections {
    /// Every step in the order it ran (written after the first step).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "sorted"
    )]
    pub ladder: Option<Vec<LadderPoint>>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "sorted"
    )]
    pub trials: Option<Vec<TrialResult>>,
    /// Advice drawn from the figures (written when the run ends).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warnings: Option<Vec<String>>,
}
