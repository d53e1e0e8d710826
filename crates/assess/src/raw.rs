//! The raw part: a calibration (one trial, short steps) on a file under
//! the assessed directory, written to `calibrate/`.

use crate::budget::{self, CALIBRATE_RAMP};
use crate::{interrupted, Assessment};
use iolens_calibrate::calibrate::CalibrateConfig;
use iolens_calibrate::command::calibrate;
use iolens_core::interrupt::STOP;
use iolens_core::result::calibrate::CalibrateResult;
use iolens_core::units::human_bytes;
use iolens_core::{Classify, ErrorKind, Output};
use std::path::Path;

/// The calibration of the assessed storage: a file of `size` bytes under
/// `work`, steps that fit the budget.
pub(crate) fn config(target: &Path, size: u64, step_s: f64) -> CalibrateConfig {
    CalibrateConfig {
        targets: vec![target.to_path_buf()],
        size: Some(size),
        trials: 1,
        step: budget::rounded(step_s, 2),
        ramp: CALIBRATE_RAMP,
        max_outstanding: 128,
        ..CalibrateConfig::default()
    }
}

/// The exit code a command that ended with an error of this kind has.
pub(crate) fn exit_code(e: &dyn Classify) -> i32 {
    match e.kind() {
        ErrorKind::BadInput => 2,
        ErrorKind::Failed => 1,
    }
}

/// An error and its causes on one line, as the command line shows it.
pub(crate) fn message(e: &dyn std::error::Error) -> String {
    let mut parts = vec![e.to_string()];
    let mut source = e.source();
    while let Some(s) = source {
        parts.push(s.to_string());
        source = s.source();
    }
    parts.join(": ")
}

/// Runs the raw part; its document when the calibration wrote one. The
/// calibrated file is removed afterwards.
pub(crate) fn calibrate(a: &mut Assessment<'_>) -> Option<CalibrateResult> {
    let dir = a.out.join("calibrate");
    let step_s = budget::calibrate_step_s(a.clock.budget);
    a.say(&format!(
        "raw: calibrate on {} ({} file, steps of {step_s:.1}s)",
        a.opts.dir.display(),
        human_bytes(a.opts.size)
    ));
    let target = a.work.join("calibrate.dat");
    let cfg = config(&target, a.opts.size, step_s);
    let output = Output {
        name: "calibrate".into(),
        dir: Some(dir.clone()),
    };
    let result = match cfg.validate() {
        Ok(()) => calibrate::run(&cfg, &output, &STOP, &mut |_| {})
            .map_err(|e| (message(&e), exit_code(&e))),
        Err(e) => Err((e, 2)),
    };
    let _ = std::fs::remove_file(&target);
    let (doc, code) = match result {
        Ok(r) => {
            let code = r.exit_code();
            (Some(r.doc), code)
        }
        Err((msg, code)) => {
            a.error(&msg);
            (None, code)
        }
    };
    if code != 0 && !interrupted() {
        a.warnings.push(format!(
            "calibrate exited with code {code}; see {}",
            dir.display()
        ));
    }
    doc
}
