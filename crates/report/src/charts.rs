//! The report's charts: latency vs IOPS (one line per configuration, the
//! chart DBAs build by hand), IOPS vs concurrency with the peak annotated,
//! latency percentiles per point, and each point's per-second time series.

use crate::analysis::{at_text, Analysis};
use crate::fmt;
use crate::load::Point;
use crate::svg::{auto_scale, document, Annotation, Axis, Chart, HLine, Line, Scale};

/// Width and height of the summary charts, pixels.
pub const SIZE: (u32, u32) = (860, 480);
/// Width and height of a time-series chart (two panels), pixels.
pub const TS_SIZE: (u32, u32) = (860, 600);

/// One chart of the report.
#[derive(Debug, Clone)]
pub struct ChartFile {
    /// Path under the report directory, without extension (`charts/latency-vs-iops`).
    pub stem: String,
    /// Title.
    pub title: String,
    /// The SVG document.
    pub svg: String,
    /// The point it shows, for per-point charts.
    pub point: Option<usize>,
}

fn si(v: f64) -> String {
    let a = v.abs();
    if a >= 1e6 {
        format!("{}M", fmt::sig(v / 1e6))
    } else if a >= 1e4 {
        format!("{}k", fmt::sig(v / 1e3))
    } else {
        fmt::sig(v)
    }
}

fn lat_tick(v: f64) -> String {
    fmt::latency_us(v)
}

fn plain(v: f64) -> String {
    fmt::csv_number(v)
}

fn axis(title: &str, scale: Scale, format: fn(f64) -> String) -> Axis {
    Axis {
        title: title.to_string(),
        scale,
        format,
    }
}

/// Every chart for these points.
pub fn all(points: &[Point], a: &Analysis) -> Vec<ChartFile> {
    let mut out = Vec::new();
    out.extend(latency_vs_iops(points, a));
    out.extend(iops_vs_concurrency(points, a));
    out.extend(percentiles(points));
    for (i, p) in points.iter().enumerate() {
        out.extend(timeseries(i, p));
    }
    out
}

fn lat_op_title(points: &[Point], a: &Analysis) -> &'static str {
    let mut ops = a
        .series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| points[p.index].figures.lat_op()));
    let first = ops.next().unwrap_or("read");
    if ops.all(|o| o == first) {
        first
    } else {
        "main operation"
    }
}

/// Latency vs IOPS, one line per series (solid mean, dashed p99).
pub fn latency_vs_iops(points: &[Point], a: &Analysis) -> Option<ChartFile> {
    let any = a
        .series
        .iter()
        .any(|s| s.points.iter().any(|p| p.lat_mean_us.is_some()));
    if !any {
        return None;
    }
    let lats: Vec<f64> = a
        .series
        .iter()
        .flat_map(|s| s.points.iter())
        .flat_map(|p| [p.lat_mean_us, p.lat_p99_us])
        .flatten()
        .collect();
    let op = lat_op_title(points, a);
    let mut c = Chart::new(
        "Latency vs IOPS",
        axis("IOPS", Scale::Linear, si),
        axis(&format!("{op} latency"), auto_scale(&lats, 30.0), lat_tick),
    );
    c.subtitle = format!(
        "one line per configuration{}; solid: mean, dashed: p99; SLO {}",
        a.axis
            .as_ref()
            .map_or(String::new(), |ax| format!(", points in {ax} order")),
        fmt::latency_us(a.slo_us)
    );
    let connect = a.axis.is_some();
    for (i, s) in a.series.iter().enumerate() {
        let mean: Vec<(f64, f64)> = s
            .points
            .iter()
            .filter_map(|p| p.lat_mean_us.map(|l| (p.iops, l)))
            .collect();
        let p99: Vec<(f64, f64)> = s
            .points
            .iter()
            .filter_map(|p| p.lat_p99_us.map(|l| (p.iops, l)))
            .collect();
        c.lines.push(Line {
            label: s.label.clone(),
            points: mean,
            color: i,
            dashed: false,
            connect,
        });
        if !p99.is_empty() {
            c.lines.push(Line {
                label: String::new(),
                points: p99,
                color: i,
                dashed: true,
                connect,
            });
        }
    }
    c.hlines.push(HLine {
        y: a.slo_us,
        label: format!("SLO {}", fmt::latency_us(a.slo_us)),
    });
    if let Some(best) = a
        .series
        .iter()
        .filter_map(|s| s.knee.within_slo.as_ref())
        .max_by(|x, y| x.iops.total_cmp(&y.iops))
    {
        if let Some(l) = best.lat_mean_us {
            c.notes.push(Annotation {
                x: best.iops,
                y: l,
                text: format!("{} IOPS within SLO", fmt::count(best.iops)),
            });
        }
    }
    Some(ChartFile {
        stem: "charts/latency-vs-iops".into(),
        title: c.title.clone(),
        svg: c.to_svg(SIZE.0, SIZE.1),
        point: None,
    })
}

