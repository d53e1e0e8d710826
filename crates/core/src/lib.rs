//! Core types shared by every iolens command: typed units (sizes, durations),
//! latency statistics, host facts, the result schema and result directories.

pub mod host;
pub mod interrupt;
pub mod latency;
pub mod result;
pub mod units;

pub use latency::{LatencyHistogram, LatencySummary};
pub use result::{AnyResult, Document, ResultDir, ResultDoc, Status, SCHEMA};
pub use units::{parse_duration, ByteSize, DurationArg};
