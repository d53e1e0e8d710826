//! Building a report from result directories and writing it:
//! `report.csv`, `report.json`, `report.html` and `charts/*.svg|png`.

use crate::analysis::{Analysis, SeriesJson};
use crate::charts::{self, ChartFile};
use crate::export::{CsvExporter, Exporter, HtmlExporter, JsonExporter, PngExporter, SvgExporter};
use crate::figures::{Column, COLUMNS};
use crate::load::{self, value_text, Point};
use crate::raster::Rasterizer;
use crate::{fmt, ReportError};
use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The schema identifier of `report.json`.
pub const REPORT_SCHEMA: &str = "iolens.report/1";

/// What the user asked of the report.
#[derive(Debug, Clone)]
pub struct Options {
    /// Latency objective for the knee, µs.
    pub latency_slo_us: f64,
    /// Title of the HTML page.
    pub title: Option<String>,
    /// Write PNG files beside the SVG charts.
    pub png: bool,
    /// Version of the tool, written into report.json.
    pub tool_version: String,
    /// Timestamp written into report.json (RFC 3339).
    pub generated_at: String,
}

/// The table of points: one row per point, parameters and figures.
#[derive(Debug, Clone, Default)]
pub struct Table {
    /// Parameter names, in column order.
    pub param_keys: Vec<String>,
    /// Figure columns present.
    pub figure_cols: Vec<&'static Column>,
    /// CSV header.
    pub header: Vec<String>,
    /// Header for people.
    pub header_labels: Vec<String>,
    /// CSV cells.
    pub rows: Vec<Vec<String>>,
    /// Cells for people (grouped numbers).
    pub display_rows: Vec<Vec<String>>,
    /// Status of each row.
    pub statuses: Vec<String>,
    /// Index of the first figure column.
    pub first_figure: usize,
}

/// `report.json` (`iolens.report/1`), fields in the order they are written.
#[derive(Debug, Serialize)]
pub struct ReportJson<'a> {
    pub charts: Vec<String>,
    pub columns: Vec<&'static str>,
    pub concurrency_axis: Option<&'a str>,
    pub generated_at: &'a str,
    pub growth_threshold_pct: f64,
    pub inputs: &'a [String],
    pub knees: Vec<String>,
    pub latency_slo_us: f64,
    pub param_keys: &'a [String],
    pub points: Vec<PointJson<'a>>,
    pub schema: &'static str,
    pub series: Vec<SeriesJson<'a>>,
    pub tool: ToolJson<'a>,
}

/// `tool` of `report.json`.
#[derive(Debug, Serialize)]
pub struct ToolJson<'a> {
    pub name: &'static str,
    pub version: &'a str,
}

/// One entry of `points` in `report.json`.
#[derive(Debug, Serialize)]
pub struct PointJson<'a> {
    pub dir: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'a str>,
    pub figures: BTreeMap<&'static str, f64>,
    pub host: &'a str,
    pub id: &'a str,
    pub kind: &'a str,
    pub name: &'a str,
    pub params: BTreeMap<&'a str, &'a Value>,
    pub series: &'a str,
    pub started_at: &'a str,
    pub status: &'a str,
    pub sweep: Option<&'a str>,
    pub warnings: &'a [String],
}

/// A report, built and ready to write.
#[derive(Debug, Clone)]
pub struct Report {
    /// The directories it was built from, as given.
    pub inputs: Vec<String>,
    /// Every point found.
    pub points: Vec<Point>,
    /// Series and knees.
    pub analysis: Analysis,
    /// The table.
    pub table: Table,
    /// The charts (SVG).
    pub charts: Vec<ChartFile>,
    /// Options used.
    pub options: Options,
}

fn param_keys(points: &[Point]) -> Vec<String> {
    let mut keys: Vec<String> = Vec::new();
    for p in points {
        for (k, _) in &p.params {
            if !keys.contains(k) {
                keys.push(k.clone());
            }
        }
    }
    keys
}

/// The figure columns to show: the core set and every other one some point has.
pub fn figure_columns(points: &[Point]) -> Vec<&'static Column> {
    COLUMNS
        .iter()
        .filter(|c| c.always || points.iter().any(|p| p.figures.get(c.key).is_some()))
        .collect()
}

/// A figure for people: counts grouped, latencies and small values with
/// three significant digits.
pub fn display_figure(key: &str, v: f64) -> String {
    let small = key.ends_with("_us")
        || key.ends_with("_ms")
        || key.ends_with("_pct")
        || key.contains("mbps")
        || key == "measured_s"
        || key == "cpu_us_per_io";
    if small {
        fmt::sig(v)
    } else {
        fmt::count(v)
    }
}

