//! Latency histograms and their summaries.
//!
//! Every worker records into its own [`LatencyHistogram`] (no lock per I/O);
//! the histograms are merged when the run ends. Values are nanoseconds from
//! 1 ns to 1 hour with two significant digits: 128 linear sub-buckets per
//! power of two, so any recorded value is reported within 0.78 % of its true
//! value (the same bound as fio's 64-buckets-per-octave histogram, stated in
//! its `stat.h`).

use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

/// Highest trackable latency: one hour, in nanoseconds.
const MAX_NS: u64 = 3_600_000_000_000;

/// A latency histogram in nanoseconds with ≤ 0.78 % relative error.
#[derive(Clone, Debug)]
pub struct LatencyHistogram {
    h: Histogram<u64>,
    sum_ns: u128,
}

impl Default for LatencyHistogram {
    fn default() -> Self {
        Self::new()
    }
}

impl LatencyHistogram {
    /// An empty histogram.
    pub fn new() -> Self {
        LatencyHistogram {
            h: Histogram::new_with_bounds(1, MAX_NS, 2).expect("static histogram bounds are valid"),
            sum_ns: 0,
        }
    }

    /// Records one latency; values beyond one hour are clamped.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        let v = ns.clamp(1, MAX_NS);
        self.h.saturating_record(v);
        self.sum_ns += v as u128;
    }

    /// Number of recorded values.
    pub fn count(&self) -> u64 {
        self.h.len()
    }

    /// Exact mean of the recorded values (the sum is kept separately), in ns.
    pub fn mean_ns(&self) -> f64 {
        if self.count() == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.count() as f64
        }
    }

    /// Sum of the recorded values in ns.
    pub fn sum_ns(&self) -> u128 {
        self.sum_ns
    }

    /// Value at quantile `q` (0..=1), in ns.
    pub fn quantile_ns(&self, q: f64) -> u64 {
        if self.count() == 0 {
            0
        } else {
            self.h.value_at_quantile(q)
        }
    }

    /// Adds every value of `other` into `self`.
    pub fn merge(&mut self, other: &LatencyHistogram) {
        self.h
            .add(&other.h)
            .expect("histograms share bounds, so adding cannot fail");
        self.sum_ns += other.sum_ns;
    }

    /// Forgets every value.
    pub fn reset(&mut self) {
        self.h.reset();
        self.sum_ns = 0;
    }

    /// The summary in microseconds.
    pub fn summary(&self) -> LatencySummary {
        if self.count() == 0 {
            return LatencySummary::default();
        }
        let us = |ns: u64| round3(ns as f64 / 1e3);
        LatencySummary {
            mean: round3(self.mean_ns() / 1e3),
            min: us(self.h.min()),
            p50: us(self.quantile_ns(0.50)),
            p90: us(self.quantile_ns(0.90)),
            p95: us(self.quantile_ns(0.95)),
            p99: us(self.quantile_ns(0.99)),
            p99_9: us(self.quantile_ns(0.999)),
            p99_99: us(self.quantile_ns(0.9999)),
            max: us(self.h.max()),
        }
    }
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// Latency percentiles in microseconds (`lat_us` in the result schema).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LatencySummary {
    pub mean: f64,
    pub min: f64,
    pub p50: f64,
    pub p90: f64,
    pub p95: f64,
    pub p99: f64,
    pub p99_9: f64,
    pub p99_99: f64,
    pub max: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_within_one_percent() {
        let mut h = LatencyHistogram::new();
        for v in 1..=100_000u64 {
            h.record(v * 1000); // 1 µs .. 100 ms
        }
        let s = h.summary();
        let close = |got: f64, want: f64| (got - want).abs() / want <= 0.01;
        assert!(close(s.p50, 50_000.0), "p50 {}", s.p50);
        assert!(close(s.p99, 99_000.0), "p99 {}", s.p99);
        assert!(close(s.p99_9, 99_900.0), "p99.9 {}", s.p99_9);
        assert!(close(s.mean, 50_000.5), "mean {}", s.mean);
        assert_eq!(s.min, 1.0);
    }

    #[test]
    fn merge_equals_recording_everything_in_one() {
        let mut a = LatencyHistogram::new();
        let mut b = LatencyHistogram::new();
        let mut all = LatencyHistogram::new();
        for v in 0..10_000u64 {
            let ns = 1000 + (v * 7919) % 500_000;
            if v % 3 == 0 {
                a.record(ns)
            } else {
                b.record(ns)
            }
            all.record(ns);
        }
        a.merge(&b);
        assert_eq!(a.count(), all.count());
        assert_eq!(a.summary(), all.summary());
        assert_eq!(a.sum_ns(), all.sum_ns());
    }

    #[test]
    fn empty_histogram_summarises_to_zeroes() {
        let h = LatencyHistogram::new();
        assert_eq!(h.summary(), LatencySummary::default());
        assert_eq!(h.mean_ns(), 0.0);
    }

    #[test]
    fn huge_values_are_clamped_not_lost() {
        let mut h = LatencyHistogram::new();
        h.record(u64::MAX);
        assert_eq!(h.count(), 1);
    }
}
