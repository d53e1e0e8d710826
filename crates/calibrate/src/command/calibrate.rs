//! The `calibrate` command: validated calibration → targets (opened once)
//! → ladders → result directory (`result.json` rewritten after every step,
//! `ladder.csv`, `summary.txt`), all written through one [`Recorder`].

use crate::calibrate::{self, CalibrateConfig, Calibration, Event, IoKind};
use crate::ladder::Phase;
use iolens_core::result::calibrate::{CalibrateResult, CalibrateSections, CalibrateSummary};
use iolens_core::result::record::Recorder;
use iolens_core::result::Status;
use iolens_core::Output;
use iolens_engine::command::target_infos;
use iolens_engine::TargetSet;
use std::fmt;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

/// The recorder of a calibration's result directory.
type CalibrateRecorder = Recorder<Option<CalibrateSummary>, CalibrateSections>;

/// Errors that stop a calibration before it has a result of its own: the
/// same as any measuring command's (targets, job, result directory).
pub use iolens_engine::command::CommandError as CalibrateError;

/// Where a calibration stands, about every 50 ms while a step runs.
#[derive(Clone, Debug)]
pub struct StepProgress {
    pub trial: u32,
    pub trials: u32,
    pub io: IoKind,
    pub phase: Phase,
    pub outstanding: u32,
    /// Steps started so far, this one included.
    pub step_no: u32,
    /// Seconds into this step.
    pub in_step_s: f64,
    /// Length of a step (ramp included), seconds.
    pub step_s: f64,
}

impl fmt::Display for StepProgress {
    /// `trial 1/3 small reads, 8 outstanding (step 4): 1/3s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "trial {}/{} {} reads, {} outstanding{} (step {}): {:.0}/{:.0}s",
            self.trial,
            self.trials,
            if self.io == IoKind::Small {
                "small"
            } else {
                "large"
            },
            self.outstanding,
            if self.phase == Phase::Refine {
                ", refining"
            } else {
                ""
            },
            self.step_no,
            self.in_step_s.min(self.step_s),
            self.step_s
        )
    }
}

/// What a calibration produced.
#[derive(Debug)]
pub struct CalibrateReport {
    /// result.json as written.
    pub doc: CalibrateResult,
    /// summary.txt.
    pub text: String,
    /// The result directory.
    pub dir: PathBuf,
}

impl CalibrateReport {
    /// The exit code of the calibration's status.
    pub fn exit_code(&self) -> i32 {
        self.doc.status.exit_code()
    }
}

/// Runs `cfg` (validated) and writes its result directory where `output`
/// says. `stop` ends
/// the calibration early, keeping every finished step; `progress` hears
/// where it stands. A failure during the steps is the report's status; an
/// error before the first step is returned.
pub fn run(
    cfg: &CalibrateConfig,
    output: &Output,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&StepProgress),
) -> Result<CalibrateReport, CalibrateError> {
    let targets = Arc::new(TargetSet::open(&cfg.open_spec())?);
    let mut doc = CalibrateResult::new("calibrate", &output.name);
    doc.targets = target_infos(&targets);
    doc.config = serde_json::to_value(cfg).unwrap_or_default();
    let mut rec = Recorder::start(output.create()?, doc, Instant::now())?;
    let cal = measure(cfg, &targets, &mut rec, stop, progress)?;
    finish(cfg, &cal, rec)
}

/// The ladders, with `result.json` rewritten after every step.
fn measure(
    cfg: &CalibrateConfig,
    targets: &Arc<TargetSet>,
    rec: &mut CalibrateRecorder,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(&StepProgress),
) -> Result<Calibration, CalibrateError> {
    let mut now = StepProgress {
        trial: 0,
        trials: cfg.trials,
        io: IoKind::Small,
        phase: Phase::Ladder,
        outstanding: 0,
        step_no: 0,
        in_step_s: 0.0,
        step_s: (cfg.step + cfg.ramp).as_secs_f64(),
    };
    let mut step_started = Instant::now();
    let mut write_error = None;
    let cal = calibrate::run(cfg, targets, stop, &mut |ev| match ev {
        Event::Step {
            trial,
            io,
            phase,
            outstanding,
            started,
        } => {
            now.step_no += 1;
            (now.trial, now.io, now.phase, now.outstanding) = (trial, io, phase, outstanding);
            step_started = started;
        }
        Event::Tick => {
            now.in_step_s = step_started.elapsed().as_secs_f64();
            progress(&now);
        }
        Event::Measured(c) => {
            record(&mut rec.doc, c);
            if let Err(e) = rec.save() {
                write_error.get_or_insert(e);
            }
        }
    })?;
    match write_error {
        Some(e) => Err(e.into()),
        None => Ok(cal),
    }
}

/// Takes the calibration so far into the document.
fn record(doc: &mut CalibrateResult, cal: &Calibration) {
    doc.summary = Some(cal.summary());
    doc.extra.ladder = Some(cal.points.clone());
    doc.extra.trials = Some(cal.trials.clone());
}

/// The final document with its warnings, `ladder.csv` and `summary.txt`.
fn finish(
    cfg: &CalibrateConfig,
    cal: &Calibration,
    mut rec: CalibrateRecorder,
) -> Result<CalibrateReport, CalibrateError> {
    record(&mut rec.doc, cal);
    let warnings = calibrate::warnings(cfg, cal);
    rec.doc.extra.warnings = Some(warnings.clone());
    rec.write_file("ladder.csv", calibrate::ladder_csv(cal).as_bytes())?;
    let status = Status::ended(cal.error.is_some(), cal.interrupted);
    let text = calibrate::report_text(cfg, cal, status.as_str(), &warnings);
    rec.finish(cal.error.clone(), cal.interrupted, &text)?;
    Ok(CalibrateReport {
        doc: rec.doc.clone(),
        text,
        dir: rec.path().to_path_buf(),
    })
}
