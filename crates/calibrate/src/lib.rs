//! Sweeps of outstanding I/O built on the engine's job runner:
//!
//! - [`calibrate`]: an open, repeatable `calibrate_io`: a ladder of
//!   outstanding small random reads up to the knee or the latency limit
//!   (`max_iops`, `latency`), the same for large reads (`max_mbps`), repeated
//!   over trials with their spread;
//! - [`matrix`]: ORION's matrix of concurrent small random and large I/O
//!   streams, written in ORION's file layout by [`orion`].
//!
//! Targets are opened once per command; each measured point is one or more
//! [`iolens_engine::JobSpec`]s run by [`iolens_engine::run_job`] on the same
//! [`iolens_engine::TargetSet`] (see [`concurrent`]).

pub mod calibrate;
pub mod command;
pub mod concurrent;
pub use iolens_core::fmt;
pub mod ladder;
pub mod matrix;
pub mod orion;
pub mod split;
pub mod stats;
#[cfg(test)]
mod test_util;

pub use calibrate::{CalibrateConfig, Calibration};
pub use matrix::{MatrixConfig, MatrixOptions, MatrixRun};
