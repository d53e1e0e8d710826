//! The `run` command as a library call: a validated job and where to write
//! in, the typed result document out, every second through an observer.
//!
//! The pipeline: targets opened → result directory created and
//! `result.json` written as running ([`Recorder`]) → job run with
//! `timeseries.csv` appended row by row → summary, warnings, the final
//! `result.json` and `summary.txt`.

use crate::report;
use crate::spec::JobSpec;
use crate::target::TargetKind;
use crate::{run_job, JobError, TargetError, TargetSet, TimeRow};
use iolens_core::result::run::RunResult;
use iolens_core::result::{ResultError, TargetInfo};
use iolens_core::{Classify, ErrorKind, Output, Recorder, Status};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

/// Why a measuring command could not run (or could not write its result).
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// Options that do not fit together.
    #[error("{0}")]
    Usage(String),
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error(transparent)]
    Job(#[from] JobError),
    #[error(transparent)]
    Result(#[from] ResultError),
}

impl Classify for CommandError {
    fn kind(&self) -> ErrorKind {
        match self {
            CommandError::Usage(_) => ErrorKind::BadInput,
            CommandError::Target(e) => e.kind(),
            CommandError::Job(e) => e.kind(),
            CommandError::Result(e) => e.kind(),
        }
    }
}

/// What `run` produced.
#[derive(Debug)]
pub struct RunReport {
    /// result.json as written.
    pub doc: RunResult,
    /// summary.txt.
    pub text: String,
    /// The result directory.
    pub dir: PathBuf,
}

impl RunReport {
    /// The exit code of the run's status.
    pub fn exit_code(&self) -> i32 {
        self.doc.status.exit_code()
    }
}

/// Opens the job's targets (none for the null engine without targets).
pub fn open_targets(spec: &JobSpec) -> Result<TargetSet, TargetError> {
    if spec.targets.is_empty() {
        return Ok(TargetSet::none(spec.size.unwrap_or(1 << 30)));
    }
    TargetSet::open(spec)
}

/// Describes the opened targets for result.json.
pub fn target_infos(t: &TargetSet) -> Vec<TargetInfo> {
    t.targets
        .iter()
        .map(|t| TargetInfo {
            path: t.path.display().to_string(),
            kind: match t.kind {
                TargetKind::File => "file".into(),
                TargetKind::BlockDevice => "blockdev".into(),
            },
            size_bytes: t.total_size,
            device: t.device.as_ref().map(|d| d.name.clone()),
        })
        .collect()
}

/// The name of a status as result.json spells it (`ok`, `failed`, ...).
pub fn status_name(s: Status) -> String {
    serde_json::to_value(s)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// `run`: opens the targets of the validated `spec`, runs it until its end
/// or `stop`, and writes the result directory `out` names; `observer` hears
/// every second (ramp included). A failure during the run is the report's
/// status; an error before it starts is returned.
pub fn run(
    spec: JobSpec,
    out: &Output,
    stop: &AtomicBool,
    observer: &mut dyn FnMut(&TimeRow),
) -> Result<RunReport, CommandError> {
    let started = Instant::now();
    let spec = Arc::new(spec);
    let targets = Arc::new(open_targets(&spec)?);
    let mut doc = RunResult::new("run", &spec.name);
    doc.targets = target_infos(&targets);
    doc.config = serde_json::to_value(&*spec).unwrap_or_default();
    let mut rec = Recorder::start(out.create()?, doc, started)?;
    let mut ts = rec.series("timeseries.csv", &TimeRow::csv_header())?;
    let outcome = run_job(spec.clone(), targets, stop, |row| {
        // A time series that cannot be written does not stop the run.
        let _ = ts.row(row.fields());
        observer(row);
    })?;

    let status = Status::ended(outcome.error.is_some(), outcome.interrupted);
    rec.doc.summary = Some(report::summary(&outcome));
    let warnings = report::warnings(&spec, &outcome);
    rec.doc.extra.warnings = Some(warnings.clone());
    let text = report::summary_text(&spec.name, &status_name(status), &spec, &outcome, &warnings);
    rec.finish(outcome.error.clone(), outcome.interrupted, &text)?;
    Ok(RunReport {
        doc: rec.doc.clone(),
        text,
        dir: rec.path().to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::EngineKind;
    use std::time::Duration;

    #[test]
    fn a_run_writes_its_result_directory_through_the_recorder() {
        let d = tempfile::tempdir().unwrap();
        let spec = JobSpec {
            engine: EngineKind::Null,
            runtime: Duration::from_millis(1200),
            ..Default::default()
        };
        let out = Output {
            name: "t".into(),
            dir: Some(d.path().join("r")),
        };
        let mut seconds = 0;
        let r = run(spec, &out, &AtomicBool::new(false), &mut |_| seconds += 1).unwrap();
        assert_eq!(r.exit_code(), 0, "{}", r.text);
        assert_eq!(r.doc.status, Status::Ok);
        assert!(r.doc.summary.is_some());
        let ts = std::fs::read_to_string(r.dir.join("timeseries.csv")).unwrap();
        let mut lines = ts.lines();
        assert_eq!(lines.next(), Some(TimeRow::CSV_HEADER));
        assert_eq!(lines.count(), seconds);
        assert!(seconds >= 1);
        let summary = std::fs::read_to_string(r.dir.join("summary.txt")).unwrap();
        assert_eq!(summary, r.text);
    }

    #[test]
    fn a_time_row_joins_its_fields() {
        let row = TimeRow::default();
        assert_eq!(row.fields().len(), TimeRow::csv_header().len());
        assert_eq!(
            row.fields().join(","),
            "0,run,0.000,0.0,0.000,0.00,0.00,0.0,0.000,0.00,0.00"
        );
    }
}
