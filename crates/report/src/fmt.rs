//! Number formatting for people: thousands separators, latencies with a
//! unit that fits, and enough significant digits (never "0 ms" for 0.4 ms).
//! The formatters live in `iolens_core::fmt`, shared with the calibration
//! reports.

pub use iolens_core::fmt::{count, csv_number, grouped, latency_us, ratio, sig, sig_n};
