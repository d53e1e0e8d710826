//! The `matrix` command as a library call: options → resolved matrix
//! (ORION's runs and defaults) → targets (opened once) → points → ORION's
//! files plus `result.json`, all rewritten after every point so an
//! interrupt keeps the finished ones.

use crate::matrix::{self, MatrixConfig, MatrixEvent, MatrixOptions, MatrixRun};
use crate::orion;
use iolens_core::result::matrix::{MatrixFiles, MatrixResult, MatrixSections, MatrixSummary};
use iolens_core::result::{ResultError, TargetInfo};
use iolens_core::{Output, Recorder, Status};
use iolens_engine::command::{status_name, target_infos, CommandError};
use iolens_engine::TargetSet;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

/// What `matrix` produced.
#[derive(Debug)]
pub struct MatrixReport {
    /// result.json as written.
    pub doc: MatrixResult,
    /// summary.txt (ORION's summary file).
    pub text: String,
    /// The result directory.
    pub dir: PathBuf,
    /// The prefix of ORION's files in it (`<test>_<YYYYMMDD_HHMM>`).
    pub prefix: String,
}

impl MatrixReport {
    /// The exit code of the run's status.
    pub fn exit_code(&self) -> i32 {
        self.doc.status.exit_code()
    }
}

/// The result directory of a matrix and what its files repeat.
struct Files<'a> {
    rec: Recorder<Option<MatrixSummary>, MatrixSections>,
    names: MatrixFiles,
    cfg: &'a MatrixConfig,
    infos: Vec<TargetInfo>,
    commandline: &'a str,
    /// The trace file as written so far.
    trace: String,
}

impl Files<'_> {
    /// Rewrites ORION's files for `run` and `result.json`; returns the summary.
    fn write(
        &mut self,
        run: &MatrixRun,
        status: &str,
        warnings: &[String],
    ) -> Result<String, ResultError> {
        let (cfg, n) = (self.cfg, &self.names);
        self.rec
            .write_file(&n.iops, orion::iops_csv(cfg, run).as_bytes())?;
        self.rec
            .write_file(&n.mbps, orion::mbps_csv(cfg, run).as_bytes())?;
        self.rec
            .write_file(&n.lat, orion::lat_csv(cfg, run).as_bytes())?;
        let text = orion::summary_txt(cfg, run, &self.infos, self.commandline, status, warnings);
        self.rec.write_file(&n.summary, text.as_bytes())?;
        self.rec.save()?;
        Ok(text)
    }

    /// A point ended: its trace, ORION's files and `result.json` as they stand.
    fn point_done(&mut self, run: &MatrixRun) -> Result<(), ResultError> {
        if let (Some(p), Some(rows)) = (run.points.last(), run.rows.last()) {
            self.trace
                .push_str(&orion::trace_point(self.cfg.points.len(), p, rows));
            self.rec
                .write_file(&self.names.trace, self.trace.as_bytes())?;
        }
        self.rec.doc.extra.points = run.points.clone();
        self.write(run, "running", &[]).map(|_| ())
    }
}

/// `matrix`: resolves `opts`, opens the targets, runs every point until the
/// end or `stop`, and writes the result directory `out` names. `commandline`
/// is repeated in ORION's files; `observer` sees the matrix and each event.
/// A failure during the run is the report's status; an error before it
/// starts (or in writing the files) is returned.
pub fn run(
    opts: &MatrixOptions,
    out: &Output,
    commandline: &str,
    stop: &AtomicBool,
    observer: &mut dyn FnMut(&MatrixConfig, &MatrixEvent<'_>),
) -> Result<MatrixReport, CommandError> {
    let started = Instant::now();
    let cfg = opts.resolve().map_err(CommandError::Usage)?;
    let targets = Arc::new(TargetSet::open(&cfg.open_spec())?);
    let dir = out.create()?;
    let prefix = format!("{}_{}", cfg.test, orion::stamp(SystemTime::now()));
    let [summary, iops, mbps, lat, trace] = orion::file_names(&prefix);
    let names = MatrixFiles {
        summary,
        iops,
        mbps,
        lat,
        trace,
    };
    let infos = target_infos(&targets);
    let mut doc = MatrixResult::new("matrix", &out.name);
    doc.targets = infos.clone();
    doc.config = serde_json::to_value(&cfg).unwrap_or_default();
    doc.extra.files = Some(names.clone());
    let rec = Recorder::start(dir, doc, started)?;
    let trace = orion::trace_header(&cfg, commandline);
    rec.write_file(&names.trace, trace.as_bytes())?;
    let mut files = Files {
        rec,
        names,
        cfg: &cfg,
        infos,
        commandline,
        trace,
    };

    let mut write_error: Option<ResultError> = None;
    let outcome = matrix::run(&cfg, &targets, stop, &mut |ev| {
        observer(&cfg, &ev);
        if let MatrixEvent::Done(run) = ev {
            if let Err(e) = files.point_done(run) {
                write_error.get_or_insert(e);
            }
        }
    })?;
    if let Some(e) = write_error {
        return Err(e.into());
    }
    finish(files, outcome, prefix)
}

/// The final document, ORION's files and `summary.txt`.
fn finish(
    mut files: Files<'_>,
    outcome: MatrixRun,
    prefix: String,
) -> Result<MatrixReport, CommandError> {
    let cfg = files.cfg;
    let status = Status::ended(outcome.error.is_some(), outcome.interrupted);
    let warnings = orion::warnings(cfg, &outcome);
    let doc = &mut files.rec.doc;
    doc.status = status;
    doc.summary = Some(outcome.summary(cfg.points.len()));
    doc.extra.points = outcome.points.clone();
    doc.extra.warnings = Some(warnings.clone());
    let text = files.write(&outcome, &status_name(status), &warnings)?;
    files
        .rec
        .finish(outcome.error.clone(), outcome.interrupted, &text)?;
    Ok(MatrixReport {
        doc: files.rec.doc.clone(),
        text,
        dir: files.rec.path().to_path_buf(),
        prefix,
    })
}
