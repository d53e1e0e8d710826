//! `iolens`: storage seen through the lens of a database.
//!
//! main reads as the pipeline: parse options → run the command → map its
//! outcome to an exit code (0 ok, 1 failed run, 2 bad input, 130 interrupted).

mod args;
mod cmd_assess;
mod cmd_calibrate;
mod cmd_compare;
mod cmd_db;
mod cmd_matrix;
mod cmd_report;
mod cmd_run;
mod cmd_sweep;
mod errors;
mod output;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = match args::Cli::try_parse() {
        Ok(c) => c,
        Err(e) => return errors::clap_error(e),
    };
    install_signal_handlers();
    let result = match cli.command {
        args::Command::Run(a) => cmd_run::run(a),
        args::Command::Assess(a) => cmd_assess::run(a),
        args::Command::Db(a) => cmd_db::run(a),
        args::Command::Sweep(a) => cmd_sweep::run(a),
        args::Command::Report(a) => cmd_report::run(a),
        args::Command::Compare(a) => cmd_compare::run(a),
        args::Command::Calibrate(a) => cmd_calibrate::run(a),
        args::Command::Matrix(a) => cmd_matrix::run(a),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(e) => errors::report(&e),
    }
}

/// Ctrl-C and SIGTERM set the stop flag; every long operation polls it and
/// ends cleanly, writing its result as `interrupted`.
fn install_signal_handlers() {
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        let _ = unsafe { signal_hook::low_level::register(sig, iolens_core::interrupt::request) };
    }
    // A closed stdout (`iolens run ... | head`) is not an error worth a panic.
    // SAFETY: setting a signal disposition to its default.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
}
