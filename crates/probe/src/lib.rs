//! OS probes: what the block devices saw (`/proc/diskstats`), CPU time, and
//! which device lies under a path (and whether it is mounted).

pub mod blockdev;
pub mod cpu;
pub mod diskstats;

pub use blockdev::{device_of_path, free_bytes, BlockDevice};
pub use cpu::{machine_cpu, process_cpu, MachineCpu, ProcessCpu};
pub use diskstats::{DiskDelta, DiskStats};
