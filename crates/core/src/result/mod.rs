//! The result schema (`iolens.result/1`) and result directories.
//!
//! Every command writes one directory per measurement holding `result.json`,
//! `timeseries.csv` and `summary.txt`. `result.json` is written when the run
//! starts (status `running`), and again, atomically, when it ends, so a crash
//! or a kill leaves a valid document marked as partial. The schema is
//! documented in `docs/result-schema.md`.
//!
//! One serde type per kind, written and read back through the same structs:
//! [`Document`] is the envelope every kind shares, `S` its `summary` and `X`
//! its kind-specific top-level sections. The kinds live in their own modules
//! ([`run`], [`calibrate`], [`matrix`], [`db`], [`assess`]); [`load`] reads any
//! `result.json` into an [`AnyResult`]. Reading accepts older documents (every
//! figure a past version may have lacked is optional, unknown keys are
//! ignored); writing keeps the key order of `iolens.result/1`: the envelope in
//! its fixed order, then the summary and the sections with their keys sorted.

pub mod assess;
pub mod calibrate;
pub mod db;
pub mod matrix;
pub mod record;
pub mod run;

use crate::host::HostInfo;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize, Serializer};
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

    /// The name the schema gives the status (`running`, `ok`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Running => "running",
            Status::Ok => "ok",
            Status::Interrupted => "interrupted",
            Status::Failed => "failed",
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

/// A result document of one kind: the envelope, `config`, the kind's
/// `summary` (`S`) and its top-level sections (`X`, flattened next to the
/// envelope: `warnings`, `ladder`, `points`, ...).
///
/// `config` stays a JSON value: it echoes every effective option of the
/// command as it was given, and readers only list it as key/value parameters.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(bound(
    serialize = "S: Serialize, X: Serialize",
    deserialize = "S: Deserialize<'de> + Default, X: Deserialize<'de>"
))]
pub struct Document<S, X> {
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
    #[serde(default, serialize_with = "sorted")]
    pub summary: S,
    /// Kind-specific sections (`ladder`, `points`, `warnings`, ...).
    #[serde(flatten)]
    pub extra: X,
}

/// A document of any kind, its summary and sections kept as JSON values (what
/// importers and new kinds write through).
pub type ResultDoc = Document<Value, Map<String, Value>>;

/// Serializes `v` with its object keys sorted, as `iolens.result/1` has
/// always written summaries and sections.
pub(crate) fn sorted<T: Serialize, S: Serializer>(v: &T, s: S) -> Result<S::Ok, S::Error> {
    serde_json::to_value(v)
        .map_err(serde::ser::Error::custom)?
        .serialize(s)
}

/// For `Option<Option<T>>` fields: a key that is present (even `null`) is
/// `Some`, an absent one (with `#[serde(default)]`) stays `None`.
pub(crate) fn present<'de, T, D>(d: D) -> Result<Option<Option<T>>, D::Error>
where
    T: Deserialize<'de>,
    D: serde::Deserializer<'de>,
{
    Option::<T>::deserialize(d).map(Some)
}

impl<S: Default, X: Default> Document<S, X> {
    /// A new `running` document of `kind`, started now on this host.
    pub fn new(kind: &str, name: &str) -> Document<S, X> {
        Document {
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
            summary: S::default(),
            extra: X::default(),
        }
    }
}

impl<S: DeserializeOwned + Default, X: DeserializeOwned> Document<S, X> {
    /// Reads and checks a `result.json`.
    pub fn load(path: &Path) -> Result<Document<S, X>, ResultError> {
        let text = fs::read_to_string(path).map_err(|e| ResultError::io(path, e))?;
        Document::parse(path, &text)
    }

    /// Parses the text of `path`, checking the schema.
    fn parse(path: &Path, text: &str) -> Result<Document<S, X>, ResultError> {
        let bad = |msg: String| ResultError::Parse {
            path: path.to_path_buf(),
            msg,
        };
        let head: Head = serde_json::from_str(text).map_err(|e| bad(e.to_string()))?;
        if !head.schema.starts_with("iolens.result/") {
            return Err(ResultError::Schema {
                path: path.to_path_buf(),
                schema: head.schema,
            });
        }
        serde_json::from_str(text).map_err(|e| bad(e.to_string()))
    }
}

impl<S: Serialize, X: Serialize> Document<S, X> {
    /// The document as `result.json` holds it (pretty, with a final newline).
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).expect("result documents serialize");
        text.push('\n');
        text
    }
}

/// What [`load`] looks at before choosing a kind.
#[derive(Deserialize)]
struct Head {
    #[serde(default)]
    schema: String,
    #[serde(default)]
    kind: String,
}

