//! `iolens matrix`: ORION's options → `iolens_calibrate::command::matrix::run`
//! (the matrix, ORION's files and `result.json`), with live progress and
//! ORION's summary printed.

mod args;

pub use args::MatrixArgs;

use crate::output::{print_result, progress_shown, Progress};
use anyhow::Result;
use iolens_calibrate::command;
use iolens_calibrate::matrix::{MatrixConfig, MatrixEvent};
use iolens_core::interrupt::STOP;
use std::time::Instant;

/// The command line as typed, for the summary (arguments with spaces quoted).
fn commandline() -> String {
    std::env::args()
        .map(|a| {
            if a.is_empty() || a.contains(char::is_whitespace) {
                format!("'{a}'")
            } else {
                a
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

pub fn run(a: MatrixArgs) -> Result<u8> {
    let progress = Progress::counted(progress_shown(a.out.quiet), 0);
    let mut shown = PointProgress::default();
    let report = command::matrix::run(
        &a.options(),
        &a.out.output(&a.test),
        &commandline(),
        &STOP,
        &mut |cfg, ev| shown.event(&progress, cfg, ev),
    );
    progress.clear();
    let report = report?;
    let dir = format!("{} ({}_*)", report.dir.display(), report.prefix);
    print_result(&a.out, &report.doc, &report.text, dir, report.exit_code())
}

/// The point that runs, for the progress bar.
#[derive(Default)]
struct PointProgress {
    started: Option<Instant>,
    point: usize,
    small: u32,
    large: u32,
}

impl PointProgress {
    /// The bar counts milliseconds of planned work, so that its ETA moves
    /// within a point as well as between points.
    fn event(&mut self, bar: &Progress, cfg: &MatrixConfig, ev: &MatrixEvent<'_>) {
        let total = cfg.points.len();
        let planned_ms = ((cfg.ramp + cfg.duration).as_secs_f64() * 1e3) as u64;
        match *ev {
            MatrixEvent::Start {
                point,
                small,
                large,
                ..
            } => {
                bar.set_total(total as u64 * planned_ms);
                *self = PointProgress {
                    started: Some(Instant::now()),
                    point,
                    small,
                    large,
                };
            }
            MatrixEvent::Tick => {
                let elapsed = self.started.map_or(0, |s| s.elapsed().as_millis() as u64);
                let in_point = elapsed.min(planned_ms);
                bar.set_position((self.point as u64).saturating_sub(1) * planned_ms + in_point);
                bar.line(&format!(
                    "{}/{total} Small={} Large={}",
                    self.point, self.small, self.large
                ));
            }
            MatrixEvent::Done(_) => {}
        }
    }
}
