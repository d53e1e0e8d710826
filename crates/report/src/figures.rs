//! The figures of one measured point, drawn from any kind of result.
//!
//! Results are read as plain JSON so that new kinds degrade gracefully: every
//! figure is looked up where the schema (docs/result-schema.md) puts it and
//! simply left out when absent. The registry [`COLUMNS`] fixes the order and
//! names of the report's columns.

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

/// Follows `path` through nested objects to a number.
pub fn num(v: &Value, path: &[&str]) -> Option<f64> {
    let mut cur = v;
    for k in path {
        cur = cur.get(k)?;
    }
    match cur {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// A latency given either as a number (the mean) or as an object of percentiles.
fn lat(v: &Value, path: &[&str], which: &str) -> Option<f64> {
    let mut cur = v;
    for k in path {
        cur = cur.get(k)?;
    }
    match cur {
        Value::Object(_) => num(cur, &[which]),
        Value::Number(n) if which == "mean" => n.as_f64(),
        _ => None,
    }
}

/// Read/write/total figures in the layout of a `run` summary (also used by
/// any kind whose points carry `read`/`write` sections).
fn io_sections(f: &mut Figures, s: &Value) {
    for (dir, iops, mbps) in [
        ("read", "read_iops", "read_mbps"),
        ("write", "write_iops", "write_mbps"),
    ] {
        f.set(iops, num(s, &[dir, "iops"]));
        f.set(mbps, num(s, &[dir, "mbps"]));
        let has_ops = !matches!(num(s, &[dir, "ops"]), Some(o) if o <= 0.0);
        if has_ops {
            for (stat, key) in [
                ("mean", "lat_mean_us"),
                ("p50", "lat_p50_us"),
                ("p99", "lat_p99_us"),
                ("p99_9", "lat_p99_9_us"),
                ("max", "lat_max_us"),
            ] {
                let k = COLUMNS
                    .iter()
                    .find(|c| c.key == format!("{dir}_{key}"))
                    .map(|c| c.key);
                if let Some(k) = k {
                    f.set(k, lat(s, &[dir, "lat_us"], stat));
                }
            }
        }
    }
    let total =
        num(s, &["total", "iops"]).or_else(|| match (f.get("read_iops"), f.get("write_iops")) {
            (None, None) => num(s, &["iops"]),
            (r, w) => Some(r.unwrap_or(0.0) + w.unwrap_or(0.0)),
        });
    f.set("iops", total);
    let mbps =
        num(s, &["total", "mbps"]).or_else(|| match (f.get("read_mbps"), f.get("write_mbps")) {
            (None, None) => num(s, &["mbps"]),
            (r, w) => Some(r.unwrap_or(0.0) + w.unwrap_or(0.0)),
        });
    f.set("mbps", mbps);
    if num(s, &["sync", "ops"]).is_some_and(|o| o > 0.0) {
        f.set("sync_lat_mean_us", lat(s, &["sync", "lat_us"], "mean"));
        f.set("sync_lat_p99_us", lat(s, &["sync", "lat_us"], "p99"));
    }
    f.set("cpu_us_per_io", num(s, &["cpu", "cpu_us_per_io"]));
    f.set("iops_per_cpu_s", num(s, &["cpu", "iops_per_cpu_s"]));
    f.set("measured_s", num(s, &["measured_s"]));
    if let Some(secs) = num(s, &["measured_s"]).filter(|s| *s > 0.0) {
        if s.get("device").is_some_and(Value::is_object) {
            f.set(
                "dev_read_iops",
                num(s, &["device", "read_ios"]).map(|v| round1(v / secs)),
            );
            f.set(
                "dev_write_iops",
                num(s, &["device", "write_ios"]).map(|v| round1(v / secs)),
            );
            f.set("dev_read_await_ms", num(s, &["device", "read_await_ms"]));
            f.set("dev_write_await_ms", num(s, &["device", "write_await_ms"]));
            f.set("dev_util_pct", num(s, &["device", "util_pct"]));
        }
    }
}

fn round1(v: f64) -> f64 {
    (v * 10.0).round() / 10.0
}

/// Figures of a `db` summary: the database's physical I/O, what the device saw
/// and the share the OS page cache served.
fn db_sections(f: &mut Figures, s: &Value) {
    let db = &s["db"];
    f.set("db_physical_read_iops", num(db, &["physical_read_iops"]));
    f.set("db_physical_write_iops", num(db, &["physical_write_iops"]));
    f.set("db_read_lat_us", lat(db, &["read_lat_us"], "mean"));
    f.set("db_logical_reads_per_s", num(db, &["logical_reads_per_s"]));
    f.set("db_hit_pct", num(db, &["hit_pct"]));
    f.set("db_executions_per_s", num(db, &["executions_per_s"]));
    f.set("db_tps", num(db, &["tps"]));
    f.set("db_reads_per_cpu_s", num(db, &["reads_per_db_cpu_s"]));
    let os = &s["os"];
    f.set("os_read_iops", num(os, &["read_iops"]));
    f.set("os_write_iops", num(os, &["write_iops"]));
    f.set("os_read_await_ms", num(os, &["read_await_ms"]));
    f.set("os_cache_hit_pct", num(s, &["os_cache_hit_pct"]));
    f.set("measured_s", num(s, &["measured_s"]));
    // The database's view fills the common columns, so that db points chart
    // and compare like raw ones: physical I/O rate and single-block read latency.
    let (r, w) = (
        f.get("db_physical_read_iops"),
        f.get("db_physical_write_iops"),
    );
    if f.get("iops").is_none() && (r.is_some() || w.is_some()) {
        f.set("read_iops", r);
        f.set("write_iops", w);
        f.set("iops", Some(r.unwrap_or(0.0) + w.unwrap_or(0.0)));
    }
    if f.get("read_lat_mean_us").is_none() {
        f.set("read_lat_mean_us", lat(db, &["read_lat_us"], "mean"));
        f.set("read_lat_p50_us", lat(db, &["read_lat_us"], "p50"));
        f.set("read_lat_p99_us", lat(db, &["read_lat_us"], "p99"));
        f.set("read_lat_p99_9_us", lat(db, &["read_lat_us"], "p99_9"));
        f.set("read_lat_max_us", lat(db, &["read_lat_us"], "max"));
    }
    if f.get("mbps").is_none() {
        let (r, w) = (num(os, &["read_mbps"]), num(os, &["write_mbps"]));
        if r.is_some() || w.is_some() {
            f.set("read_mbps", r);
            f.set("write_mbps", w);
            f.set("mbps", Some(r.unwrap_or(0.0) + w.unwrap_or(0.0)));
        }
    }
}

/// Figures of a `calibrate` summary: its headline numbers fill the common
/// columns (IOPS = max_iops, MB/s = max_mbps, read mean = latency at max_iops).
fn calibrate_sections(f: &mut Figures, s: &Value) {
    let iops = num(s, &["max_iops"]).or_else(|| num(s, &["max_iops", "mean"]));
    let mbps = num(s, &["max_mbps"]).or_else(|| num(s, &["max_mbps", "mean"]));
    let lat_ms = num(s, &["latency_ms"]).or_else(|| num(s, &["latency_ms", "mean"]));
    f.set("iops", iops);
    f.set("read_iops", iops);
    f.set("mbps", mbps);
    f.set("read_mbps", mbps);
    f.set("read_lat_mean_us", lat_ms.map(|ms| ms * 1e3));
    f.set("cal_latency_ms", lat_ms);
    f.set("cal_cv_iops_pct", num(s, &["cv", "max_iops"]));
    f.set("cal_cv_mbps_pct", num(s, &["cv", "max_mbps"]));
}

/// Figures of one point of an ORION-style matrix: a `small` and/or a `large`
/// stream, each with `read`/`write` sections. Rates add up; the latency
/// columns show the small I/Os when there are any (ORION's `lat.csv`).
fn stream_sections(f: &mut Figures, p: &Value) {
    let streams: Vec<&Value> = ["small", "large"]
        .iter()
        .filter_map(|k| p.get(*k).filter(|v| v.is_object()))
        .collect();
    let sum = |path: &[&str]| -> Option<f64> {
        let vals: Vec<f64> = streams.iter().filter_map(|s| num(s, path)).collect();
        (!vals.is_empty()).then(|| vals.iter().sum())
    };
    f.set("read_iops", sum(&["read", "iops"]));
    f.set("write_iops", sum(&["write", "iops"]));
    f.set("read_mbps", sum(&["read", "mbps"]));
    f.set("write_mbps", sum(&["write", "mbps"]));
    f.set("iops", sum(&["iops"]));
    f.set("mbps", sum(&["mbps"]));
    if let Some(lat_src) = streams.first() {
        let mut one = Figures::default();
        io_sections(&mut one, lat_src);
        for (k, v) in one.0 {
            if k.contains("_lat_") {
                f.set(k, Some(v));
            }
        }
    }
    f.set("measured_s", num(p, &["measured_s"]));
    let ops = sum(&["read", "ops"]).unwrap_or(0.0) + sum(&["write", "ops"]).unwrap_or(0.0);
    let cpu = num(p, &["cpu_user_s"]).unwrap_or(0.0) + num(p, &["cpu_sys_s"]).unwrap_or(0.0);
    if ops > 0.0 && cpu > 0.0 {
        f.set(
            "cpu_us_per_io",
            Some((cpu * 1e6 / ops * 1000.0).round() / 1000.0),
        );
        f.set("iops_per_cpu_s", Some((ops / cpu).round()));
    }
}

/// The figures of a result document's `summary` (or of one point of a
/// multi-point result, which has the same shape).
pub fn extract(kind: &str, summary: &Value) -> Figures {
    let mut f = Figures::default();
    if !summary.is_object() {
        return f;
    }
    if summary.get("small").is_some_and(Value::is_object)
        || summary.get("large").is_some_and(Value::is_object)
    {
        stream_sections(&mut f, summary);
        return f;
    }
    if kind == "calibrate" || summary.get("max_iops").is_some() {
        calibrate_sections(&mut f, summary);
    }
    if summary.get("db").is_some_and(Value::is_object) {
        // The raw sections (if any) first: they take precedence in the common columns.
        io_sections(&mut f, summary);
        db_sections(&mut f, summary);
        return f;
    }
    if f.is_empty() {
        io_sections(&mut f, summary);
    }
    f
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
