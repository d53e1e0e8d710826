//! Core types shared by every iolens command: typed units (sizes, durations),
//! latency statistics, number formatting for people, host facts, the result
//! schema and result directories, the sweep document (`sweep.json`) and the
//! kinds of errors.

pub mod error;
pub mod fmt;
pub mod host;
pub mod interrupt;
pub mod latency;
pub mod result;
pub mod sweep;
pub mod units;

pub use error::{Classify, ErrorKind};
pub use latency::{LatencyHistogram, LatencySummary};
pub use result::record::{Output, Recorder, Series};
pub use result::{AnyResult, Document, ResultDir, ResultDoc, Status, SCHEMA};
pub use units::{parse_duration, ByteSize, DurationArg};
