//! The figures of one measured point, drawn from any kind of result.
//!
//! Each kind's figures are read from its typed summary (iolens-core's
//! `result` module); a figure the result lacks is simply left out, and a kind
//! this version does not know gives what it can (`iops`, `mbps`). The registry
//! [`COLUMNS`] fixes the order and names of the report's columns.

use iolens_core::result::calibrate::CalibrateSummary;
use iolens_core::result::db::DbSummary;
use iolens_core::result::matrix::{MatrixPoint, StreamFigures};
use iolens_core::result::run::{IoFigures, RunSummary};
use iolens_core::result::AnyResult;
use iolens_core::LatencySummary;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// A column of the report table.
#[derive(Debug, Clone, Copy)]
pub struct Column {
    /// Key in `report.json` and header in `report.csv`.
    pub key: &'static str,
    /// Short label for the HTML table and the terminal.
    pub label: &'static str,
    /// Shown even when no point has the figure (the core set every kind can fill).
    pub always: bool,
}

const fn col(key: &'static str, label: &'static str, always: bool) -> Column {
    Column { key, label, always }
}

/// Every figure the report knows, in column order.
pub const COLUMNS: &[Column] = &[
    col("iops", "IOPS", true),
    col("read_iops", "read IOPS", true),
    col("write_iops", "write IOPS", true),
    col("mbps", "MB/s", true),
    col("read_mbps", "read MB/s", true),
    col("write_mbps", "write MB/s", true),
    col("read_lat_mean_us", "read mean µs", true),
    col("read_lat_p50_us", "read p50 µs", true),
    col("read_lat_p99_us", "read p99 µs", true),
    col("read_lat_p99_9_us", "read p99.9 µs", false),
    col("read_lat_max_us", "read max µs", false),
    col("write_lat_mean_us", "write mean µs", true),
    col("write_lat_p50_us", "write p50 µs", true),
    col("write_lat_p99_us", "write p99 µs", true),
    col("write_lat_p99_9_us", "write p99.9 µs", false),
    col("write_lat_max_us", "write max µs", false),
    col("sync_lat_mean_us", "sync mean µs", false),
    col("sync_lat_p99_us", "sync p99 µs", false),
    col("cpu_us_per_io", "CPU µs/IO", true),
    col("iops_per_cpu_s", "IOPS/CPU-s", true),
    col("dev_read_iops", "device r/s", false),
    col("dev_write_iops", "device w/s", false),
    col("dev_read_await_ms", "device r_await ms", false),
    col("dev_write_await_ms", "device w_await ms", false),
    col("dev_util_pct", "device util %", false),
    col("db_physical_read_iops", "db phys reads/s", false),
    col("db_physical_write_iops", "db phys writes/s", false),
    col("db_read_lat_us", "db read µs", false),
    col("db_logical_reads_per_s", "db logical reads/s", false),
    col("db_hit_pct", "db hit %", false),
    col("db_executions_per_s", "db executions/s", false),
    col("db_tps", "db TPS", false),
    col("db_reads_per_cpu_s", "db reads/DB CPU-s", false),
    col("os_read_iops", "OS device r/s", false),
    col("os_write_iops", "OS device w/s", false),
    col("os_read_await_ms", "OS r_await ms", false),
    col("os_cache_hit_pct", "OS cache share %", false),
    col("cal_latency_ms", "calibrate latency ms", false),
    col("cal_cv_iops_pct", "calibrate CV IOPS %", false),
    col("cal_cv_mbps_pct", "calibrate CV MB/s %", false),
    col("measured_s", "measured s", true),
];

/// The column with this key.
pub fn column(key: &str) -> Option<&'static Column> {
    COLUMNS.iter().find(|c| c.key == key)
}

/// The figures of one point, by column key.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Figures(pub BTreeMap<&'static str, f64>);

impl Figures {
    /// A figure, when the point has it.
    pub fn get(&self, key: &str) -> Option<f64> {
        self.0.get(key).copied()
    }

