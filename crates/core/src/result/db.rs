//! kind `db`: the SLOB method on a database (`summary`), the server it ran
//! on (`server`) and the plan of its select (`plan`).

use super::{sorted, Document};
use crate::latency::LatencySummary;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// A `db` result document.
pub type DbResult = Document<Option<DbSummary>, DbSections>;

/// `summary` of a `db` result (see docs/result-schema.md for each figure).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DbSummary {
    pub measured_s: f64,
    pub warmup_s: f64,
    pub sessions: u32,
    pub schemas: u32,
    /// The database's own view.
    pub db: DbFigures,
    /// What the device under the data directory saw; `None` when none was found.
    pub os: Option<OsFigures>,
    /// Share of the database's physical reads the device did not see, %.
    pub os_cache_hit_pct: Option<f64>,
    pub cache: CacheFigures,
    /// Sampled sessions over samples, all foreground events together.
    pub db_time_aas: f64,
    /// Foreground waits, largest first.
    pub waits: Vec<Wait>,
    /// I/O waits of background processes.
    pub background_waits: Vec<Wait>,
    pub ash_samples: u64,
    pub ops: DbOps,
    pub update_pct_measured: f64,
    /// Per session: [select, update, scan] operations.
    pub per_session_ops: Vec<[u64; 3]>,
    /// The memory cgroup (only with --os-cache-limit).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<CgroupFigures>,
}

/// `summary.db`: rates over the window, then the window's totals. `None`
/// where the server does not offer the figure.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DbFigures {
    pub logical_reads_per_s: f64,
    pub physical_read_iops: f64,
    pub physical_write_iops: Option<f64>,
    /// Mean single-block read latency, µs (needs track_io_timing).
    pub read_lat_us: Option<f64>,
    pub hit_pct: f64,
    pub executions_per_s: f64,
    pub tps: f64,
    pub xact_per_s: f64,
    pub wal_bytes_per_s: Option<f64>,
    pub reads_per_db_cpu_s: Option<f64>,
    pub device_reads_per_db_cpu_s: Option<f64>,
    pub reads_per_select: Option<f64>,
    pub logical_reads: u64,
    pub physical_reads: u64,
    pub read_time_ms: Option<f64>,
    pub physical_writes: Option<u64>,
    pub write_time_ms: Option<f64>,
    pub checkpoint_writes: Option<u64>,
    pub bgwriter_writes: Option<u64>,
    pub backend_writes: Option<u64>,
    pub backend_fsyncs: Option<u64>,
    pub checkpoints: Option<u64>,
    pub checkpoint_write_time_ms: Option<f64>,
    pub checkpoint_sync_time_ms: Option<f64>,
    pub commits: u64,
    pub rollbacks: u64,
    pub wal_bytes: Option<u64>,
    pub wal_records: Option<u64>,
    pub wal_fpi: Option<u64>,
    pub wal_writes: Option<u64>,
    pub wal_syncs: Option<u64>,
    pub wal_write_time_ms: Option<f64>,
    pub wal_sync_time_ms: Option<f64>,
    pub wal_write_lat_us: Option<f64>,
    pub wal_sync_lat_us: Option<f64>,
    pub db_cpu_s: Option<f64>,
    pub db_cpu_user_s: Option<f64>,
    pub db_cpu_sys_s: Option<f64>,
    pub server_processes: Option<u64>,
    pub server_read_bytes: Option<u64>,
    pub server_write_bytes: Option<u64>,
    /// pg_stat_io by process kind (16+).
    pub io: Vec<DbIo>,
}

/// One row of `summary.db.io[]`: I/O of one kind of server process.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DbIo {
    pub backend_type: String,
    pub reads: u64,
    pub read_time_ms: f64,
    pub writes: u64,
    pub write_time_ms: f64,
    pub extends: u64,
    pub hits: u64,
    pub fsyncs: u64,
    pub fsync_time_ms: f64,
}

/// `summary.os`: the device under the data directory over the window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OsFigures {
    pub device: String,
    pub read_iops: f64,
    pub write_iops: f64,
    pub read_mbps: f64,
    pub write_mbps: f64,
    pub read_await_ms: f64,
    pub write_await_ms: f64,
    pub util_pct: f64,
    pub avg_queue: f64,
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub flush_ios: u64,
    pub machine_cpu_busy_pct: f64,
}

/// `summary.cache`: how much of the database's physical reads the device saw.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CacheFigures {
    pub db_physical_reads: u64,
    pub device_read_ios: Option<u64>,
    pub os_cache_hit_pct: Option<f64>,
    pub os_cache_hit_pct_by_process: Option<f64>,
    pub flagged: bool,
    pub verdict: String,
    pub advice: Vec<String>,
}

/// One wait event (`summary.waits[]`, `summary.background_waits[]`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Wait {
    pub event: String,
    pub class: String,
    /// Average active sessions on the event.
    pub aas: f64,
    /// Share of DB time, % (foreground waits only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pct_db_time: Option<f64>,
}

/// `summary.ops`: each kind of operation of the work loop.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct DbOps {
    pub select: OpFigures,
    pub update: OpFigures,
    pub scan: OpFigures,
}

/// One kind of operation over the window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct OpFigures {
    pub ops: u64,
    pub per_s: f64,
    pub rows: u64,
    pub lat_us: LatencySummary,
}

/// `summary.cgroup`: the memory cgroup the managed server ran in.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CgroupFigures {
    pub limit_bytes: Option<u64>,
    pub memory: CgroupMemory,
}

/// Memory charged to the cgroup, bytes.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CgroupMemory {
    pub cache_bytes: u64,
    pub shmem_bytes: u64,
    pub anon_bytes: u64,
    pub max_usage_bytes: u64,
}

/// `server`: the database server the run measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ServerInfo {
    /// Version line (`PostgreSQL 16.4 ...`, `SQLite 3.46.0`).
    pub version: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub major: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version_num: Option<u64>,
    /// The server's settings as it reports them (`name: "value (unit)"` for
    /// PostgreSQL); kept as given.
    pub settings: BTreeMap<String, Value>,
    /// `Some(None)`: written as null (the server's data directory is not visible).
    #[serde(
        skip_serializing_if = "Option::is_none",
        deserialize_with = "super::present"
    )]
    pub data_directory: Option<Option<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shared_buffers_bytes: Option<u64>,
    /// SQLite's VFS.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vfs: Option<String>,
}

/// Top-level sections of a `db` result (in the order they are written).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct DbSections {
    /// The plans of the select, as the server explains them (its own format).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<Value>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "sorted"
    )]
    pub server: Option<ServerInfo>,
    /// Advice drawn from the figures (written when the run ends).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warnings: Option<Vec<String>>,
}
