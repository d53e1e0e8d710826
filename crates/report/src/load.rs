//! Finding and reading result directories: single results, sweep directories
//! (`sweep.json` with one result directory per point) and any tree of them.

use crate::csv::TimeSeries;
use crate::figures::{self, Figures};
use crate::ReportError;
use iolens_core::result::matrix::MatrixPoint;
use iolens_core::result::{self, AnyResult, ResultError};
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use iolens_core::sweep::SweepDoc;
pub use iolens_core::sweep::SWEEP_SCHEMA;

/// How deep below an input directory results are looked for.
const MAX_DEPTH: usize = 8;

/// One measured point: a result directory, or one point of a multi-point result.
#[derive(Debug, Clone)]
pub struct Point {
    /// The result directory.
    pub dir: PathBuf,
    /// Short unique name: the input directory's name and the path below it.
    pub id: String,
    /// Result kind (`run`, `calibrate`, `matrix`, `db`, ...).
    pub kind: String,
    /// The run's `name`.
    pub name: String,
    /// `ok`, `interrupted`, `failed`, `running`, or `pending` (a sweep point not run yet).
    pub status: String,
    /// What went wrong, for failed points.
    pub error: Option<String>,
    /// Host name of the machine it was measured on.
    pub host: String,
    /// When it started (RFC 3339).
    pub started_at: String,
    /// Name of the sweep it belongs to.
    pub sweep: Option<String>,
    /// Identifying parameters: the sweep's axes, or the options that differ
    /// between loose results of the same kind.
    pub params: Vec<(String, Value)>,
    /// The effective options (`config` of result.json).
    pub config: Value,
    /// The figures found in the result.
    pub figures: Figures,
    /// Advice recorded with the result.
    pub warnings: Vec<String>,
    /// The per-second rows (`timeseries.csv`), when present.
    pub timeseries: Option<TimeSeries>,
    sweep_params: Option<Vec<(String, Value)>>,
}

impl Point {
    /// A point with only its place, kind and status: no figures, no parameters, no config.
    fn bare(dir: PathBuf, id: String, kind: &str, status: &str) -> Point {
        Point {
            dir,
            id,
            kind: kind.to_string(),
            name: String::new(),
            status: status.to_string(),
            error: None,
            host: String::new(),
            started_at: String::new(),
            sweep: None,
            params: Vec::new(),
            config: Value::Null,
            figures: Figures::default(),
            warnings: Vec::new(),
            timeseries: None,
            sweep_params: None,
        }
    }

    /// Whether the point counts in charts and knees (finished normally, with figures).
    pub fn usable(&self) -> bool {
        self.status == "ok" && self.figures.iops().is_some()
    }

