//! Series and knees: which points belong together (one line per
//! configuration), along which concurrency axis, and where each series stops
//! scaling.
//!
//! - The **concurrency axis** is the first parameter of [`CONCURRENCY_KEYS`]
//!   that takes more than one value among the usable points.
//! - A **series** is a set of points that share every other parameter (and
//!   the sweep and kind), ordered along the axis.
//! - The **SLO knee** is the highest IOPS whose mean and p99 latency (of the
//!   main operation: reads when the point reads, else writes) both stay within
//!   the latency SLO.
//! - The **saturation point** is the lowest concurrency beyond which IOPS no
//!   longer grows by more than [`GROWTH`] (5 %).

use crate::fmt;
use crate::load::{value_text, Point};
use serde::Serialize;
use serde_json::Value;

/// Parameters that measure concurrency, the most telling first.
pub const CONCURRENCY_KEYS: &[&str] = &[
    "sessions",
    "threads",
    "qd",
    "iodepth",
    "numjobs",
    "outstanding",
    "num_small",
    "small_load",
    "small",
    "clients",
    "users",
    "concurrency",
];

/// Growth below which IOPS is taken as flat (0.05 = 5 %).
pub const GROWTH: f64 = 0.05;

/// A point of a series, as charted.
#[derive(Debug, Clone)]
pub struct SeriesPoint {
    /// Index into the report's points.
    pub index: usize,
    /// Position on the concurrency axis, when there is one.
    pub x: Option<f64>,
    /// Total IOPS.
    pub iops: f64,
    /// Mean latency of the main operation, µs.
    pub lat_mean_us: Option<f64>,
    /// p99 latency of the main operation, µs.
    pub lat_p99_us: Option<f64>,
}

/// Where a series peaks, stops scaling, and how far it goes within the SLO.
#[derive(Debug, Clone, Default)]
pub struct Knee {
    /// The point with the most IOPS.
    pub peak: Option<SeriesPoint>,
    /// The point with the most IOPS whose mean and p99 latency are within the SLO.
    pub within_slo: Option<SeriesPoint>,
    /// The lowest concurrency beyond which IOPS no longer grows.
    pub saturation: Option<SeriesPoint>,
    /// IOPS still grows at the highest concurrency measured.
    pub still_growing: bool,
}

/// Points that belong together, in axis order.
#[derive(Debug, Clone)]
pub struct Series {
    /// What the points share (`rw=randread bs=8k`), or the sweep's name.
    pub label: String,
    /// The usable points, ordered along the axis.
    pub points: Vec<SeriesPoint>,
    /// Knee figures.
    pub knee: Knee,
}

/// The series of a set of points, with their knees.
#[derive(Debug, Clone)]
pub struct Analysis {
    /// The concurrency parameter, when one varies.
    pub axis: Option<String>,
    /// One per configuration.
    pub series: Vec<Series>,
    /// The series label of each point (also of points that are not usable).
    pub point_series: Vec<String>,
    /// Latency SLO in µs.
    pub slo_us: f64,
}

/// A parameter value as a number (`16`, `"16"`, `"8k"` → 8192).
pub fn numeric(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => {
            let t = s.trim();
            t.parse::<f64>().ok().or_else(|| {
                let (num, mult) = match t.to_ascii_lowercase().chars().last()? {
                    'k' => (&t[..t.len() - 1], 1024.0),
                    'm' => (&t[..t.len() - 1], 1024.0 * 1024.0),
                    'g' => (&t[..t.len() - 1], 1024.0 * 1024.0 * 1024.0),
                    _ => return None,
                };
                num.parse::<f64>().ok().map(|n| n * mult)
            })
        }
        _ => None,
    }
}

/// "at 15 sessions" or "at qd=16".
pub fn at_text(axis: &str, x: f64) -> String {
    let v = fmt::csv_number(x);
    match axis {
        "sessions" | "threads" | "clients" | "users" => format!("at {v} {axis}"),
        _ => format!("at {axis}={v}"),
    }
}

fn pick_axis(points: &[Point]) -> Option<String> {
    CONCURRENCY_KEYS.iter().find_map(|k| {
        let mut vals: Vec<f64> = points
            .iter()
            .filter(|p| p.usable())
            .filter_map(|p| p.param(k).and_then(numeric))
            .collect();
        vals.sort_by(f64::total_cmp);
        vals.dedup();
        (vals.len() > 1).then(|| k.to_string())
    })
}