    fn set(&mut self, key: &'static str, v: Option<f64>) {
        debug_assert!(column(key).is_some(), "unknown column {key}");
        if let Some(v) = v.filter(|v| v.is_finite()) {
            self.0.insert(key, v);
        }
    }

    /// Whether the point has no figure at all (a failed or unfinished run).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Total IOPS, the load axis of the charts and the knee.
    pub fn iops(&self) -> Option<f64> {
        self.get("iops")
    }

    fn reads(&self) -> bool {
        self.get("read_iops").is_some_and(|v| v > 0.0) || self.get("write_iops").is_none()
    }

    /// Mean latency of the point's main operation: reads when it reads, else writes.
    pub fn lat_mean_us(&self) -> Option<f64> {
        if self.reads() {
            self.get("read_lat_mean_us")
        } else {
            self.get("write_lat_mean_us")
        }
    }

    /// p99 latency of the point's main operation (see [`Figures::lat_mean_us`]).
    pub fn lat_p99_us(&self) -> Option<f64> {
        if self.reads() {
            self.get("read_lat_p99_us")
        } else {
            self.get("write_lat_p99_us")
        }
    }

    /// Which operation [`Figures::lat_mean_us`] describes: `read` or `write`.
    pub fn lat_op(&self) -> &'static str {
        if self.reads() {
            "read"
        } else {
            "write"
        }
    }

    /// The latency percentiles of the main operation that the point has, as (label, µs).
    pub fn percentiles(&self) -> Vec<(&'static str, f64)> {
        let op = self.lat_op();
        let keys: [(&str, &str); 5] = [
            ("mean", "lat_mean_us"),
            ("p50", "lat_p50_us"),
            ("p99", "lat_p99_us"),
            ("p99.9", "lat_p99_9_us"),
            ("max", "lat_max_us"),
        ];
        keys.iter()
            .filter_map(|(label, k)| self.get(&format!("{op}_{k}")).map(|v| (*label, v)))
            .collect()
    }
}

fn round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

/// The latency columns of reads or writes.
fn set_lat(f: &mut Figures, read: bool, l: &LatencySummary) {
    let keys = if read {
        [
            "read_lat_mean_us",
            "read_lat_p50_us",
            "read_lat_p99_us",
            "read_lat_p99_9_us",
            "read_lat_max_us",
        ]
    } else {
        [
            "write_lat_mean_us",
            "write_lat_p50_us",
            "write_lat_p99_us",
            "write_lat_p99_9_us",
            "write_lat_max_us",
        ]
    };
    for (k, v) in keys.into_iter().zip([l.mean, l.p50, l.p99, l.p99_9, l.max]) {
        f.set(k, Some(v));
    }
}

/// The latency columns of a direction that did any I/O (zeros would lie).
fn set_io_lat(f: &mut Figures, read: &IoFigures, write: &IoFigures) {
    if read.ops > 0 {
        set_lat(f, true, &read.lat_us);
    }
    if write.ops > 0 {
        set_lat(f, false, &write.lat_us);
    }
}

/// Figures of a `run` summary.
pub fn run_figures(s: &RunSummary) -> Figures {
    let mut f = Figures::default();
    f.set("read_iops", Some(s.read.iops));
    f.set("read_mbps", Some(s.read.mbps));
    f.set("write_iops", Some(s.write.iops));
    f.set("write_mbps", Some(s.write.mbps));
    set_io_lat(&mut f, &s.read, &s.write);
    f.set("iops", Some(s.total.iops));
    f.set("mbps", Some(s.total.mbps));
    if let Some(sync) = s.sync.as_ref().filter(|s| s.ops > 0) {
        f.set("sync_lat_mean_us", Some(sync.lat_us.mean));
        f.set("sync_lat_p99_us", Some(sync.lat_us.p99));
    }
    f.set("cpu_us_per_io", Some(s.cpu.cpu_us_per_io));
    f.set("iops_per_cpu_s", Some(s.cpu.iops_per_cpu_s));
    f.set("measured_s", Some(s.measured_s));
    if let Some(d) = s.device.as_ref().filter(|_| s.measured_s > 0.0) {
        let secs = s.measured_s;
        f.set("dev_read_iops", Some(round1(d.read_ios as f64 / secs)));
        f.set("dev_write_iops", Some(round1(d.write_ios as f64 / secs)));
        f.set("dev_read_await_ms", Some(d.read_await_ms));
        f.set("dev_write_await_ms", Some(d.write_await_ms));
        f.set("dev_util_pct", Some(d.util_pct));
    }
    f
}

