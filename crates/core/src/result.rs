//! The result schema (`iolens.result/1`) and result directories.
//!
//! Every command writes one directory per measurement holding `result.json`,
//! `timeseries.csv` and `summary.txt`. `result.json` is written when the run
//! starts (status `running`), and again, atomically, when it ends, so a crash
//! or a kill leaves a valid document marked as partial. The schema is
//! documented in `docs/result-schema.md`.

use crate::host::HostInfo;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The schema identifier written into every result.
pub const SCHEMA: &str = "iolens.result/1";

/// How a measurement ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Still running (or killed without a chance to finish the document).
    Running,
    /// Ran to its planned end.
    Ok,
    /// Stopped early by Ctrl-C or SIGTERM; the figures cover the time it ran.
    Interrupted,
    /// Ended by an error (see `error`), e.g. a verify mismatch.
    Failed,
}

impl Status {
    /// How a measurement that ran ended: an error wins over an interrupt.
    pub fn ended(failed: bool, interrupted: bool) -> Status {
        if failed {
            Status::Failed
        } else if interrupted {
            Status::Interrupted
        } else {
            Status::Ok
        }
    }

    /// The process exit code that goes with this status.
    pub fn exit_code(self) -> i32 {
        match self {
            Status::Ok | Status::Running => 0,
            Status::Failed => 1,
            Status::Interrupted => 130,
        }
    }
}

/// `tool` in the result schema.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

