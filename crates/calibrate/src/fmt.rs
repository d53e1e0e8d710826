//! Numbers for people, with enough digits: a latency of 0.4 ms is never
//! printed as 0.

/// `v` with at least `sig` significant digits and at least `min_dec`
/// decimals, never in exponent form: `fixed(0.0004, 3, 2)` is `0.000400`,
/// `fixed(18.214, 3, 2)` is `18.21`, `fixed(3766.2, 3, 0)` is `3766`.
pub fn fixed(v: f64, sig: u32, min_dec: usize) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    if v == 0.0 {
        return format!("{:.*}", min_dec, 0.0);
    }
    let mag = v.abs().log10().floor() as i32; // 0 for 1..10, -1 for 0.1..1
    let dec = (sig as i32 - 1 - mag).max(min_dec as i32).min(9) as usize;
    format!("{v:.dec$}")
}

/// Milliseconds: two decimals, more below 1 ms so that three digits show.
pub fn ms(v: f64) -> String {
    fixed(v, 3, 2)
}

/// A rate (IOPS or MB/s): whole numbers from 100 up, three digits below.
pub fn rate(v: f64) -> String {
    fixed(v, 3, 0)
}

/// A duration for a progress line: `45s`, `12m04s`, `2h41m`.
pub fn eta(secs: f64) -> String {
    let s = secs.max(0.0).round() as u64;
    if s < 60 {
        format!("{s}s")
    } else if s < 3600 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_latencies_keep_their_digits() {
        assert_eq!(ms(0.4), "0.400");
        assert_eq!(ms(0.0363), "0.0363");
        assert_eq!(ms(18.214), "18.21");
        assert_eq!(ms(123.456), "123.46");
        assert_eq!(ms(0.0), "0.00");
    }

    #[test]
    fn rates_are_whole_from_one_hundred() {
        assert_eq!(rate(3766.4), "3766");
        assert_eq!(rate(358.2), "358");
        assert_eq!(rate(80.04), "80.0");
        assert_eq!(rate(5.123), "5.12");
    }

    #[test]
    fn etas_read_naturally() {
        assert_eq!(eta(45.2), "45s");
        assert_eq!(eta(724.0), "12m04s");
        assert_eq!(eta(9660.0), "2h41m");
    }
}
