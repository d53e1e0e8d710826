//! `iolens compare`: systems or configurations side by side, one column per
//! input directory, one row per figure that some input has, and ratio columns
//! against the first input (the baseline).

use crate::analysis::Analysis;
use crate::export::{CsvExporter, Exporter, MarkdownExporter, TableExporter};
use crate::fmt;
use crate::load::Point;

/// Output format of the comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Aligned columns for the terminal.
    Table,
    /// A GitHub-flavoured Markdown table.
    Markdown,
    /// CSV with plain numbers.
    Csv,
}

/// One column: the points of one input directory.
#[derive(Debug, Clone)]
pub struct Group {
    /// Column title.
    pub label: String,
    /// Its points.
    pub points: Vec<Point>,
}

/// One row: a figure for each group (or text, for descriptive rows).
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// What the row shows, with its unit.
    pub label: String,
    /// The key used in CSV output.
    pub key: &'static str,
    /// One value per group.
    pub values: Vec<Cell>,
    /// Whether ratio columns make sense for the row.
    pub ratio: bool,
}

/// A cell of the comparison.
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    /// No such figure.
    Empty,
    /// A number.
    Num(f64),
    /// Text.
    Text(String),
}

/// The comparison table.
#[derive(Debug, Clone)]
pub struct Comparison {
    /// Column titles.
    pub labels: Vec<String>,
    /// Rows that at least one group has.
    pub rows: Vec<Row>,
}

/// Default column titles: the hosts when each input comes from its own host,
/// else the sweep's or the result's name, else the directory's name.
pub fn default_label(dir_name: &str, points: &[Point], hosts_differ: bool) -> String {
    if hosts_differ {
        if let Some(p) = points.first() {
            if !p.host.is_empty() {
                return p.host.clone();
            }
        }
    }
    let mut sweeps: Vec<&str> = points.iter().filter_map(|p| p.sweep.as_deref()).collect();
    sweeps.dedup();
    if sweeps.len() == 1 && points.iter().all(|p| p.sweep.is_some()) {
        return sweeps[0].to_string();
    }
    if points.len() == 1 && !points[0].name.is_empty() {
        return points[0].name.clone();
    }
    dir_name.to_string()
}

fn usable(g: &Group) -> impl Iterator<Item = &Point> {
    g.points.iter().filter(|p| p.usable())
}

fn max_by_fig<'a>(g: &'a Group, key: &str) -> Option<&'a Point> {
    usable(g)
        .filter(|p| p.figures.get(key).is_some())
        .max_by(|a, b| {
            a.figures
                .get(key)
                .unwrap_or(0.0)
                .total_cmp(&b.figures.get(key).unwrap_or(0.0))
        })
}

fn sequential(p: &Point) -> bool {
    matches!(
        p.config.get("rw").and_then(|v| v.as_str()),
        Some("read" | "write" | "rw")
    )
}

/// Builds the comparison. `slo_us` adds the "IOPS within SLO" row.
pub fn compare(groups: &[Group], slo_us: Option<f64>) -> Comparison {
    let mut rows = Rows {
        groups,
        rows: Vec::new(),
    };
    identity_rows(&mut rows);
    iops_rows(&mut rows, slo_us);
    throughput_rows(&mut rows);
    db_rows(&mut rows);
    Comparison {
        labels: groups.iter().map(|g| g.label.clone()).collect(),
        rows: rows.rows,
    }
}

/// The rows being built: one cell per group, and a row is kept only when some group has a value.
struct Rows<'a> {
    groups: &'a [Group],
    rows: Vec<Row>,
}

impl Rows<'_> {
    fn push(&mut self, key: &'static str, label: &str, ratio: bool, cell: impl Fn(&Group) -> Cell) {
        let values: Vec<Cell> = self.groups.iter().map(cell).collect();
        if values.iter().any(|c| *c != Cell::Empty) {
            self.rows.push(Row {
                label: label.to_string(),
                key,
                values,
                ratio,
            });
        }
    }

    fn text(&mut self, key: &'static str, label: &str, f: impl Fn(&Group) -> Option<String>) {
        self.push(key, label, false, |g| f(g).map_or(Cell::Empty, Cell::Text));
    }

    fn num(
        &mut self,
        key: &'static str,
        label: &str,
        ratio: bool,
        f: impl Fn(&Group) -> Option<f64>,
    ) {
        self.push(key, label, ratio, |g| f(g).map_or(Cell::Empty, Cell::Num));
    }
}