/// Figures of a `db` summary: the database's physical I/O, what the device
/// saw and the share the OS page cache served. The database's view fills the
/// common columns, so that db points chart and compare like raw ones:
/// physical I/O rate and single-block read latency.
pub fn db_figures(s: &DbSummary) -> Figures {
    let mut f = Figures::default();
    let db = &s.db;
    f.set("db_physical_read_iops", Some(db.physical_read_iops));
    f.set("db_physical_write_iops", db.physical_write_iops);
    f.set("db_read_lat_us", db.read_lat_us);
    f.set("db_logical_reads_per_s", Some(db.logical_reads_per_s));
    f.set("db_hit_pct", Some(db.hit_pct));
    f.set("db_executions_per_s", Some(db.executions_per_s));
    f.set("db_tps", Some(db.tps));
    f.set("db_reads_per_cpu_s", db.reads_per_db_cpu_s);
    if let Some(os) = &s.os {
        f.set("os_read_iops", Some(os.read_iops));
        f.set("os_write_iops", Some(os.write_iops));
        f.set("os_read_await_ms", Some(os.read_await_ms));
    }
    f.set("os_cache_hit_pct", s.os_cache_hit_pct);
    f.set("measured_s", Some(s.measured_s));
    let (r, w) = (
        f.get("db_physical_read_iops"),
        f.get("db_physical_write_iops"),
    );
    if r.is_some() || w.is_some() {
        f.set("read_iops", r);
        f.set("write_iops", w);
        f.set("iops", Some(r.unwrap_or(0.0) + w.unwrap_or(0.0)));
    }
    f.set("read_lat_mean_us", db.read_lat_us);
    if let Some(os) = &s.os {
        f.set("read_mbps", Some(os.read_mbps));
        f.set("write_mbps", Some(os.write_mbps));
        f.set("mbps", Some(os.read_mbps + os.write_mbps));
    }
    f
}

/// Figures of a `calibrate` summary: its headline numbers fill the common
/// columns (IOPS = max_iops, MB/s = max_mbps, read mean = latency at max_iops).
pub fn calibrate_figures(s: &CalibrateSummary) -> Figures {
    let mut f = Figures::default();
    f.set("iops", s.max_iops);
    f.set("read_iops", s.max_iops);
    f.set("mbps", s.max_mbps);
    f.set("read_mbps", s.max_mbps);
    f.set("read_lat_mean_us", s.latency_ms.map(|ms| ms * 1e3));
    f.set("cal_latency_ms", s.latency_ms);
    f.set("cal_cv_iops_pct", s.cv.max_iops);
    f.set("cal_cv_mbps_pct", s.cv.max_mbps);
    f
}