fn table(points: &[Point], series: &[String]) -> Table {
    let param_keys = param_keys(points);
    let figure_cols = figure_columns(points);
    let fixed = ["id", "kind", "name", "status", "host", "series"];
    let mut header: Vec<String> = fixed.iter().map(|s| s.to_string()).collect();
    header.extend(param_keys.iter().cloned());
    let first_figure = header.len();
    header.extend(figure_cols.iter().map(|c| c.key.to_string()));
    header.push("error".into());
    let mut header_labels: Vec<String> = ["point", "kind", "name", "status", "host", "series"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    header_labels.extend(param_keys.iter().cloned());
    header_labels.extend(figure_cols.iter().map(|c| c.label.to_string()));
    header_labels.push("error".into());
    let mut t = Table {
        param_keys: param_keys.clone(),
        figure_cols: figure_cols.clone(),
        header,
        header_labels,
        first_figure,
        ..Table::default()
    };
    for (i, p) in points.iter().enumerate() {
        let mut row = vec![
            p.id.clone(),
            p.kind.clone(),
            p.name.clone(),
            p.status.clone(),
            p.host.clone(),
            series[i].clone(),
        ];
        for k in &param_keys {
            row.push(p.param(k).map(value_text).unwrap_or_default());
        }
        let mut disp = row.clone();
        for c in &figure_cols {
            let v = p.figures.get(c.key);
            row.push(v.map(fmt::csv_number).unwrap_or_default());
            disp.push(v.map(|v| display_figure(c.key, v)).unwrap_or_default());
        }
        let err = p.error.clone().unwrap_or_default();
        row.push(err.clone());
        disp.push(err);
        t.rows.push(row);
        t.display_rows.push(disp);
        t.statuses.push(p.status.clone());
    }
    t
}

impl Report {
    /// Reads every result under `inputs` and analyses them.
    pub fn build(inputs: &[PathBuf], options: Options) -> Result<Report, ReportError> {
        let points = load::load(inputs)?;
        Ok(Report::from_points(
            inputs.iter().map(|p| p.display().to_string()).collect(),
            points,
            options,
        ))
    }

    /// Analyses points already loaded.
    pub fn from_points(inputs: Vec<String>, points: Vec<Point>, options: Options) -> Report {
        let analysis = Analysis::new(&points, options.latency_slo_us);
        let table = table(&points, &analysis.point_series);
        let charts = charts::all(&points, &analysis);
        Report {
            inputs,
            points,
            analysis,
            table,
            charts,
            options,
        }
    }

    /// `report.json`.
    pub fn json(&self) -> ReportJson<'_> {
        let points = self
            .points
            .iter()
            .zip(&self.analysis.point_series)
            .map(|(p, series)| PointJson {
                dir: p.dir.display().to_string(),
                error: p.error.as_deref(),
                figures: p.figures.0.iter().map(|(k, v)| (*k, *v)).collect(),
                host: &p.host,
                id: &p.id,
                kind: &p.kind,
                name: &p.name,
                params: p.params.iter().map(|(k, v)| (k.as_str(), v)).collect(),
                series,
                started_at: &p.started_at,
                status: &p.status,
                sweep: p.sweep.as_deref(),
                warnings: &p.warnings,
            })
            .collect();
        ReportJson {
            charts: self
                .charts
                .iter()
                .map(|c| format!("{}.svg", c.stem))
                .collect(),
            columns: self.table.figure_cols.iter().map(|c| c.key).collect(),
            concurrency_axis: self.analysis.axis.as_deref(),
            generated_at: &self.options.generated_at,
            growth_threshold_pct: crate::analysis::GROWTH * 100.0,
            inputs: &self.inputs,
            knees: self.analysis.knee_lines(),
            latency_slo_us: self.options.latency_slo_us,
            param_keys: &self.table.param_keys,
            points,
            schema: REPORT_SCHEMA,
            series: self.analysis.series_json(&self.points),
            tool: ToolJson {
                name: "iolens",
                version: &self.options.tool_version,
            },
        }
    }

    /// Warnings of every point, as (point id, warning).
    pub fn warnings(&self) -> Vec<(String, String)> {
        self.points
            .iter()
            .flat_map(|p| p.warnings.iter().map(|w| (p.id.clone(), w.clone())))
            .collect()
    }

    /// A short table for the terminal: point, parameters, IOPS, MB/s, latency, status.
    pub fn terminal_table(&self) -> String {
        let mut rows: Vec<Vec<String>> = vec![vec![
            "point".into(),
            "IOPS".into(),
            "MB/s".into(),
            "lat mean".into(),
            "lat p99".into(),
            "status".into(),
        ]];
        for p in &self.points {
            let f = &p.figures;
            let label = {
                let l = p.params_label();
                if l.is_empty() {
                    p.id.clone()
                } else {
                    l
                }
            };
            rows.push(vec![
                label,
                f.iops().map(fmt::count).unwrap_or_default(),
                f.get("mbps").map(fmt::sig).unwrap_or_default(),
                f.lat_mean_us().map(fmt::latency_us).unwrap_or_default(),
                f.lat_p99_us().map(fmt::latency_us).unwrap_or_default(),
                p.status.clone(),
            ]);
        }
        align(&rows, &[false, true, true, true, true, false])
    }

    /// Writes every file into `out`, which must be new, empty, or an
    /// earlier report (whose files are replaced). Returns the files written.
    pub fn write(&self, out: &Path) -> Result<Vec<PathBuf>, ReportError> {
        prepare_out(out)?;
        let mut written = Vec::new();
        let mut put = |name: &str, bytes: &[u8]| -> Result<(), ReportError> {
            let p = out.join(name);
            write_atomic(&p, bytes)?;
            written.push(p);
            Ok(())
        };
        let files: [(&str, &dyn Exporter<Report>); 3] = [
            ("report.csv", &CsvExporter),
            ("report.json", &JsonExporter),
            ("report.html", &HtmlExporter),
        ];
        for (name, exporter) in files {
            put(name, &exporter.serialize(self)?)?;
        }
        let mut charts: Vec<(&str, Box<dyn Exporter<ChartFile>>)> =
            vec![("svg", Box::new(SvgExporter))];
        if self.options.png {
            charts.push(("png", Box::new(PngExporter::new())));
        }
        for c in &self.charts {
            for (ext, exporter) in &charts {
                put(&format!("{}.{ext}", c.stem), &exporter.serialize(c)?)?;
            }
        }
        Ok(written)
    }
}

