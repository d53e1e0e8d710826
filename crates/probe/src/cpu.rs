//! CPU time of this process (getrusage) and of the whole machine (/proc/stat).

use serde::{Deserialize, Serialize};

/// User and system CPU seconds consumed so far by this process (all threads).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ProcessCpu {
    pub user_s: f64,
    pub sys_s: f64,
}

impl ProcessCpu {
    /// `self - before`.
    pub fn since(&self, before: &ProcessCpu) -> ProcessCpu {
        ProcessCpu {
            user_s: (self.user_s - before.user_s).max(0.0),
            sys_s: (self.sys_s - before.sys_s).max(0.0),
        }
    }

    /// user + sys.
    pub fn total_s(&self) -> f64 {
        self.user_s + self.sys_s
    }
}

/// CPU used by this process so far.
pub fn process_cpu() -> ProcessCpu {
    // SAFETY: getrusage only writes into the zeroed struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    ProcessCpu {
        user_s: tv(ru.ru_utime),
        sys_s: tv(ru.ru_stime),
    }
}

/// The machine-wide `cpu` line of /proc/stat, in USER_HZ ticks.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MachineCpu {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
}

impl MachineCpu {
    /// Parses the first `cpu ` line of a /proc/stat text.
    pub fn parse(text: &str) -> Option<MachineCpu> {
        let line = text.lines().find(|l| l.starts_with("cpu "))?;
        let v: Vec<u64> = line
            .split_whitespace()
            .skip(1)
            .map(|x| x.parse().unwrap_or(0))
            .collect();
        let g = |i: usize| v.get(i).copied().unwrap_or(0);
        Some(MachineCpu {
            user: g(0),
            nice: g(1),
            system: g(2),
            idle: g(3),
            iowait: g(4),
            irq: g(5),
            softirq: g(6),
            steal: g(7),
        })
    }

    fn total(&self) -> u64 {
        self.user
            + self.nice
            + self.system
            + self.idle
            + self.iowait
            + self.irq
            + self.softirq
            + self.steal
    }

    /// Busy percentage (everything but idle and iowait) from `before` to `self`.
    pub fn busy_pct_since(&self, before: &MachineCpu) -> f64 {
        let t = self.total().saturating_sub(before.total());
        if t == 0 {
            return 0.0;
        }
        let idle = (self.idle + self.iowait).saturating_sub(before.idle + before.iowait);
        100.0 * (t - idle.min(t)) as f64 / t as f64
    }
}

/// Machine CPU counters now.
pub fn machine_cpu() -> MachineCpu {
    std::fs::read_to_string("/proc/stat")
        .ok()
        .and_then(|t| MachineCpu::parse(&t))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn process_cpu_grows_with_work() {
        let a = process_cpu();
        let mut x = 0u64;
        let t = std::time::Instant::now();
        while t.elapsed().as_millis() < 50 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let b = process_cpu();
        assert!(b.since(&a).total_s() > 0.02, "{:?}", b.since(&a));
    }

    #[test]
    fn busy_share_is_computed_from_ticks() {
        let a = MachineCpu::parse("cpu  100 0 100 800 0 0 0 0 0 0\ncpu0 1").unwrap();
        let b = MachineCpu::parse("cpu  150 0 150 900 0 0 0 0 0 0").unwrap();
        assert!((b.busy_pct_since(&a) - 50.0).abs() < 1e-9);
    }
}