    /// `k=v k=v` of the identifying parameters.
    pub fn params_label(&self) -> String {
        self.params
            .iter()
            .map(|(k, v)| format!("{k}={}", value_text(v)))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// A parameter's value, when the point has it.
    pub fn param(&self, key: &str) -> Option<&Value> {
        self.params.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

/// A JSON value as a table cell: strings without quotes.
pub fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn read_json(path: &Path) -> Result<Value, ReportError> {
    let text = fs::read_to_string(path).map_err(|e| ReportError::io(path, e))?;
    serde_json::from_str(&text).map_err(|e| ReportError::Parse {
        path: path.to_path_buf(),
        msg: e.to_string(),
    })
}

fn label_of(input: &Path) -> String {
    let canon = input.canonicalize().unwrap_or_else(|_| input.to_path_buf());
    canon
        .file_name()
        .or_else(|| input.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| input.display().to_string())
}

/// Reads every result found under `inputs`, in a stable order (inputs as
/// given, then directory names), and fills in the identifying parameters.
pub fn load(inputs: &[PathBuf]) -> Result<Vec<Point>, ReportError> {
    let mut points = Vec::new();
    for input in inputs {
        if !input.is_dir() {
            return Err(ReportError::NotFound(input.clone()));
        }
        let before = points.len();
        walk(input, &label_of(input), 0, &mut points)?;
        if points.len() == before {
            return Err(ReportError::NoResults(input.clone()));
        }
    }
    dedupe_ids(&mut points);
    derive_params(&mut points);
    Ok(points)
}

fn walk(dir: &Path, id: &str, depth: usize, out: &mut Vec<Point>) -> Result<(), ReportError> {
    if dir.join("result.json").is_file() {
        out.extend(load_result(dir, id)?);
        return Ok(());
    }
    if dir.join("sweep.json").is_file() {
        return load_sweep(dir, id, out);
    }
    if depth >= MAX_DEPTH {
        return Ok(());
    }
    let mut subdirs: Vec<PathBuf> = match fs::read_dir(dir) {
        Ok(rd) => rd
            .filter_map(|e| e.ok())
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect(),
        Err(e) => return Err(ReportError::io(dir, e)),
    };
    subdirs.sort();
    for sub in subdirs {
        let name = sub.file_name().unwrap_or_default().to_string_lossy();
        walk(&sub, &format!("{id}/{name}"), depth + 1, out)?;
    }
    Ok(())
}

/// The points of one result directory: one, or one per point for results
/// that carry several (`points[]` of a matrix).
pub fn load_result(dir: &Path, id: &str) -> Result<Vec<Point>, ReportError> {
    let path = dir.join("result.json");
    let doc = result::load(&path).map_err(|e| match e {
        ResultError::Io { path, source } => ReportError::io(&path, source),
        ResultError::Schema { path, schema } => ReportError::Parse {
            path,
            msg: format!("not an iolens result (schema '{schema}')"),
        },
        ResultError::Parse { path, msg } => ReportError::Parse { path, msg },
        ResultError::Exists(path) => ReportError::Parse {
            path,
            msg: "unexpected result directory".into(),
        },
    })?;
    let head = doc.envelope();
    let base = Point {
        dir: dir.to_path_buf(),
        id: id.to_string(),
        kind: head.kind.to_string(),
        name: head.name.to_string(),
        status: head.status.as_str().to_string(),
        error: head.error.map(str::to_string),
        host: head.host.hostname.clone(),
        started_at: head.started_at.to_string(),
        sweep: None,
        params: Vec::new(),
        config: head.config.clone(),
        figures: figures::of_result(&doc),
        warnings: doc.warnings(),
        timeseries: TimeSeries::load(&dir.join("timeseries.csv")),
        sweep_params: None,
    };
    let subs = match &doc {
        AnyResult::Matrix(m) => matrix_points(&m.extra.points),
        _ => Vec::new(),
    };
    if subs.is_empty() {
        return Ok(vec![base]);
    }
    Ok(subs
        .into_iter()
        .map(|(params, figures, cut_short)| {
            let label = params
                .iter()
                .map(|(k, v)| format!("{k}={}", value_text(v)))
                .collect::<Vec<_>>()
                .join(",");
            let status = if cut_short {
                "interrupted".to_string()
            } else {
                base.status.clone()
            };
            Point {
                id: format!("{id}#{label}"),
                status,
                figures,
                sweep_params: Some(params),
                timeseries: None,
                ..base.clone()
            }
        })
        .collect())
}

/// One point of a multi-point result: its parameters, figures, and whether it was cut short.
type SubPoint = (Vec<(String, Value)>, Figures, bool);

/// Splits a matrix into (parameters, figures) per point that has figures:
/// its loads are the point's parameters.
fn matrix_points(points: &[MatrixPoint]) -> Vec<SubPoint> {
    points
        .iter()
        .filter_map(|p| {
            let figures = figures::matrix_point_figures(p);
            if figures.is_empty() {
                return None;
            }
            let params = vec![
                ("large_load".to_string(), Value::from(p.large_load)),
                ("small_load".to_string(), Value::from(p.small_load)),
            ];
            Some((params, figures, p.interrupted))
        })
        .collect()
}

fn load_sweep(dir: &Path, id: &str, out: &mut Vec<Point>) -> Result<(), ReportError> {
    let path = dir.join("sweep.json");
    let doc = read_json(&path)?;
    /// Just the schema line, to tell a sweep document from anything else.
    #[derive(serde::Deserialize)]
    struct Head {
        #[serde(default)]
        schema: String,
    }
    let head = Head::deserialize(&doc).map_or(String::new(), |h| h.schema);
    if head != SWEEP_SCHEMA {
        return Err(ReportError::Parse {
            path,
            msg: format!("not an iolens sweep (expected schema '{SWEEP_SCHEMA}')"),
        });
    }
    let doc: SweepDoc = serde_json::from_value(doc).map_err(|e| ReportError::Parse {
        path: path.clone(),
        msg: e.to_string(),
    })?;
    let kind = doc.command.split_whitespace().next().unwrap_or("");
    for p in doc.points.iter().filter(|p| !p.dir.is_empty()) {
        let mut params: Vec<(String, Value)> = Vec::new();
        for k in &doc.param_order {
            if let Some(v) = p.params.get(k) {
                params.push((k.clone(), v.clone()));
            }
        }
        for (k, v) in &p.params {
            if !doc.param_order.contains(k) {
                params.push((k.clone(), v.clone()));
            }
        }
        let pdir = dir.join(&p.dir);
        let pid = format!("{id}/{}", p.dir);
        let mut pts = if pdir.join("result.json").is_file() {
            load_result(&pdir, &pid)?
        } else {
            vec![Point {
                error: p.error.clone(),
                ..Point::bare(pdir.clone(), pid, kind, p.status.as_str())
            }]
        };
        for pt in &mut pts {
            pt.sweep = Some(doc.name.clone());
            let mut all = params.clone();
            if let Some(inner) = pt.sweep_params.take() {
                all.extend(inner);
            }
            pt.sweep_params = Some(all);
        }
        out.extend(pts);
    }
    Ok(())
}

fn dedupe_ids(points: &mut [Point]) {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    for p in points.iter_mut() {
        let n = seen.entry(p.id.clone()).or_insert(0);
        *n += 1;
        if *n > 1 {
            p.id = format!("{}~{}", p.id, n);
        }
    }
}

/// Flattens a config into dotted scalar keys (`a.b`), arrays as JSON text.
fn flatten(prefix: &str, v: &Value, out: &mut BTreeMap<String, Value>) {
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                let key = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten(&key, v, out);
            }
        }
        Value::Array(_) => {
            out.insert(prefix.to_string(), Value::String(v.to_string()));
        }
        other => {
            out.insert(prefix.to_string(), other.clone());
        }
    }
}