impl Default for Tool {
    fn default() -> Self {
        Tool {
            name: "iolens".into(),
            version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

/// One entry of `targets` in the result schema.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct TargetInfo {
    pub path: String,
    /// `file` or `blockdev`.
    pub kind: String,
    pub size_bytes: u64,
    /// Name of the block device under the target (`vda`, `nvme0n1p2`), when known.
    pub device: Option<String>,
}

/// A result document. `summary` and the kind-specific extra keys are kept as
/// JSON values so that every command (and every importer) shares one envelope.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ResultDoc {
    pub schema: String,
    pub tool: Tool,
    pub kind: String,
    pub name: String,
    pub status: Status,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub started_at: String,
    pub duration_s: f64,
    pub host: HostInfo,
    #[serde(default)]
    pub targets: Vec<TargetInfo>,
    #[serde(default)]
    pub config: Value,
    #[serde(default)]
    pub summary: Value,
    /// Kind-specific sections (`ladder`, `points`, `warnings`, ...).
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ResultDoc {
    /// A new `running` document of `kind`, started now on this host.
    pub fn new(kind: &str, name: &str) -> ResultDoc {
        ResultDoc {
            schema: SCHEMA.into(),
            tool: Tool::default(),
            kind: kind.into(),
            name: name.into(),
            status: Status::Running,
            error: None,
            started_at: humantime::format_rfc3339_millis(SystemTime::now()).to_string(),
            duration_s: 0.0,
            host: HostInfo::current(),
            targets: Vec::new(),
            config: Value::Null,
            summary: Value::Null,
            extra: Map::new(),
        }
    }

    /// Reads and checks a `result.json`.
    pub fn load(path: &Path) -> Result<ResultDoc, ResultError> {
        let text = fs::read_to_string(path).map_err(|e| ResultError::io(path, e))?;
        let doc: ResultDoc = serde_json::from_str(&text).map_err(|e| ResultError::Parse {
            path: path.to_path_buf(),
            msg: e.to_string(),
        })?;
        if !doc.schema.starts_with("iolens.result/") {
            return Err(ResultError::Parse {
                path: path.to_path_buf(),
                msg: format!("unknown schema '{}'", doc.schema),
            });
        }
        Ok(doc)
    }
}

/// Errors while writing or reading results.
#[derive(Debug, thiserror::Error)]
pub enum ResultError {
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("output directory {0} already holds a result; choose another --output or remove it")]
    Exists(PathBuf),
    #[error("{path}: not an iolens result: {msg}")]
    Parse { path: PathBuf, msg: String },
}

impl ResultError {
    fn io(path: &Path, source: io::Error) -> ResultError {
        ResultError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// A result directory being written.
#[derive(Debug)]
pub struct ResultDir {
    path: PathBuf,
}

/// `<UTC timestamp>-<name>`, the default directory name under `iolens-results/`.
pub fn default_dir_name(name: &str) -> String {
    let ts = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    let compact: String = ts.chars().filter(|c| c.is_ascii_alphanumeric()).collect();
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{compact}-{safe}")
}

impl ResultDir {
    /// Creates `path` (and its parents). An existing directory is accepted only
    /// when it holds no `result.json`, so no earlier result is overwritten.
    pub fn create(path: &Path) -> Result<ResultDir, ResultError> {
        if path.join("result.json").exists() {
            return Err(ResultError::Exists(path.to_path_buf()));
        }
        fs::create_dir_all(path).map_err(|e| ResultError::io(path, e))?;
        Ok(ResultDir {
            path: path.to_path_buf(),
        })
    }

    /// Creates a fresh directory under `parent` named `<timestamp>-<name>`,
    /// adding a counter when that name is taken.
    pub fn create_default(parent: &Path, name: &str) -> Result<ResultDir, ResultError> {
        let base = default_dir_name(name);
        for i in 0..1000 {
            let p = if i == 0 {
                parent.join(&base)
            } else {
                parent.join(format!("{base}.{i}"))
            };
            if !p.exists() {
                return ResultDir::create(&p);
            }
        }
        Err(ResultError::Exists(parent.join(base)))
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes `name` atomically (temporary file, then rename).
    pub fn write_file(&self, name: &str, bytes: &[u8]) -> Result<(), ResultError> {
        let dst = self.path.join(name);
        let tmp = self.path.join(format!(".{name}.tmp"));
        let write = || -> io::Result<()> {
            let mut f = File::create(&tmp)?;
            f.write_all(bytes)?;
            f.sync_data()?;
            fs::rename(&tmp, &dst)
        };
        write().map_err(|e| ResultError::io(&dst, e))
    }

    /// Writes `result.json`.
    pub fn write_result(&self, doc: &ResultDoc) -> Result<(), ResultError> {
        let mut text = serde_json::to_string_pretty(doc).expect("result documents serialize");
        text.push('\n');
        self.write_file("result.json", text.as_bytes())
    }

    /// Opens `name` for appending rows as they are produced.
    pub fn append(&self, name: &str) -> Result<File, ResultError> {
        let p = self.path.join(name);
        fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&p)
            .map_err(|e| ResultError::io(&p, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_documents_round_trip_with_extra_sections() {
        let mut doc = ResultDoc::new("run", "t");
        doc.summary = serde_json::json!({"total": {"iops": 5.0}});
        doc.extra
            .insert("warnings".into(), serde_json::json!(["w"]));
        let text = serde_json::to_string(&doc).unwrap();
        let back: ResultDoc = serde_json::from_str(&text).unwrap();
        assert_eq!(back.schema, SCHEMA);
        assert_eq!(back.summary["total"]["iops"], 5.0);
        assert_eq!(back.extra["warnings"][0], "w");
        assert_eq!(back.status, Status::Running);
    }

    #[test]
    fn existing_results_are_never_overwritten() {
        let tmp = std::env::temp_dir().join(format!("iolens-rd-{}", std::process::id()));
        let d = ResultDir::create(&tmp).unwrap();
        d.write_result(&ResultDoc::new("run", "x")).unwrap();
        assert!(matches!(
            ResultDir::create(&tmp),
            Err(ResultError::Exists(_))
        ));
        fs::remove_dir_all(&tmp).unwrap();
    }

    #[test]
    fn default_names_are_filesystem_safe() {
        let n = default_dir_name("a b/c");
        assert!(n.ends_with("-a_b_c"), "{n}");
        assert!(!n.contains(':'));
    }
}
