//! Result directories and live progress, shared by the measuring commands.

use crate::args::OutputArgs;
use anyhow::Result;
use iolens_core::result::ResultDir;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

/// Default parent of result directories.
pub const RESULTS_ROOT: &str = "iolens-results";

/// Creates the result directory the options ask for.
pub fn result_dir(o: &OutputArgs, default_name: &str) -> Result<ResultDir> {
    let name = o.name.clone().unwrap_or_else(|| default_name.to_string());
    Ok(match &o.output {
        Some(p) => ResultDir::create(p)?,
        None => ResultDir::create_default(&PathBuf::from(RESULTS_ROOT), &name)?,
    })
}

/// A one-line progress display on stderr (only on a terminal, unless quiet).
pub struct Progress {
    on: bool,
    tty: bool,
}

impl Progress {
    /// Progress for these output options.
    pub fn new(o: &OutputArgs) -> Progress {
        let tty = std::io::stderr().is_terminal();
        Progress {
            on: !o.quiet && tty,
            tty,
        }
    }

    /// Replaces the progress line.
    pub fn line(&self, text: &str) {
        if self.on {
            let mut e = std::io::stderr();
            let _ = write!(e, "\r\x1b[2K{text}");
            let _ = e.flush();
        }
    }

    /// Clears the progress line.
    pub fn clear(&self) {
        if self.on && self.tty {
            let mut e = std::io::stderr();
            let _ = write!(e, "\r\x1b[2K");
            let _ = e.flush();
        }
    }
}
