//! kind `assess`: the raw calibration, the database runs and the gap
//! between them (`summary`). Its parts are result directories of their own
//! kinds beside `result.json`.

use super::{Document, Status};
use serde::{Deserialize, Serialize};

/// An `assess` result document.
pub type AssessResult = Document<Option<AssessSummary>, AssessSections>;

/// `summary` of an `assess` result.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AssessSummary {
    pub raw: RawFigures,
    pub db: AssessDb,
    /// The read-only point with the most physical reads per second.
    pub best_db: Option<DbPoint>,
    pub db_vs_raw: DbVsRaw,
    /// One sentence on where the gap comes from.
    pub explanation: String,
}

/// `summary.raw`: what calibrate found.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RawFigures {
    pub max_iops: Option<f64>,
    pub max_mbps: Option<f64>,
    pub latency_ms: Option<f64>,
    /// Mean latency of the first ladder step (one outstanding small read), µs.
    pub qd1_lat_us: Option<f64>,
    pub qd1_iops: Option<f64>,
}

/// `summary.db`: the database runs.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AssessDb {
    /// `postgres` or `sqlite`.
    pub backend: String,
    pub points: Vec<DbPoint>,
}

/// One database run of the assessment.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DbPoint {
    pub sessions: u32,
    pub update_pct: u32,
    pub status: Option<Status>,
    pub physical_read_iops: Option<f64>,
    pub physical_write_iops: Option<f64>,
    pub read_lat_us: Option<f64>,
    pub reads_per_db_cpu_s: Option<f64>,
    pub tps: Option<f64>,
    pub device_read_iops: Option<f64>,
    pub os_cache_hit_pct: Option<f64>,
    /// The run's directory, relative to the assessment's.
    pub dir: Option<String>,
}

/// `summary.db_vs_raw`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DbVsRaw {
    /// Best database physical read IOPS ÷ raw max_iops.
    pub iops_ratio: Option<f64>,
    /// Database single-block read latency at 1 session ÷ raw QD1 latency.
    pub latency_ratio: Option<f64>,
}

/// Top-level sections of an `assess` result.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct AssessSections {
    /// Advice drawn from the parts (written when the assessment ends).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warnings: Option<Vec<String>>,
}