/// IOPS vs the concurrency axis, one line per series, the peak annotated.
pub fn iops_vs_concurrency(points: &[Point], a: &Analysis) -> Option<ChartFile> {
    let ax = a.axis.as_ref()?;
    let xs: Vec<f64> = a
        .series
        .iter()
        .flat_map(|s| s.points.iter().filter_map(|p| p.x))
        .collect();
    let lo = xs.iter().copied().fold(f64::MAX, f64::min);
    let hi = xs.iter().copied().fold(f64::MIN, f64::max);
    let scale = if lo > 0.0 && hi / lo >= 8.0 {
        Scale::Log2
    } else {
        Scale::Linear
    };
    let mut c = Chart::new(
        &format!("IOPS vs {ax}"),
        axis(ax, scale, plain),
        axis("IOPS", Scale::Linear, si),
    );
    c.subtitle = "one line per configuration; the peak is marked".into();
    for (i, s) in a.series.iter().enumerate() {
        c.lines.push(Line {
            label: s.label.clone(),
            points: s
                .points
                .iter()
                .filter_map(|p| p.x.map(|x| (x, p.iops)))
                .collect(),
            color: i,
            dashed: false,
            connect: true,
        });
    }
    let peak = a
        .series
        .iter()
        .filter_map(|s| s.knee.peak.as_ref())
        .filter(|p| p.x.is_some())
        .max_by(|x, y| x.iops.total_cmp(&y.iops))?;
    let x = peak.x?;
    c.notes.push(Annotation {
        x,
        y: peak.iops,
        text: format!("max {} IOPS {}", fmt::count(peak.iops), at_text(ax, x)),
    });
    let _ = points;
    Some(ChartFile {
        stem: "charts/iops-vs-concurrency".into(),
        title: c.title.clone(),
        svg: c.to_svg(SIZE.0, SIZE.1),
        point: None,
    })
}

/// Short, unique labels for points on a categorical axis.
pub fn point_labels(points: &[Point], idx: &[usize]) -> Vec<String> {
    let mut labels: Vec<String> = idx
        .iter()
        .map(|&i| {
            let l = points[i].params_label();
            if l.is_empty() {
                points[i].id.rsplit('/').next().unwrap_or("").to_string()
            } else {
                l
            }
        })
        .collect();
    let dup = {
        let mut s = labels.clone();
        s.sort();
        s.windows(2).any(|w| w[0] == w[1])
    };
    if dup {
        labels = idx.iter().map(|&i| points[i].id.clone()).collect();
    }
    labels
}

