//! Raw I/O for iolens: targets, access distributions, engines (psync,
//! io_uring, null, and a fault-injecting engine that tests the failure paths)
//! behind one small trait with capability flags, and the job runner that
//! measures them.

pub mod buffers;
pub mod command;
pub mod dist;
pub mod engines;
pub mod rng;
pub mod spec;
pub mod target;

pub use spec::{EngineKind, JobSpec, Layout, Rw};
pub mod job;
pub mod verify;
pub mod worker;

pub use job::{run_job, JobError, JobOutcome, TimeRow};
pub use target::{TargetError, TargetSet};
pub mod report;

/// A target that cannot be used, or a job that cannot start, is the user's to fix.
impl iolens_core::Classify for TargetError {
    fn kind(&self) -> iolens_core::ErrorKind {
        iolens_core::ErrorKind::BadInput
    }
}

impl iolens_core::Classify for JobError {
    fn kind(&self) -> iolens_core::ErrorKind {
        iolens_core::ErrorKind::BadInput
    }
}
