//! The spread of a figure over trials.

pub use iolens_core::result::calibrate::Spread;

/// The spread of `values` (all zeros when empty).
pub fn spread(values: &[f64]) -> Spread {
    let n = values.len();
    if n == 0 {
        return Spread::default();
    }
    let mean = values.iter().sum::<f64>() / n as f64;
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let stddev = if n > 1 {
        (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
    } else {
        0.0
    };
    let cv_pct = if mean != 0.0 {
        stddev / mean.abs() * 100.0
    } else {
        0.0
    };
    Spread {
        n,
        mean,
        min,
        max,
        stddev,
        cv_pct,
    }
}

/// Which way a series of trials moves: `Some(true)` when every value is
/// above the one before, `Some(false)` when every value is below, else `None`.
pub fn monotonic(values: &[f64]) -> Option<bool> {
    if values.len() < 2 {
        return None;
    }
    let up = values.windows(2).all(|w| w[1] > w[0]);
    let down = values.windows(2).all(|w| w[1] < w[0]);
    if up {
        Some(true)
    } else if down {
        Some(false)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spread_of_known_values() {
        let s = spread(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]);
        assert_eq!(s.n, 8);
        assert!((s.mean - 5.0).abs() < 1e-12);
        assert_eq!((s.min, s.max), (2.0, 9.0));
        // sample standard deviation: sqrt(32 / 7)
        assert!((s.stddev - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert!((s.cv_pct - s.stddev / 5.0 * 100.0).abs() < 1e-9);
    }

    #[test]
    fn one_value_has_no_spread() {
        let s = spread(&[3766.0]);
        assert_eq!(
            (s.mean, s.min, s.max, s.cv_pct),
            (3766.0, 3766.0, 3766.0, 0.0)
        );
        assert_eq!(spread(&[]).n, 0);
    }

    #[test]
    fn trends_are_detected() {
        assert_eq!(monotonic(&[1.0, 2.0, 3.0]), Some(true));
        assert_eq!(monotonic(&[3.0, 2.0, 1.0]), Some(false));
        assert_eq!(monotonic(&[1.0, 3.0, 2.0]), None);
        assert_eq!(monotonic(&[1.0]), None);
    }
}