/// Latency percentiles of each usable point.
pub fn percentiles(points: &[Point]) -> Option<ChartFile> {
    let idx: Vec<usize> = (0..points.len())
        .filter(|&i| points[i].usable() && !points[i].figures.percentiles().is_empty())
        .collect();
    if idx.is_empty() {
        return None;
    }
    let stats = ["mean", "p50", "p99", "p99.9", "max"];
    let vals: Vec<f64> = idx
        .iter()
        .flat_map(|&i| points[i].figures.percentiles())
        .map(|(_, v)| v)
        .collect();
    let mut c = Chart::new(
        "Latency percentiles per point",
        axis("point", Scale::Linear, plain),
        axis("latency", auto_scale(&vals, 20.0), lat_tick),
    );
    c.subtitle = "reads where the point reads, else writes; HDR histograms, within 0.78 %".into();
    c.categories = Some(point_labels(points, &idx));
    for (k, stat) in stats.iter().enumerate() {
        let pts: Vec<(f64, f64)> = idx
            .iter()
            .enumerate()
            .filter_map(|(j, &i)| {
                points[i]
                    .figures
                    .percentiles()
                    .into_iter()
                    .find(|(l, _)| l == stat)
                    .map(|(_, v)| (j as f64, v))
            })
            .collect();
        if pts.is_empty() {
            continue;
        }
        c.lines.push(Line {
            label: stat.to_string(),
            points: pts,
            color: k,
            dashed: *stat == "max",
            connect: true,
        });
    }
    Some(ChartFile {
        stem: "charts/latency-percentiles".into(),
        title: c.title.clone(),
        svg: c.to_svg(SIZE.0, SIZE.1),
        point: None,
    })
}

/// A file-name-safe form of a point id.
pub fn safe_name(s: &str) -> String {
    let t: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '=') {
                c
            } else {
                '_'
            }
        })
        .collect();
    t.chars().take(80).collect()
}

/// The per-second chart of one point: IOPS above, latency below.
pub fn timeseries(index: usize, p: &Point) -> Option<ChartFile> {
    let ts = p.timeseries.as_ref()?;
    let secs = ts.seconds();
    let pick = |pred: &dyn Fn(&str) -> bool| -> Vec<(String, Vec<(f64, f64)>)> {
        ts.header
            .iter()
            .filter(|h| pred(h))
            .filter_map(|h| {
                let col = ts.column(h)?;
                let pts: Vec<(f64, f64)> = secs
                    .iter()
                    .zip(col)
                    .filter_map(|(s, v)| v.map(|v| (*s, v)))
                    .collect();
                pts.iter().any(|(_, v)| *v > 0.0).then(|| (h.clone(), pts))
            })
            .collect()
    };
    let iops = pick(&|h| h.ends_with("_iops") || h == "iops");
    let lats = pick(&|h| h.contains("lat") && h.ends_with("_us"));
    if iops.is_empty() && lats.is_empty() {
        return None;
    }
    let shade = ts.text_column("phase").and_then(|ph| {
        let end = ph
            .iter()
            .zip(&secs)
            .filter(|(p, _)| matches!(**p, "ramp" | "warmup" | "warm-up" | "load"))
            .map(|(_, s)| *s)
            .fold(None, |m: Option<f64>, s| Some(m.map_or(s, |m| m.max(s))));
        end.map(|e| (0.0, e, "ramp (not counted)".to_string()))
    });
    let title = format!("{} per second", p.id);
    let mut top = Chart::new(
        &title,
        axis("seconds", Scale::Linear, plain),
        axis("IOPS", Scale::Linear, si),
    );
    top.subtitle = format!("{} [{}]", p.params_label(), p.status);
    top.shade = shade.clone();
    for (k, (name, pts)) in iops.into_iter().enumerate() {
        top.lines.push(Line {
            label: name,
            points: pts,
            color: k,
            dashed: false,
            connect: true,
        });
    }
    let lat_vals: Vec<f64> = lats
        .iter()
        .flat_map(|(_, p)| p.iter().map(|(_, v)| *v))
        .collect();
    let mut bottom = Chart::new(
        "",
        axis("seconds", Scale::Linear, plain),
        axis("latency", auto_scale(&lat_vals, 50.0), lat_tick),
    );
    bottom.shade = shade;
    for (k, (name, pts)) in lats.into_iter().enumerate() {
        bottom.lines.push(Line {
            dashed: name.contains("p99"),
            label: name,
            points: pts,
            color: k + 2,
            connect: true,
        });
    }
    let (w, h) = TS_SIZE;
    let svg = document(w, h, &title, &[(&top, 0.52), (&bottom, 0.48)]);
    Some(ChartFile {
        stem: format!("charts/timeseries/{:03}-{}", index + 1, safe_name(&p.id)),
        title,
        svg,
        point: Some(index),
    })
}