/// Options that never identify a point.
const NOT_PARAMS: &[&str] = &["name", "output", "json", "quiet"];

/// Most parameters derived for loose results (the rest stay in `config`).
const MAX_DERIVED: usize = 6;

/// Sweep points keep their axes; loose results of one kind are told apart by
/// the options whose values differ between them.
fn derive_params(points: &mut [Point]) {
    let mut kinds: Vec<String> = points
        .iter()
        .filter(|p| p.sweep_params.is_none())
        .map(|p| p.kind.clone())
        .collect();
    kinds.sort();
    kinds.dedup();
    for kind in kinds {
        let idx: Vec<usize> = (0..points.len())
            .filter(|&i| points[i].sweep_params.is_none() && points[i].kind == kind)
            .collect();
        let flat: Vec<BTreeMap<String, Value>> = idx
            .iter()
            .map(|&i| {
                let mut m = BTreeMap::new();
                flatten("", &points[i].config, &mut m);
                m
            })
            .collect();
        let mut keys: Vec<&String> = flat.iter().flat_map(|m| m.keys()).collect();
        keys.sort();
        keys.dedup();
        let differing: Vec<String> = keys
            .into_iter()
            .filter(|k| !NOT_PARAMS.contains(&k.as_str()))
            .filter(|k| {
                let first = flat[0].get(*k);
                flat.iter().any(|m| m.get(*k) != first)
            })
            .take(MAX_DERIVED)
            .cloned()
            .collect();
        for (j, &i) in idx.iter().enumerate() {
            points[i].params = differing
                .iter()
                .map(|k| (k.clone(), flat[j].get(k).cloned().unwrap_or(Value::Null)))
                .collect();
        }
    }
    for p in points.iter_mut() {
        if let Some(sp) = &p.sweep_params {
            p.params = sp.clone();
        }
    }
}