fn series_label(p: &Point, axis: Option<&str>, many_sweeps: bool, many_kinds: bool) -> String {
    let mut parts = Vec::new();
    if many_kinds {
        parts.push(p.kind.clone());
    }
    if many_sweeps {
        if let Some(s) = &p.sweep {
            parts.push(s.clone());
        }
    }
    for (k, v) in &p.params {
        if Some(k.as_str()) != axis {
            parts.push(format!("{k}={}", value_text(v)));
        }
    }
    if parts.is_empty() {
        p.sweep.clone().unwrap_or_else(|| {
            if p.name.is_empty() {
                "all points".into()
            } else {
                p.name.clone()
            }
        })
    } else {
        parts.join(" ")
    }
}

impl Analysis {
    /// Groups `points` into series and finds each series' knee.
    pub fn new(points: &[Point], slo_us: f64) -> Analysis {
        let axis = pick_axis(points);
        let distinct = |f: &dyn Fn(&Point) -> Option<String>| {
            let mut v: Vec<String> = points.iter().filter_map(f).collect();
            v.sort();
            v.dedup();
            v.len() > 1
        };
        let many_sweeps = distinct(&|p| p.sweep.clone());
        let many_kinds = distinct(&|p| Some(p.kind.clone()));
        let point_series: Vec<String> = points
            .iter()
            .map(|p| series_label(p, axis.as_deref(), many_sweeps, many_kinds))
            .collect();
        let mut series: Vec<Series> = Vec::new();
        for (i, p) in points.iter().enumerate() {
            if !p.usable() {
                continue;
            }
            let sp = SeriesPoint {
                index: i,
                x: axis.as_deref().and_then(|a| p.param(a)).and_then(numeric),
                iops: p.figures.iops().unwrap_or(0.0),
                lat_mean_us: p.figures.lat_mean_us(),
                lat_p99_us: p.figures.lat_p99_us(),
            };
            match series.iter_mut().find(|s| s.label == point_series[i]) {
                Some(s) => s.points.push(sp),
                None => series.push(Series {
                    label: point_series[i].clone(),
                    points: vec![sp],
                    knee: Knee::default(),
                }),
            }
        }
        for s in &mut series {
            if axis.is_some() {
                s.points
                    .sort_by(|a, b| a.x.unwrap_or(f64::MAX).total_cmp(&b.x.unwrap_or(f64::MAX)));
            }
            s.knee = knee(&s.points, slo_us, axis.is_some());
        }
        Analysis {
            axis,
            series,
            point_series,
            slo_us,
        }
    }

    /// The knee lines, as printed and shown in the report.
    pub fn knee_lines(&self) -> Vec<String> {
        let slo = fmt::latency_us(self.slo_us);
        self.series
            .iter()
            .map(|s| {
                let at = |p: &SeriesPoint| match (&self.axis, p.x) {
                    (Some(a), Some(x)) => format!(" {}", at_text(a, x)),
                    _ => String::new(),
                };
                let mut parts = Vec::new();
                if let Some(p) = &s.knee.peak {
                    parts.push(format!("max {} IOPS{}", fmt::count(p.iops), at(p)));
                }
                match &s.knee.within_slo {
                    Some(p) => parts.push(format!(
                        "within {slo} (mean {}, p99 {}): {} IOPS{}",
                        p.lat_mean_us.map_or("-".into(), fmt::latency_us),
                        p.lat_p99_us.map_or("-".into(), fmt::latency_us),
                        fmt::count(p.iops),
                        at(p)
                    )),
                    None => parts.push(format!("no point within {slo}")),
                }
                if let (Some(p), Some(a)) = (&s.knee.saturation, &self.axis) {
                    if s.knee.still_growing {
                        parts.push(format!(
                            "IOPS still growing {}",
                            at_text(a, p.x.unwrap_or(0.0))
                        ));
                    } else {
                        parts.push(format!(
                            "IOPS stop growing beyond {} ({} IOPS)",
                            at_text(a, p.x.unwrap_or(0.0)).trim_start_matches("at "),
                            fmt::count(p.iops)
                        ));
                    }
                }
                format!("{}: {}", s.label, parts.join("; "))
            })
            .collect()
    }

    /// The series and knees for report.json.
    pub fn series_json<'a>(&'a self, points: &'a [Point]) -> Vec<SeriesJson<'a>> {
        let pj = |p: &Option<SeriesPoint>| {
            p.as_ref().map(|p| SeriesPointJson {
                id: &points[p.index].id,
                iops: p.iops,
                lat_mean_us: p.lat_mean_us,
                lat_p99_us: p.lat_p99_us,
                x: p.x,
            })
        };
        self.series
            .iter()
            .map(|s| SeriesJson {
                label: &s.label,
                peak: pj(&s.knee.peak),
                points: s
                    .points
                    .iter()
                    .map(|p| points[p.index].id.as_str())
                    .collect(),
                saturation: pj(&s.knee.saturation),
                still_growing: s.knee.still_growing,
                within_slo: pj(&s.knee.within_slo),
            })
            .collect()
    }
}

