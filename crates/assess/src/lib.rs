//! `assess`: the whole picture of one storage from one call.
//!
//! 1. raw (`raw`): a calibration on a file under the assessed directory;
//! 2. database (`database`): a short SLOB-method run (managed PostgreSQL
//!    when its server binaries are found, embedded SQLite otherwise),
//!    read-only and then with 20 % updates, at a few session counts;
//! 3. the picture ([`picture`], [`render`]): a side-by-side table and one
//!    sentence on where the gap comes from, then an HTML report of it all.
//!
//! Each part calls its library directly (`iolens_calibrate`, `iolens_db`,
//! `iolens_report`) and gets typed values back. Each part still writes a
//! result directory of its own beside the assessment's `result.json`
//! (`calibrate/`, `db-s<N>-u<U>/`, `report/`): every part stays a full result
//! of its own kind, which `report` and `compare` read like any other, so a
//! figure of the assessment can be looked at in detail, reported again or
//! compared with a later run of the same command. The time budget
//! ([`AssessOptions::duration`]) is split between the parts and re-planned
//! before each database point ([`budget`]).

pub mod budget;
mod database;
pub mod options;
pub mod picture;
mod raw;
pub mod render;

pub use options::{AssessError, AssessOptions, Backend, DbChoice};

use budget::Clock;
use iolens_core::interrupt;
use iolens_core::result::assess::{AssessResult, AssessSections, AssessSummary};
use iolens_core::result::record::Recorder;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

/// Hears how an assessment goes.
pub trait AssessObserver {
    /// A part starts (`what` it does), `elapsed` into the `budget`; not
    /// called when the options ask for quiet.
    fn phase(&mut self, _elapsed: std::time::Duration, _budget: std::time::Duration, _what: &str) {}
    /// A part ended with an error; the assessment goes on without its figures.
    fn error(&mut self, _message: &str) {}
}

/// An observer that ignores everything.
impl AssessObserver for () {}

/// What an assessment produced.
#[derive(Debug)]
pub struct AssessReport {
    /// result.json as written.
    pub doc: AssessResult,
    /// summary.txt.
    pub text: String,
    /// The result directory.
    pub dir: PathBuf,
}

impl AssessReport {
    /// The exit code of the assessment's status.
    pub fn exit_code(&self) -> i32 {
        self.doc.status.exit_code()
    }
}

/// An assessment under way: its options, directories, clock and warnings.
struct Assessment<'a> {
    opts: &'a AssessOptions,
    backend: Backend,
    /// The assessment's result directory (the parts' directories are inside).
    out: PathBuf,
    /// Where the parts' files live under the assessed directory (removed after).
    work: PathBuf,
    clock: Clock,
    /// Advice drawn from the parts.
    warnings: Vec<String>,
    observer: &'a mut dyn AssessObserver,
}

impl Assessment<'_> {
    /// Announces a part.
    fn say(&mut self, what: &str) {
        if !self.opts.quiet {
            self.observer
                .phase(self.clock.elapsed(), self.clock.budget, what);
        }
    }

    /// Passes on a part's error.
    fn error(&mut self, message: &str) {
        self.observer.error(message);
    }
}

/// Whether Ctrl-C (or SIGTERM) asked the assessment to stop.
fn interrupted() -> bool {
    interrupt::requested()
}

/// Runs the assessment `opts` asks for and writes its result directory.
/// A part that fails is a warning (and, when it left no figure, the
/// assessment's error); an error before the parts start is returned.
pub fn run(
    opts: &AssessOptions,
    observer: &mut dyn AssessObserver,
) -> Result<AssessReport, AssessError> {
    let backend = opts.check()?;
    let dir = opts.output.create()?;
    let out = dir.path().to_path_buf();
    let work = opts.work_dir()?;
    let mut doc = AssessResult::new("assess", &opts.output.name);
    doc.config = json!({
        "dir": opts.dir.display().to_string(),
        "duration_s": opts.duration.as_secs_f64(),
        "db": backend.as_str(),
        "size": opts.size,
        "sessions": opts.sessions,
        "keep": opts.keep,
    });
    let rec = Recorder::start(dir, doc, Instant::now())?;
    let mut a = Assessment {
        opts,
        backend,
        out,
        work,
        clock: Clock::start(opts.duration),
        warnings: Vec::new(),
        observer,
    };
    let cal = raw::calibrate(&mut a);
    let points = if interrupted() {
        Vec::new()
    } else {
        database::run(&mut a)
    };
    if !opts.keep {
        let _ = std::fs::remove_dir_all(&a.work);
    }
    let summary = picture::picture(cal.as_ref(), points, backend);
    finish(a, rec, summary)
}

/// The final document and summary.txt, then the HTML report of everything.
fn finish(
    a: Assessment<'_>,
    mut rec: Recorder<Option<AssessSummary>, AssessSections>,
    summary: AssessSummary,
) -> Result<AssessReport, AssessError> {
    let elapsed = rec.elapsed_s();
    let error = picture::missing(&summary)
        .filter(|_| !interrupted())
        .map(|missing| format!("no figures from: {missing} (see the warnings)"));
    let text = render::render(&summary, &a.warnings, &a.out, elapsed);
    rec.doc.summary = Some(summary);
    rec.doc.extra.warnings = Some(a.warnings);
    rec.finish(error, interrupted(), &text)?;
    if !interrupted() {
        write_report(&a.out);
    }
    Ok(AssessReport {
        doc: rec.doc.clone(),
        text,
        dir: a.out,
    })
}

/// `report/`: the HTML report of the assessment and its parts. The
/// assessment stands without it, so a failure here is not one.
fn write_report(out: &Path) {
    let options = iolens_report::Options {
        latency_slo_us: 1e3,
        title: None,
        png: true,
        tool_version: env!("CARGO_PKG_VERSION").into(),
        generated_at: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
    };
    if let Ok(rep) = iolens_report::Report::build(&[out.to_path_buf()], options) {
        let _ = rep.write(&out.join("report"));
    }
}
