//! The process-wide "stop, please" flag set by Ctrl-C and SIGTERM.
//!
//! Long operations (filling a target, running a job, loading a database)
//! poll [`requested`] and stop cleanly, so an interrupted run still writes a
//! valid result marked `interrupted` and leaves nothing behind.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by the signal handler installed by the CLI.
pub static STOP: AtomicBool = AtomicBool::new(false);

/// Whether an interrupt was requested.
pub fn requested() -> bool {
    STOP.load(Ordering::Relaxed)
}

/// Requests a stop (as a signal would).
pub fn request() {
    STOP.store(true, Ordering::Relaxed);
}