/// One entry of `series` in `report.json`, fields in the order they are written.
#[derive(Debug, Serialize)]
pub struct SeriesJson<'a> {
    pub label: &'a str,
    pub peak: Option<SeriesPointJson<'a>>,
    pub points: Vec<&'a str>,
    pub saturation: Option<SeriesPointJson<'a>>,
    pub still_growing: bool,
    pub within_slo: Option<SeriesPointJson<'a>>,
}

/// A point of a series in `report.json`.
#[derive(Debug, Serialize)]
pub struct SeriesPointJson<'a> {
    pub id: &'a str,
    pub iops: f64,
    pub lat_mean_us: Option<f64>,
    pub lat_p99_us: Option<f64>,
    pub x: Option<f64>,
}

/// The knee of one series (points in axis order when `ordered`).
pub fn knee(points: &[SeriesPoint], slo_us: f64, ordered: bool) -> Knee {
    let best = |it: &mut dyn Iterator<Item = &SeriesPoint>| {
        it.fold(None::<&SeriesPoint>, |b, p| match b {
            Some(b) if b.iops >= p.iops => Some(b),
            _ => Some(p),
        })
        .cloned()
    };
    let peak = best(&mut points.iter());
    let within_slo = best(&mut points.iter().filter(|p| {
        p.lat_mean_us.is_some_and(|m| m <= slo_us) && p.lat_p99_us.is_none_or(|v| v <= slo_us)
    }));
    let mut k = Knee {
        peak,
        within_slo,
        ..Knee::default()
    };
    let along: Vec<&SeriesPoint> = points.iter().filter(|p| p.x.is_some()).collect();
    if ordered && along.len() > 1 {
        let i = (0..along.len())
            .find(|&i| {
                along[i + 1..]
                    .iter()
                    .all(|q| q.iops <= along[i].iops * (1.0 + GROWTH))
            })
            .unwrap_or(along.len() - 1);
        k.saturation = Some(along[i].clone());
        k.still_growing = i == along.len() - 1;
    }
    k
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sp(x: f64, iops: f64, mean: f64, p99: f64) -> SeriesPoint {
        SeriesPoint {
            index: 0,
            x: Some(x),
            iops,
            lat_mean_us: Some(mean),
            lat_p99_us: Some(p99),
        }
    }

    #[test]
    fn knee_finds_peak_slo_and_saturation() {
        let pts = vec![
            sp(1.0, 5000.0, 200.0, 400.0),
            sp(2.0, 9800.0, 205.0, 500.0),
            sp(4.0, 18000.0, 220.0, 900.0),
            sp(8.0, 22000.0, 360.0, 1500.0),
            sp(16.0, 22581.0, 700.0, 3000.0),
            sp(32.0, 22300.0, 1400.0, 6000.0),
        ];
        let k = knee(&pts, 1000.0, true);
        assert_eq!(k.peak.unwrap().x, Some(16.0));
        // qd 8 has mean within 1 ms but p99 above: the SLO knee is qd 4
        assert_eq!(k.within_slo.unwrap().x, Some(4.0));
        // 22,000 → 22,581 is less than 5 %: saturation at 8
        assert_eq!(k.saturation.unwrap().x, Some(8.0));
        assert!(!k.still_growing);
    }

    #[test]
    fn a_series_still_growing_says_so() {
        let pts = vec![sp(1.0, 100.0, 10.0, 20.0), sp(2.0, 200.0, 10.0, 20.0)];
        let k = knee(&pts, 5.0, true);
        assert!(k.within_slo.is_none());
        assert!(k.still_growing);
        assert_eq!(k.saturation.unwrap().x, Some(2.0));
    }

    #[test]
    fn parameter_values_become_numbers() {
        assert_eq!(numeric(&json!(16)), Some(16.0));
        assert_eq!(numeric(&json!("8k")), Some(8192.0));
        assert_eq!(numeric(&json!("32")), Some(32.0));
        assert_eq!(numeric(&json!("randread")), None);
        assert_eq!(at_text("sessions", 15.0), "at 15 sessions");
        assert_eq!(at_text("qd", 16.0), "at qd=16");
    }
}