/// Figures of one point of an ORION-style matrix: a `small` and/or a `large`
/// stream. Rates add up; the latency columns show the small I/Os when there
/// are any (ORION's `lat.csv`).
pub fn matrix_point_figures(p: &MatrixPoint) -> Figures {
    let mut f = Figures::default();
    let streams: Vec<&StreamFigures> = [&p.small, &p.large].into_iter().flatten().collect();
    f.set("measured_s", Some(p.measured_s));
    if streams.is_empty() {
        return f;
    }
    let sum = |v: fn(&StreamFigures) -> f64| Some(streams.iter().map(|s| v(s)).sum::<f64>());
    f.set("read_iops", sum(|s| s.read.iops));
    f.set("write_iops", sum(|s| s.write.iops));
    f.set("read_mbps", sum(|s| s.read.mbps));
    f.set("write_mbps", sum(|s| s.write.mbps));
    f.set("iops", sum(|s| s.iops));
    f.set("mbps", sum(|s| s.mbps));
    set_io_lat(&mut f, &streams[0].read, &streams[0].write);
    let ops: u64 = streams.iter().map(|s| s.read.ops + s.write.ops).sum();
    let cpu = p.cpu_user_s + p.cpu_sys_s;
    if ops > 0 && cpu > 0.0 {
        let ops = ops as f64;
        f.set(
            "cpu_us_per_io",
            Some((cpu * 1e6 / ops * 1000.0).round() / 1000.0),
        );
        f.set("iops_per_cpu_s", Some((ops / cpu).round()));
    }
    f
}

/// What a summary of a kind this version does not know may still say.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct OtherSummary {
    iops: Option<f64>,
    mbps: Option<f64>,
    measured_s: Option<f64>,
}

fn other_figures(s: &OtherSummary) -> Figures {
    let mut f = Figures::default();
    f.set("iops", s.iops);
    f.set("mbps", s.mbps);
    if !f.is_empty() {
        f.set("measured_s", s.measured_s);
    }
    f
}

/// The figures of a result document (none for a matrix as a whole: its
/// points have theirs, see [`matrix_point_figures`]).
pub fn of_result(doc: &AnyResult) -> Figures {
    match doc {
        AnyResult::Run(d) => d.summary.as_ref().map(run_figures),
        AnyResult::Calibrate(d) => d.summary.as_ref().map(calibrate_figures),
        AnyResult::Db(d) => d.summary.as_ref().map(db_figures),
        AnyResult::Matrix(_) | AnyResult::Assess(_) => None,
        AnyResult::Other(d) => OtherSummary::deserialize(&d.summary)
            .ok()
            .map(|s| other_figures(&s)),
    }
    .unwrap_or_default()
}