/// A result document read back in its kind's types.
#[derive(Clone, Debug)]
pub enum AnyResult {
    Run(Box<run::RunResult>),
    Calibrate(Box<calibrate::CalibrateResult>),
    Matrix(Box<matrix::MatrixResult>),
    Db(Box<db::DbResult>),
    Assess(Box<assess::AssessResult>),
    /// A kind this version does not know (an importer's, a newer one's).
    Other(Box<ResultDoc>),
}

/// Calls `$body` with `$d` bound to the document, whatever its kind.
macro_rules! each {
    ($self:expr, $d:ident => $body:expr) => {
        match $self {
            AnyResult::Run($d) => $body,
            AnyResult::Calibrate($d) => $body,
            AnyResult::Matrix($d) => $body,
            AnyResult::Db($d) => $body,
            AnyResult::Assess($d) => $body,
            AnyResult::Other($d) => $body,
        }
    };
}

/// The envelope of a document of any kind.
#[derive(Clone, Copy, Debug)]
pub struct Envelope<'a> {
    pub kind: &'a str,
    pub name: &'a str,
    pub status: Status,
    pub error: Option<&'a str>,
    pub started_at: &'a str,
    pub duration_s: f64,
    pub host: &'a HostInfo,
    pub targets: &'a [TargetInfo],
    pub config: &'a Value,
}

impl AnyResult {
    /// The envelope, whatever the kind.
    pub fn envelope(&self) -> Envelope<'_> {
        each!(self, d => Envelope {
            kind: &d.kind,
            name: &d.name,
            status: d.status,
            error: d.error.as_deref(),
            started_at: &d.started_at,
            duration_s: d.duration_s,
            host: &d.host,
            targets: &d.targets,
            config: &d.config,
        })
    }

    /// The advice recorded with the result (`warnings`), whatever the kind.
    pub fn warnings(&self) -> Vec<String> {
        match self {
            AnyResult::Run(d) => d.extra.warnings.clone(),
            AnyResult::Calibrate(d) => d.extra.warnings.clone(),
            AnyResult::Matrix(d) => d.extra.warnings.clone(),
            AnyResult::Db(d) => d.extra.warnings.clone(),
            AnyResult::Assess(d) => d.extra.warnings.clone(),
            AnyResult::Other(d) => d
                .extra
                .get("warnings")
                .and_then(|w| Vec::<String>::deserialize(w).ok()),
        }
        .unwrap_or_default()
    }

    /// Parses a `result.json` text read from `path`, choosing the types by `kind`.
    pub fn parse(path: &Path, text: &str) -> Result<AnyResult, ResultError> {
        let head: Head = serde_json::from_str(text).map_err(|e| ResultError::Parse {
            path: path.to_path_buf(),
            msg: e.to_string(),
        })?;
        Ok(match head.kind.as_str() {
            "run" => AnyResult::Run(Box::new(Document::parse(path, text)?)),
            "calibrate" => AnyResult::Calibrate(Box::new(Document::parse(path, text)?)),
            "matrix" => AnyResult::Matrix(Box::new(Document::parse(path, text)?)),
            "db" => AnyResult::Db(Box::new(Document::parse(path, text)?)),
            "assess" => AnyResult::Assess(Box::new(Document::parse(path, text)?)),
            _ => AnyResult::Other(Box::new(Document::parse(path, text)?)),
        })
    }

    /// The document as `result.json` holds it.
    pub fn to_json(&self) -> String {
        each!(self, d => d.to_json())
    }
}

/// Reads a `result.json` of any kind.
pub fn load(path: &Path) -> Result<AnyResult, ResultError> {
    let text = fs::read_to_string(path).map_err(|e| ResultError::io(path, e))?;
    AnyResult::parse(path, &text)
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
    #[error("{path}: not an iolens result (schema '{schema}')")]
    Schema { path: PathBuf, schema: String },
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
    pub fn write_result<S: Serialize, X: Serialize>(
        &self,
        doc: &Document<S, X>,
    ) -> Result<(), ResultError> {
        self.write_file("result.json", doc.to_json().as_bytes())
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
        let mut doc = run::RunResult::new("run", "t");
        let mut summary = run::RunSummary::default();
        summary.total.iops = 5.0;
        doc.summary = Some(summary);
        doc.extra.warnings = Some(vec!["w".into()]);
        let text = doc.to_json();
        let back = AnyResult::parse(Path::new("result.json"), &text).unwrap();
        let AnyResult::Run(back) = back else {
            panic!("a run reads back as a run")
        };
        assert_eq!(back.schema, SCHEMA);
        assert_eq!(back.summary.as_ref().map(|s| s.total.iops), Some(5.0));
        assert_eq!(back.extra.warnings, Some(vec!["w".to_string()]));
        assert_eq!(back.status, Status::Running);
        assert_eq!(back.to_json(), text);
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
