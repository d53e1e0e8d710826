//! Sweeps: one iolens command run at every point of a plan (the cartesian
//! product of a TOML file's axes, or an explicit list of points), each point
//! writing its own result directory inside one sweep directory.
//!
//! - [`plan`] reads and checks the sweep file ([`Plan::parse`], module `plan`).
//! - [`run`] runs it (module `runner`): `sweep.json` in the sweep directory
//!   records the plan and each point's status and is rewritten (atomically)
//!   after every point (module `dir`, typed as [`iolens_core::sweep::SweepDoc`]).
//! - `--resume` keeps points whose result.json says `ok` and runs the rest;
//!   an earlier, unfinished attempt is moved to `.attempts/`, never deleted.
//! - A failed point is recorded and the sweep goes on.
//! - Ctrl-C / SIGTERM stops the running child (it writes its result as
//!   `interrupted`), keeps every finished point and the sweep ends `interrupted`.
//!
//! **Why one process per point** (module `child`): each point runs as a child
//! process of the iolens binary, exactly the command a user would type. A
//! crash, a leak (memory, file descriptors, threads stuck in the kernel) or a
//! signal in one point cannot spoil the points after it, and each point's
//! result directory is written by the same code as a single command, so a
//! sweep point and a lone run can never disagree.
//!
//! Progress is reported through [`Progress`]; the library prints nothing.
//! The file format is documented in docs/sweep.md.

mod child;
mod dir;
mod error;
mod plan;
mod runner;

pub use error::SweepError;
pub use plan::{shell_words, Plan, PlannedPoint};
pub use runner::{plan, run, PointDone, Progress, Start, SweepOptions, SweepOutcome, Tick};

/// Seconds as `42s`, `3m05s` or `1h02m`.
pub fn hms(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}