/// The figures of a `summary` of `kind` given as JSON (one point of a
/// `matrix`), read through the kind's types; none when it does not fit them.
pub fn extract(kind: &str, summary: &Value) -> Figures {
    fn read<T: DeserializeOwned>(v: &Value, f: fn(&T) -> Figures) -> Figures {
        T::deserialize(v).map(|t| f(&t)).unwrap_or_default()
    }
    match kind {
        "run" => read(summary, run_figures),
        "calibrate" => read(summary, calibrate_figures),
        "db" => read(summary, db_figures),
        "matrix" => read(summary, matrix_point_figures),
        _ => read(summary, other_figures),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run_summary() -> Value {
        json!({
            "measured_s": 10.0,
            "read": {"ops": 1000, "iops": 100.0, "bytes": 8192000, "mbps": 0.819,
                     "lat_us": {"mean": 50.0, "min": 10.0, "p50": 45.0, "p90": 70.0, "p95": 80.0,
                                "p99": 120.0, "p99_9": 200.0, "p99_99": 250.0, "max": 300.0}},
            "write": {"ops": 0, "iops": 0.0, "bytes": 0, "mbps": 0.0,
                      "lat_us": {"mean": 0.0, "min": 0.0, "p50": 0.0, "p90": 0.0, "p95": 0.0,
                                 "p99": 0.0, "p99_9": 0.0, "p99_99": 0.0, "max": 0.0}},
            "total": {"ops": 1000, "iops": 100.0, "mbps": 0.819},
            "cpu": {"user_s": 0.1, "sys_s": 0.2, "iops_per_cpu_s": 3333.0, "cpu_us_per_io": 300.0},
            "device": {"names": ["vda"], "read_ios": 900, "write_ios": 20, "read_bytes": 0,
                       "write_bytes": 0, "flush_ios": 0, "read_await_ms": 0.04,
                       "write_await_ms": 1.0, "util_pct": 50.0, "avg_queue": 0.5},
            "devices": []
        })
    }

    #[test]
    fn run_summaries_fill_the_core_columns() {
        let f = extract("run", &run_summary());
        assert_eq!(f.iops(), Some(100.0));
        assert_eq!(f.get("read_lat_p99_us"), Some(120.0));
        assert_eq!(f.get("write_iops"), Some(0.0));
        // no writes: no write latency (zeros would lie)
        assert_eq!(f.get("write_lat_mean_us"), None);
        assert_eq!(f.get("dev_read_iops"), Some(90.0));
        assert_eq!(f.lat_op(), "read");
        assert_eq!(f.lat_mean_us(), Some(50.0));
        assert_eq!(f.percentiles().len(), 5);
    }

    #[test]
    fn db_summaries_show_physical_and_device_reads() {
        let s = json!({
            "measured_s": 60.0,
            "db": {"physical_read_iops": 5000.0, "physical_write_iops": 100.0,
                   "read_lat_us": 420.5, "hit_pct": 12.0, "reads_per_db_cpu_s": 19306.0},
            "os": {"read_iops": 4000.0, "write_iops": 150.0, "read_await_ms": 0.4},
            "os_cache_hit_pct": 20.0
        });
        let f = extract("db", &s);
        assert_eq!(f.get("db_physical_read_iops"), Some(5000.0));
        assert_eq!(f.get("os_read_iops"), Some(4000.0));
        assert_eq!(f.get("os_cache_hit_pct"), Some(20.0));
        assert_eq!(f.iops(), Some(5100.0));
        assert_eq!(f.lat_mean_us(), Some(420.5));
    }

    #[test]
    fn calibrate_headlines_fill_the_common_columns() {
        let s = json!({"max_iops": 3766.0, "max_mbps": 358.0, "latency_ms": 18.21,
                       "cv": {"max_iops": 1.2, "max_mbps": 0.8}});
        let f = extract("calibrate", &s);
        assert_eq!(f.iops(), Some(3766.0));
        assert_eq!(f.get("mbps"), Some(358.0));
        assert_eq!(f.lat_mean_us(), Some(18210.0));
        assert_eq!(f.get("cal_cv_iops_pct"), Some(1.2));
    }

    #[test]
    fn matrix_points_add_their_streams() {
        let dir = |iops: f64, ops: u64, mean: f64| {
            json!({"ops": ops, "iops": iops, "bytes": 0, "mbps": iops / 100.0,
                   "lat_us": {"mean": mean, "p50": mean, "p99": mean * 2.0, "max": mean * 3.0}})
        };
        let p = json!({
            "point": 3, "small_load": 4, "large_load": 1, "measured_s": 10.0,
            "small": {"load": 4, "read": dir(900.0, 9000, 400.0), "write": dir(100.0, 1000, 900.0),
                      "iops": 1000.0, "mbps": 10.0, "lat_mean_us": 450.0},
            "large": {"load": 1, "read": dir(50.0, 500, 9000.0), "write": dir(0.0, 0, 0.0),
                      "iops": 50.0, "mbps": 52.4, "lat_mean_us": 9000.0},
            "cpu_user_s": 0.5, "cpu_sys_s": 0.55
        });
        let f = extract("matrix", &p);
        assert_eq!(f.iops(), Some(1050.0));
        assert_eq!(f.get("read_iops"), Some(950.0));
        assert_eq!(f.get("mbps"), Some(62.4));
        // latency of the small I/Os
        assert_eq!(f.lat_mean_us(), Some(400.0));
        assert_eq!(f.get("cpu_us_per_io"), Some(100.0));
    }

    #[test]
    fn unknown_kinds_give_what_they_have() {
        assert!(extract("future", &json!({"something": 1})).is_empty());
        assert!(extract("run", &Value::Null).is_empty());
        let f = extract("future", &json!({"iops": 7.0}));
        assert_eq!(f.iops(), Some(7.0));
    }
}