/// A bare `ok` point for unit tests elsewhere in the crate.
#[cfg(test)]
pub(crate) fn tests_point(dir: &Path, host: &str) -> Point {
    Point {
        name: host.into(),
        host: host.into(),
        ..Point::bare(dir.to_path_buf(), format!("{host}/p"), "run", "ok")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn write_result(dir: &Path, kind: &str, config: Value, summary: Value) {
        fs::create_dir_all(dir).unwrap();
        let doc = json!({
            "schema": "iolens.result/1", "tool": {"name": "iolens", "version": "0"},
            "kind": kind, "name": "t", "status": "ok", "started_at": "2026-01-01T00:00:00.000Z",
            "duration_s": 1.0, "host": {"hostname": "h", "kernel": "k", "cpus": 1, "mem_bytes": 1},
            "targets": [], "config": config, "summary": summary, "warnings": ["w1"]
        });
        fs::write(dir.join("result.json"), doc.to_string()).unwrap();
    }

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("iolens-load-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn loose_results_are_told_apart_by_differing_options() {
        let root = scratch("loose");
        for qd in [1, 4] {
            write_result(
                &root.join(format!("r{qd}")),
                "run",
                json!({"qd": qd, "bs": 8192, "name": format!("n{qd}")}),
                json!({"total": {"iops": 10.0 * qd as f64}}),
            );
        }
        fs::create_dir_all(root.join(".hidden/x")).unwrap();
        let pts = load(std::slice::from_ref(&root)).unwrap();
        assert_eq!(pts.len(), 2);
        assert_eq!(pts[0].params, vec![("qd".to_string(), json!(1))]);
        assert!(pts[0].id.ends_with("/r1"), "{}", pts[0].id);
        assert_eq!(pts[1].figures.iops(), Some(40.0));
        assert_eq!(pts[0].warnings, vec!["w1".to_string()]);
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn sweeps_keep_their_axes_and_list_missing_points() {
        let root = scratch("sweep");
        write_result(
            &root.join("1-qd=1"),
            "run",
            json!({"qd": 1}),
            json!({"total": {"iops": 5.0}}),
        );
        let sweep = json!({
            "schema": SWEEP_SCHEMA, "name": "s", "command": "run", "param_order": ["qd", "bs"],
            "points": [
                {"dir": "1-qd=1", "params": {"bs": "8k", "qd": 1}, "status": "ok"},
                {"dir": "2-qd=2", "params": {"bs": "8k", "qd": 2}, "status": "failed", "error": "boom"}
            ]
        });
        fs::write(root.join("sweep.json"), sweep.to_string()).unwrap();
        let pts = load(std::slice::from_ref(&root)).unwrap();
        assert_eq!(pts.len(), 2);
        assert_eq!(pts[0].params[0], ("qd".to_string(), json!(1)));
        assert_eq!(pts[0].params_label(), "qd=1 bs=8k");
        assert_eq!(pts[1].status, "failed");
        assert_eq!(pts[1].error.as_deref(), Some("boom"));
        assert!(!pts[1].usable());
        assert_eq!(pts[0].sweep.as_deref(), Some("s"));
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn directories_without_results_are_an_error() {
        let root = scratch("empty");
        fs::create_dir_all(root.join("a/b")).unwrap();
        assert!(matches!(
            load(std::slice::from_ref(&root)),
            Err(ReportError::NoResults(_))
        ));
        assert!(matches!(
            load(&[root.join("missing")]),
            Err(ReportError::NotFound(_))
        ));
        fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn multi_point_results_give_one_point_each() {
        let root = scratch("multi");
        write_result(&root.join("m"), "matrix", json!({}), json!({}));
        let p = root.join("m/result.json");
        let text = fs::read_to_string(&p).unwrap();
        let stream = |iops: f64, mbps: f64| json!({"load": 1, "read": {"ops": 10, "iops": iops, "mbps": mbps}, "iops": iops, "mbps": mbps});
        let points = json!([
            {"point": 1, "small_load": 1, "large_load": 0, "small": stream(100.0, 0.8)},
            {"point": 2, "small_load": 2, "large_load": 0, "small": stream(180.0, 1.4)}
        ]);
        let text = text.replacen('{', &format!("{{\"points\": {points},"), 1);
        fs::write(&p, text).unwrap();
        let pts = load(&[root.join("m")]).unwrap();
        assert_eq!(pts.len(), 2);
        assert_eq!(pts[1].figures.iops(), Some(180.0));
        assert_eq!(pts[1].param("small_load"), Some(&json!(2)));
        fs::remove_dir_all(&root).unwrap();
    }
}
