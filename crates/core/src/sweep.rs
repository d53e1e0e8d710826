//! The sweep document (`sweep.json`, schema `iolens.sweep/1`), written by
//! `iolens sweep` and read by the report. Documented in
//! `docs/result-schema.md` ("Sweep directories") and `docs/sweep.md`.
//!
//! The writer sets every field; the reader also accepts documents that leave
//! some out (defaults below), so older or hand-written sweeps still load.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt;

/// The schema identifier of `sweep.json`.
pub const SWEEP_SCHEMA: &str = "iolens.sweep/1";

/// How a whole sweep stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SweepStatus {
    /// Points are still being run (or the sweep was killed).
    #[default]
    Running,
    /// Every point finished ok.
    Ok,
    /// Every point ran; at least one failed.
    Failed,
    /// Stopped by Ctrl-C or SIGTERM before every point ran.
    Interrupted,
}

impl SweepStatus {
    /// The word written in `sweep.json` and printed.
    pub fn as_str(self) -> &'static str {
        match self {
            SweepStatus::Running => "running",
            SweepStatus::Ok => "ok",
            SweepStatus::Failed => "failed",
            SweepStatus::Interrupted => "interrupted",
        }
    }

    /// The process exit code that goes with a finished sweep.
    pub fn exit_code(self) -> u8 {
        match self {
            SweepStatus::Interrupted => 130,
            SweepStatus::Failed => 1,
            SweepStatus::Ok | SweepStatus::Running => 0,
        }
    }
}

impl fmt::Display for SweepStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How one point of a sweep stands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PointStatus {
    /// Not run yet.
    #[default]
    Pending,
    /// Running now.
    Running,
    /// Its result says `ok`.
    Ok,
    /// It ended with an error, or left no usable result.
    Failed,
    /// Stopped by Ctrl-C or SIGTERM.
    Interrupted,
}

impl PointStatus {
    /// The word written in `sweep.json` and printed.
    pub fn as_str(self) -> &'static str {
        match self {
            PointStatus::Pending => "pending",
            PointStatus::Running => "running",
            PointStatus::Ok => "ok",
            PointStatus::Failed => "failed",
            PointStatus::Interrupted => "interrupted",
        }
    }
}

impl fmt::Display for PointStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `tool` in `sweep.json`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SweepTool {
    pub name: String,
    pub version: String,
}

fn default_name() -> String {
    "sweep".into()
}

/// `sweep.json`. Fields are declared (and so written) in alphabetical
/// order, the order `sweep.json` has always had.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SweepDoc {
    /// The iolens command run at each point (`run`, `db run`).
    #[serde(default)]
    pub command: String,
    /// The sweep file, as given on the command line.
    #[serde(default)]
    pub file: String,
    /// Name of the sweep (`sweep` when the document has none).
    #[serde(default = "default_name")]
    pub name: String,
    /// Names of the parameters, in order.
    #[serde(default)]
    pub param_order: Vec<String>,
    #[serde(default)]
    pub points: Vec<SweepPoint>,
    /// [`SWEEP_SCHEMA`].
    pub schema: String,
    /// When the sweep started (RFC 3339; a resumed sweep keeps its first start).
    #[serde(default)]
    pub started_at: String,
    #[serde(default)]
    pub status: SweepStatus,
    #[serde(default)]
    pub tool: SweepTool,
    /// When the document was last written (RFC 3339).
    #[serde(default)]
    pub updated_at: String,
}

/// One point of `sweep.json` (fields in alphabetical order, as written).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct SweepPoint {
    /// The command-line arguments it runs with (not --output/--quiet).
    #[serde(default)]
    pub args: Vec<String>,
    /// Its result directory, relative to the sweep directory.
    #[serde(default)]
    pub dir: String,
    /// Seconds it ran, to the millisecond.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_s: Option<f64>,
    /// What went wrong (for points not `ok`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// The axis values of this point.
    #[serde(default)]
    pub params: Map<String, Value>,
    #[serde(default)]
    pub status: PointStatus,
}

impl SweepDoc {
    /// The document as written: pretty JSON and a final newline.
    pub fn to_text(&self) -> serde_json::Result<String> {
        let mut text = serde_json::to_string_pretty(self)?;
        text.push('\n');
        Ok(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn statuses_are_lowercase_words() {
        assert_eq!(json!(PointStatus::Pending), json!("pending"));
        assert_eq!(json!(SweepStatus::Interrupted), json!("interrupted"));
        assert_eq!(SweepStatus::Failed.exit_code(), 1);
        assert_eq!(SweepStatus::Interrupted.exit_code(), 130);
    }

    #[test]
    fn sparse_documents_read_with_defaults_and_write_in_order() {
        let doc: SweepDoc = serde_json::from_value(json!({
            "schema": SWEEP_SCHEMA,
            "points": [{"dir": "01-qd=1", "params": {"qd": 1}, "duration_s": 1.5}]
        }))
        .unwrap();
        assert_eq!(doc.name, "sweep");
        assert_eq!(doc.status, SweepStatus::Running);
        assert_eq!(doc.points[0].status, PointStatus::Pending);
        let text = doc.to_text().unwrap();
        let keys: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("  \"") && l.contains(':'))
            .map(|l| l.trim().split('"').nth(1).unwrap())
            .collect();
        assert_eq!(
            keys,
            [
                "command",
                "file",
                "name",
                "param_order",
                "points",
                "schema",
                "started_at",
                "status",
                "tool",
                "updated_at"
            ]
        );
        assert!(!text.contains("exit_code"), "{text}");
        assert!(text.ends_with("\"\n}\n"), "{text}");
    }

    /// sweep.json keeps the bytes it has always had: keys in alphabetical
    /// order, optional point keys left out, a final newline.
    #[test]
    fn the_written_text_is_byte_for_byte_the_established_format() {
        let doc = SweepDoc {
            command: "run".into(),
            file: "s.toml".into(),
            name: "s".into(),
            param_order: vec!["qd".into()],
            points: vec![
                SweepPoint {
                    args: vec!["run".into(), "--qd".into(), "1".into()],
                    dir: "01-qd=1".into(),
                    duration_s: Some(1.25),
                    error: Some("boom".into()),
                    exit_code: Some(1),
                    params: json!({"qd": 1, "bs": "8k"}).as_object().unwrap().clone(),
                    status: PointStatus::Failed,
                },
                SweepPoint {
                    dir: "02-qd=2".into(),
                    ..SweepPoint::default()
                },
            ],
            schema: SWEEP_SCHEMA.into(),
            started_at: "t0".into(),
            status: SweepStatus::Failed,
            tool: SweepTool {
                name: "iolens".into(),
                version: "0.1.0".into(),
            },
            updated_at: "t1".into(),
        };
        let want = r#"{
  "command": "run",
  "file": "s.toml",
  "name": "s",
  "param_order": [
    "qd"
  ],
  "points": [
    {
      "args": [
        "run",
        "--qd",
        "1"
      ],
      "dir": "01-qd=1",
      "duration_s": 1.25,
      "error": "boom",
      "exit_code": 1,
      "params": {
        "bs": "8k",
        "qd": 1
      },
      "status": "failed"
    },
    {
      "args": [],
      "dir": "02-qd=2",
      "params": {},
      "status": "pending"
    }
  ],
  "schema": "iolens.sweep/1",
  "started_at": "t0",
  "status": "failed",
  "tool": {
    "name": "iolens",
    "version": "0.1.0"
  },
  "updated_at": "t1"
}
"#;
        assert_eq!(doc.to_text().unwrap(), want);
    }
}