/// Whether PNG charts will have text (a system font was found).
pub fn fonts_available() -> bool {
    Rasterizer::new().has_fonts()
}

/// Left/right-aligned columns separated by two spaces.
pub fn align(rows: &[Vec<String>], right: &[bool]) -> String {
    let n = rows.iter().map(|r| r.len()).max().unwrap_or(0);
    let widths: Vec<usize> = (0..n)
        .map(|i| {
            rows.iter()
                .map(|r| r.get(i).map_or(0, |c| c.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut s = String::new();
    for r in rows {
        let cells: Vec<String> = (0..n)
            .map(|i| {
                let c = r.get(i).map_or("", |c| c.as_str());
                let pad = widths[i] - c.chars().count();
                if right.get(i).copied().unwrap_or(false) {
                    format!("{}{c}", " ".repeat(pad))
                } else {
                    format!("{c}{}", " ".repeat(pad))
                }
            })
            .collect();
        s.push_str(cells.join("  ").trim_end());
        s.push('\n');
    }
    s
}

fn prepare_out(out: &Path) -> Result<(), ReportError> {
    if out.exists() {
        if !out.is_dir() {
            return Err(ReportError::OutNotDir(out.to_path_buf()));
        }
        let ours = out.join("report.json").is_file();
        let empty = fs::read_dir(out)
            .map_err(|e| ReportError::io(out, e))?
            .next()
            .is_none();
        if !ours && !empty {
            return Err(ReportError::OutNotEmpty(out.to_path_buf()));
        }
        if ours && out.join("charts").is_dir() {
            fs::remove_dir_all(out.join("charts")).map_err(|e| ReportError::io(out, e))?;
        }
    }
    fs::create_dir_all(out.join("charts/timeseries")).map_err(|e| ReportError::io(out, e))
}

fn write_atomic(p: &Path, bytes: &[u8]) -> Result<(), ReportError> {
    let name = p.file_name().unwrap_or_default().to_string_lossy();
    let tmp = p.with_file_name(format!(".{name}.tmp"));
    fs::write(&tmp, bytes)
        .and_then(|_| fs::rename(&tmp, p))
        .map_err(|e| ReportError::io(p, e))
}
