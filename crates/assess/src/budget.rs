//! The time budget: how the assessment's `--duration` is split between its
//! parts (about 30 % for the raw calibration, the rest shared by the
//! database points, re-planned before each point from the time left).

use std::time::{Duration, Instant};

/// The assessment's clock against its budget.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    pub start: Instant,
    pub budget: Duration,
}

impl Clock {
    /// Starts the clock now.
    pub fn start(budget: Duration) -> Clock {
        Clock {
            start: Instant::now(),
            budget,
        }
    }

    /// Time spent so far.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Time left in the budget.
    pub fn left(&self) -> Duration {
        self.budget.saturating_sub(self.start.elapsed())
    }
}

/// `v` seconds rounded to `decimals` places, as durations are shown.
pub fn rounded(v: f64, decimals: usize) -> Duration {
    let shown: f64 = format!("{v:.decimals$}").parse().unwrap_or(v);
    Duration::from_secs_f64(shown)
}

/// The measured time of each calibration step, seconds: the ~16 steps of a
/// calibration take about 30 % of the budget.
pub fn calibrate_step_s(budget: Duration) -> f64 {
    (budget.as_secs_f64() * 0.30 / 16.0 - 0.25).clamp(0.5, 5.0)
}

/// Unmeasured time at the start of each calibration step.
pub const CALIBRATE_RAMP: Duration = Duration::from_millis(250);

/// The database points in the order they run: read-only, then with 20 %
/// updates, each at every session count.
pub fn db_plan(sessions: &[u32]) -> Vec<(u32, u32)> {
    [0u32, 20]
        .iter()
        .flat_map(|&u| sessions.iter().map(move |&n| (n, u)))
        .collect()
}

/// Warm-up and measured time of one database point.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PointTime {
    pub warmup: Duration,
    pub runtime: Duration,
    /// The measured time as planned, seconds (before rounding).
    pub run_s: f64,
}

/// The time of the next database point with `remaining` points (it
/// included) still to run and `left` of the budget; `reserve` is kept for
/// what follows the points (teardown, summary). None: too little time.
pub fn point_time(left: Duration, reserve: Duration, remaining: usize) -> Option<PointTime> {
    let per = left.saturating_sub(reserve).as_secs_f64() / remaining as f64;
    if per < 2.0 {
        return None;
    }
    let warm = (per * 0.25).clamp(0.5, 10.0);
    let run_s = (per - warm - 0.6).max(1.0);
    Some(PointTime {
        warmup: rounded(warm.max(0.5), 1),
        runtime: rounded(run_s.max(0.5), 1),
        run_s,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_is_shared_between_the_parts() {
        let s = calibrate_step_s(Duration::from_secs(120));
        assert!((s - 2.0).abs() < 1e-9, "{s}");
        assert_eq!(calibrate_step_s(Duration::from_secs(20)), 0.5);
        assert_eq!(db_plan(&[1, 4]), vec![(1, 0), (4, 0), (1, 20), (4, 20)]);
        let t = point_time(Duration::from_secs(41), Duration::from_secs(1), 4).unwrap();
        assert_eq!(t.warmup, Duration::from_millis(2500));
        assert_eq!(t.runtime, Duration::from_millis(6900));
        assert!(point_time(Duration::from_secs(8), Duration::from_secs(1), 4).is_none());
        assert_eq!(rounded(0.534, 2), Duration::from_secs_f64(0.53));
    }
}