/// The figure `key` of a point.
fn fig_of(key: &'static str) -> impl Fn(&Point) -> Option<f64> {
    move |p: &Point| p.figures.get(key)
}

/// Which hosts and kinds each group holds, and how many of its points finished.
fn identity_rows(rows: &mut Rows) {
    rows.text("host", "host", |g| {
        let mut h: Vec<&str> = g
            .points
            .iter()
            .map(|p| p.host.as_str())
            .filter(|h| !h.is_empty())
            .collect();
        h.sort();
        h.dedup();
        (!h.is_empty()).then(|| h.join(", "))
    });
    rows.text("kind", "kind", |g| {
        let mut k: Vec<&str> = g.points.iter().map(|p| p.kind.as_str()).collect();
        k.sort();
        k.dedup();
        (!k.is_empty()).then(|| k.join(", "))
    });
    rows.text("points", "points (finished / all)", |g| {
        Some(format!("{} / {}", usable(g).count(), g.points.len()))
    });
}

/// The best IOPS, its latencies, and the IOPS within the SLO.
fn iops_rows(rows: &mut Rows, slo_us: Option<f64>) {
    rows.num("max_iops", "max IOPS", true, |g| {
        max_by_fig(g, "iops").and_then(fig_of("iops"))
    });
    rows.text("max_iops_at", "max IOPS at", |g| {
        max_by_fig(g, "iops").map(|p| {
            let l = p.params_label();
            if l.is_empty() {
                p.id.clone()
            } else {
                l
            }
        })
    });
    rows.num(
        "lat_mean_at_max_iops_us",
        "mean latency at max IOPS (µs)",
        true,
        |g| max_by_fig(g, "iops").and_then(|p| p.figures.lat_mean_us()),
    );
    rows.num(
        "lat_p99_at_max_iops_us",
        "p99 latency at max IOPS (µs)",
        true,
        |g| max_by_fig(g, "iops").and_then(|p| p.figures.lat_p99_us()),
    );
    rows.num("min_lat_mean_us", "lowest mean latency (µs)", true, |g| {
        usable(g)
            .filter_map(|p| p.figures.lat_mean_us())
            .min_by(f64::total_cmp)
    });
    if let Some(slo) = slo_us {
        let label = format!("IOPS within {} (mean and p99)", fmt::latency_us(slo));
        rows.num("iops_within_slo", &label, true, |g| {
            let a = Analysis::new(&g.points, slo);
            a.series
                .iter()
                .filter_map(|s| s.knee.within_slo.as_ref().map(|p| p.iops))
                .max_by(f64::total_cmp)
        });
    }
}

/// Bandwidth and CPU efficiency.
fn throughput_rows(rows: &mut Rows) {
    rows.num("max_mbps", "max MB/s", true, |g| {
        max_by_fig(g, "mbps").and_then(fig_of("mbps"))
    });
    rows.num("seq_mbps", "sequential MB/s", true, |g| {
        usable(g)
            .filter(|p| sequential(p))
            .filter_map(|p| p.figures.get("mbps"))
            .max_by(f64::total_cmp)
    });
    rows.num("iops_per_cpu_s", "IOPS per CPU-second", true, |g| {
        max_by_fig(g, "iops_per_cpu_s").and_then(fig_of("iops_per_cpu_s"))
    });
}

/// The database's own figures.
fn db_rows(rows: &mut Rows) {
    rows.num(
        "db_physical_read_iops",
        "db physical read IOPS",
        true,
        |g| max_by_fig(g, "db_physical_read_iops").and_then(fig_of("db_physical_read_iops")),
    );
    rows.num(
        "db_read_lat_us",
        "db read latency at max db IOPS (µs)",
        true,
        |g| max_by_fig(g, "db_physical_read_iops").and_then(fig_of("db_read_lat_us")),
    );
    rows.num("os_read_iops", "device reads/s at max db IOPS", true, |g| {
        max_by_fig(g, "db_physical_read_iops").and_then(fig_of("os_read_iops"))
    });
    rows.num(
        "os_cache_hit_pct",
        "db reads served by the OS page cache (%)",
        false,
        |g| max_by_fig(g, "db_physical_read_iops").and_then(fig_of("os_cache_hit_pct")),
    );
    rows.num(
        "db_reads_per_cpu_s",
        "db reads per DB CPU-second",
        true,
        |g| max_by_fig(g, "db_reads_per_cpu_s").and_then(fig_of("db_reads_per_cpu_s")),
    );
    rows.num("db_tps", "db transactions/s", true, |g| {
        max_by_fig(g, "db_tps").and_then(fig_of("db_tps"))
    });
}

