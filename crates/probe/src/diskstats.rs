//! `/proc/diskstats` snapshots and their deltas, computed the way `iostat -x` does.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Instant;

/// Counters of one device (field names follow the kernel's iostats documentation).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DiskCounters {
    pub rd_ios: u64,
    pub rd_merges: u64,
    pub rd_sectors: u64,
    pub rd_ticks: u64,
    pub wr_ios: u64,
    pub wr_merges: u64,
    pub wr_sectors: u64,
    pub wr_ticks: u64,
    pub in_flight: u64,
    pub io_ticks: u64,
    pub time_in_queue: u64,
    pub flush_ios: u64,
    pub flush_ticks: u64,
}

/// A snapshot of every device's counters, with the time it was taken.
#[derive(Clone, Debug)]
pub struct DiskStats {
    pub at: Instant,
    pub devices: BTreeMap<String, DiskCounters>,
}

/// What one device did between two snapshots (`summary.device` in the result schema).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DiskDelta {
    pub device: String,
    pub interval_s: f64,
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub read_merges: u64,
    pub write_merges: u64,
    pub flush_ios: u64,
    /// Mean time a read spent in the device queue and service (iostat r_await), ms.
    pub read_await_ms: f64,
    /// iostat w_await, ms.
    pub write_await_ms: f64,
    /// iostat aqu-sz: average number of requests in the queue.
    pub avg_queue: f64,
    /// iostat %util: share of the interval with at least one request in flight.
    pub util_pct: f64,
}

/// The ms counters are 32-bit in the kernel and wrap; other counters are 64-bit
/// on 64-bit kernels. A decrease is taken as one wrap of 2^32.
fn diff(after: u64, before: u64) -> u64 {
    if after >= before {
        after - before
    } else {
        after + (1u64 << 32) - before
    }
}

impl DiskStats {
    /// Parses a diskstats text (11, 15 or 17 fields after the name).
    pub fn parse(text: &str, at: Instant) -> DiskStats {
        let mut devices = BTreeMap::new();
        for line in text.lines() {
            let f: Vec<&str> = line.split_whitespace().collect();
            if f.len() < 14 {
                continue;
            }
            let n: Vec<u64> = f[3..].iter().map(|v| v.parse().unwrap_or(0)).collect();
            let get = |i: usize| n.get(i).copied().unwrap_or(0);
            devices.insert(
                f[2].to_string(),
                DiskCounters {
                    rd_ios: get(0),
                    rd_merges: get(1),
                    rd_sectors: get(2),
                    rd_ticks: get(3),
                    wr_ios: get(4),
                    wr_merges: get(5),
                    wr_sectors: get(6),
                    wr_ticks: get(7),
                    in_flight: get(8),
                    io_ticks: get(9),
                    time_in_queue: get(10),
                    flush_ios: get(15),
                    flush_ticks: get(16),
                },
            );
        }
        DiskStats { at, devices }
    }

    /// Reads `/proc/diskstats` now.
    pub fn read() -> std::io::Result<DiskStats> {
        let text = std::fs::read_to_string("/proc/diskstats")?;
        Ok(DiskStats::parse(&text, Instant::now()))
    }

    /// The delta of `device` from `before` to `self`, if the device is in both.
    pub fn delta(&self, before: &DiskStats, device: &str) -> Option<DiskDelta> {
        let a = self.devices.get(device)?;
        let b = before.devices.get(device)?;
        let secs = self.at.duration_since(before.at).as_secs_f64();
        let rd = diff(a.rd_ios, b.rd_ios);
        let wr = diff(a.wr_ios, b.wr_ios);
        let ratio = |t: u64, n: u64| if n == 0 { 0.0 } else { t as f64 / n as f64 };
        let ms = secs * 1e3;
        Some(DiskDelta {
            device: device.to_string(),
            interval_s: secs,
            read_ios: rd,
            write_ios: wr,
            read_bytes: diff(a.rd_sectors, b.rd_sectors) * 512,
            write_bytes: diff(a.wr_sectors, b.wr_sectors) * 512,
            read_merges: diff(a.rd_merges, b.rd_merges),
            write_merges: diff(a.wr_merges, b.wr_merges),
            flush_ios: diff(a.flush_ios, b.flush_ios),
            read_await_ms: ratio(diff(a.rd_ticks & 0xffff_ffff, b.rd_ticks & 0xffff_ffff), rd),
            write_await_ms: ratio(diff(a.wr_ticks & 0xffff_ffff, b.wr_ticks & 0xffff_ffff), wr),
            avg_queue: if ms > 0.0 {
                diff(a.time_in_queue & 0xffff_ffff, b.time_in_queue & 0xffff_ffff) as f64 / ms
            } else {
                0.0
            },
            util_pct: if ms > 0.0 {
                (diff(a.io_ticks & 0xffff_ffff, b.io_ticks & 0xffff_ffff) as f64 / ms * 100.0)
                    .min(100.0)
            } else {
                0.0
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    const BEFORE: &str = "\
 253       0 vda 1000 10 16000 500 200 5 3200 400 0 800 900 0 0 0 0 7 3
 253       1 vda1 999 10 15990 499 200 5 3200 400 0 800 900 0 0 0 0 7 3
   7       0 loop0 5 0 10 1 0 0 0 0 0 1 1
";
    const AFTER: &str = "\
 253       0 vda 3000 10 48000 2500 300 5 4800 1400 2 1800 4900 0 0 0 0 9 3
";

    #[test]
    fn delta_follows_iostat_arithmetic() {
        let t0 = Instant::now();
        let b = DiskStats::parse(BEFORE, t0);
        let a = DiskStats::parse(AFTER, t0 + Duration::from_secs(2));
        assert_eq!(b.devices.len(), 3, "11-field lines are accepted");
        let d = a.delta(&b, "vda").unwrap();
        assert_eq!(d.read_ios, 2000);
        assert_eq!(d.read_bytes, 32000 * 512);
        assert_eq!(d.write_ios, 100);
        assert_eq!(d.read_await_ms, 1.0);
        assert_eq!(d.write_await_ms, 10.0);
        assert_eq!(d.flush_ios, 2);
        assert!((d.util_pct - 50.0).abs() < 1e-9);
        assert!((d.avg_queue - 2.0).abs() < 1e-9);
        assert!(a.delta(&b, "vda1").is_none());
    }

    #[test]
    fn wrapped_tick_counters_are_unwrapped() {
        assert_eq!(diff(5, u32::MAX as u64 - 4), 10);
    }

    #[test]
    fn the_live_file_parses() {
        let s = DiskStats::read().unwrap();
        assert!(!s.devices.is_empty());
    }
}
