//! The one recorder of a measurement's result directory.
//!
//! Every measuring command writes its directory the same way:
//!
//! 1. [`Recorder::start`]: `result.json` with `status: running` before the
//!    first I/O, so a kill at any moment leaves a valid, marked document;
//! 2. time series ([`Recorder::series`]) appended and flushed row by row as
//!    the run goes, and `result.json` rewritten atomically after each step
//!    ([`Recorder::save`]);
//! 3. [`Recorder::finish`]: the final document (`ok`, `failed` or
//!    `interrupted`) and `summary.txt`, each written atomically.
//!
//! A recorder dropped before `finish` (an error returned early, a panic)
//! still rewrites `result.json` as `interrupted` (after Ctrl-C) or `failed`,
//! keeping the figures saved so far: the directory never stays `running`
//! once the process is gone.

use super::{Document, ResultDir, ResultError, Status};
use crate::interrupt;
use serde::Serialize;
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Default parent of result directories.
pub const RESULTS_ROOT: &str = "iolens-results";

/// Where a measuring command writes its result directory (every command's
/// `--name` and `--output`).
#[derive(Clone, Debug, Default)]
pub struct Output {
    /// The run's name (in `result.json` and the default directory name).
    pub name: String,
    /// The result directory; None: a new `<UTC timestamp>-<name>` under
    /// [`RESULTS_ROOT`].
    pub dir: Option<PathBuf>,
}

impl Output {
    /// Creates the result directory (never over an earlier result).
    pub fn create(&self) -> Result<ResultDir, ResultError> {
        match &self.dir {
            Some(p) => ResultDir::create(p),
            None => ResultDir::create_default(Path::new(RESULTS_ROOT), &self.name),
        }
    }
}

/// The error a recorder dropped before [`Recorder::finish`] writes.
pub const ENDED_EARLY: &str = "the command ended before the measurement finished";

/// A result directory being written for one document of kind `Document<S, X>`.
pub struct Recorder<S: Serialize, X: Serialize> {
    dir: ResultDir,
    /// The document as it stands; [`Recorder::save`] writes it.
    pub doc: Document<S, X>,
    started: Instant,
    finished: bool,
}

impl<S: Serialize, X: Serialize> Recorder<S, X> {
    /// Writes `doc` into `dir` as `running`. `started` is when the command
    /// began: `duration_s` counts from it (setup included).
    pub fn start(
        dir: ResultDir,
        mut doc: Document<S, X>,
        started: Instant,
    ) -> Result<Self, ResultError> {
        doc.status = Status::Running;
        dir.write_result(&doc)?;
        Ok(Recorder {
            dir,
            doc,
            started,
            finished: false,
        })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Seconds since the command began.
    pub fn elapsed_s(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    /// Rewrites `result.json` (atomically) with the document as it stands.
    pub fn save(&mut self) -> Result<(), ResultError> {
        self.doc.duration_s = self.elapsed_s();
        self.dir.write_result(&self.doc)
    }

    /// Writes another file of the directory atomically (`ladder.csv`, ...).
    pub fn write_file(&self, name: &str, bytes: &[u8]) -> Result<(), ResultError> {
        self.dir.write_file(name, bytes)
    }

    /// Opens a CSV time series `name` with its header; each row is appended
    /// and flushed as it comes, so the file is complete up to the last second.
    pub fn series(&self, name: &str, header: &[&str]) -> Result<Series, ResultError> {
        let file = self.dir.append(name)?;
        let mut s = Series {
            path: self.dir.path().join(name),
            csv: csv::WriterBuilder::new().flexible(true).from_writer(file),
        };
        s.row(header)?;
        Ok(s)
    }

    /// Ends the measurement: the status follows from `error` and
    /// `interrupted`, then `result.json` and `summary.txt` are written.
    pub fn finish(
        &mut self,
        error: Option<String>,
        interrupted: bool,
        summary_text: &str,
    ) -> Result<(), ResultError> {
        self.doc.status = Status::ended(error.is_some(), interrupted);
        self.doc.error = error;
        self.finished = true;
        self.save()?;
        self.dir.write_file("summary.txt", summary_text.as_bytes())
    }
}

impl<S: Serialize, X: Serialize> Drop for Recorder<S, X> {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        self.doc.status = if interrupt::requested() {
            Status::Interrupted
        } else {
            Status::Failed
        };
        if self.doc.status == Status::Failed {
            self.doc.error.get_or_insert_with(|| ENDED_EARLY.into());
        }
        let _ = self.save();
    }
}

/// A CSV file of a result directory written row by row.
pub struct Series {
    path: PathBuf,
    csv: csv::Writer<File>,
}

impl Series {
    /// Appends one row and flushes it to the file.
    pub fn row<I, T>(&mut self, fields: I) -> Result<(), ResultError>
    where
        I: IntoIterator<Item = T>,
        T: AsRef<[u8]>,
    {
        let write = |csv: &mut csv::Writer<File>| -> io::Result<()> {
            csv.write_record(fields).map_err(io::Error::other)?;
            csv.flush()
        };
        write(&mut self.csv).map_err(|source| ResultError::Io {
            path: self.path.clone(),
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::ResultDoc;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("iolens-rec-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    fn status_in(dir: &Path) -> (Status, Option<String>) {
        let doc = ResultDoc::load(&dir.join("result.json")).unwrap();
        (doc.status, doc.error)
    }

    #[test]
    fn a_recorder_writes_running_then_the_final_document_and_summary() {
        let p = scratch("final");
        let mut r = Recorder::start(
            ResultDir::create(&p).unwrap(),
            ResultDoc::new("run", "t"),
            Instant::now(),
        )
        .unwrap();
        assert_eq!(status_in(&p).0, Status::Running);
        let mut ts = r.series("timeseries.csv", &["sec", "phase"]).unwrap();
        ts.row(["1", "run"]).unwrap();
        // Rows are on disk as soon as they are written.
        let text = std::fs::read_to_string(p.join("timeseries.csv")).unwrap();
        assert_eq!(text, "sec,phase\n1,run\n");
        r.finish(None, false, "done\n").unwrap();
        drop(r);
        assert_eq!(status_in(&p), (Status::Ok, None));
        assert_eq!(
            std::fs::read_to_string(p.join("summary.txt")).unwrap(),
            "done\n"
        );
        std::fs::remove_dir_all(&p).unwrap();
    }

    #[test]
    fn a_recorder_dropped_before_finishing_marks_the_result_failed() {
        let p = scratch("dropped");
        let r = Recorder::start(
            ResultDir::create(&p).unwrap(),
            ResultDoc::new("run", "t"),
            Instant::now(),
        )
        .unwrap();
        drop(r);
        let (status, error) = status_in(&p);
        assert_eq!(status, Status::Failed);
        assert_eq!(error.as_deref(), Some(ENDED_EARLY));
        assert!(!p.join("summary.txt").exists());
        std::fs::remove_dir_all(&p).unwrap();
    }

    #[test]
    fn a_failed_finish_keeps_its_error_and_status() {
        let p = scratch("failed");
        let mut r = Recorder::start(
            ResultDir::create(&p).unwrap(),
            ResultDoc::new("run", "t"),
            Instant::now(),
        )
        .unwrap();
        r.finish(Some("read error at 4096".into()), true, "x")
            .unwrap();
        drop(r);
        let (status, error) = status_in(&p);
        assert_eq!(status, Status::Failed);
        assert_eq!(error.as_deref(), Some("read error at 4096"));
        std::fs::remove_dir_all(&p).unwrap();
    }
}