fn show(c: &Cell, key: &str) -> String {
    match c {
        Cell::Empty => "-".into(),
        Cell::Text(t) => t.clone(),
        Cell::Num(v) => {
            if key.ends_with("_us") || key.ends_with("_pct") || key.contains("mbps") {
                fmt::sig(*v)
            } else {
                fmt::count(*v)
            }
        }
    }
}

impl Row {
    /// The ratio of column `j` to the first column, where both are numbers.
    pub fn ratio(&self, j: usize) -> Option<f64> {
        match (&self.values[0], &self.values[j]) {
            (Cell::Num(a), Cell::Num(b)) if self.ratio && *a != 0.0 => Some(b / a),
            _ => None,
        }
    }
}

impl Format {
    /// The exporter that writes this format.
    pub fn exporter(self) -> Box<dyn Exporter<Comparison>> {
        match self {
            Format::Table => Box::new(TableExporter),
            Format::Markdown => Box::new(MarkdownExporter),
            Format::Csv => Box::new(CsvExporter),
        }
    }
}

impl Comparison {
    /// Header: figure, each label, and a ratio column after every column but the first.
    fn header(&self) -> Vec<String> {
        let mut h = vec!["figure".to_string()];
        for (j, l) in self.labels.iter().enumerate() {
            h.push(l.clone());
            if j > 0 {
                h.push(format!("{l} / {}", self.labels[0]));
            }
        }
        h
    }

    /// The header and the rows as people read them (grouped numbers, `-`
    /// for a missing figure, ratios such as `2x`).
    pub(crate) fn display_rows(&self) -> Vec<Vec<String>> {
        let mut rows = vec![self.header()];
        for r in &self.rows {
            let mut cells = vec![r.label.clone()];
            for (j, c) in r.values.iter().enumerate() {
                cells.push(show(c, r.key));
                if j > 0 {
                    cells.push(r.ratio(j).map(fmt::ratio).unwrap_or_default());
                }
            }
            rows.push(cells);
        }
        rows
    }

    /// The comparison in `format`.
    pub fn render(&self, format: Format) -> String {
        let bytes = format
            .exporter()
            .serialize(self)
            .expect("a comparison always serializes");
        String::from_utf8(bytes).expect("exporters write UTF-8")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::Figures;
    use serde_json::json;

    fn point(host: &str, iops: f64, lat: f64, qd: i64) -> Point {
        let mut f = Figures::default();
        f.0.insert("iops", iops);
        f.0.insert("read_iops", iops);
        f.0.insert("read_lat_mean_us", lat);
        f.0.insert("read_lat_p99_us", lat * 2.0);
        let dir = std::env::temp_dir();
        let mut p = crate::load::tests_point(&dir, host);
        p.figures = f;
        p.params = vec![("qd".into(), json!(qd))];
        p
    }

    #[test]
    fn columns_ratios_and_formats() {
        let a = Group {
            label: "A".into(),
            points: vec![point("a", 1000.0, 100.0, 1), point("a", 4000.0, 400.0, 4)],
        };
        let b = Group {
            label: "B".into(),
            points: vec![point("b", 2000.0, 50.0, 1), point("b", 8000.0, 200.0, 4)],
        };
        let c = compare(&[a, b], Some(500.0));
        let max = c.rows.iter().find(|r| r.key == "max_iops").unwrap();
        assert_eq!(max.values, vec![Cell::Num(4000.0), Cell::Num(8000.0)]);
        assert_eq!(max.ratio(1), Some(2.0));
        // p99 of qd=4 in A is 800 µs > 500: within SLO is qd=1 for A, and qd=1 for B (p99 400 at qd=4? no: 400 µs ≤ 500)
        let slo = c.rows.iter().find(|r| r.key == "iops_within_slo").unwrap();
        assert_eq!(slo.values, vec![Cell::Num(1000.0), Cell::Num(8000.0)]);
        assert!(!c.rows.iter().any(|r| r.key == "db_physical_read_iops"));
        let t = c.render(Format::Table);
        assert!(t.contains("max IOPS"), "{t}");
        assert!(t.contains("2x"), "{t}");
        let md = c.render(Format::Markdown);
        assert!(
            md.starts_with("| figure | A | B | B / A |\n| --- | ---: | ---: | ---: |\n"),
            "{md}"
        );
        let csv = c.render(Format::Csv);
        assert!(csv.contains("max_iops,4000,8000,2\n"), "{csv}");
    }
}
