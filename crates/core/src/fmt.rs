//! Numbers for people, with enough digits (never "0 ms" for 0.4 ms):
//! fixed-decimal figures for the calibration tables, grouped counts and
//! latencies with a unit that fits for the reports, plain CSV cells, ratios
//! and progress durations.

/// Decimals that give `v` (finite, not zero) `sig` significant digits.
fn decimals_for(v: f64, sig: i32) -> i32 {
    let mag = v.abs().log10().floor() as i32; // 0 for 1..10, -1 for 0.1..1
    sig - 1 - mag
}

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
    let dec = decimals_for(v, sig as i32).max(min_dec as i32).min(9) as usize;
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

/// `22581.4` → `22,581`; values under 100 keep one decimal, under 10 two.
pub fn count(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    let a = v.abs();
    if a > 0.0 && a < 10.0 {
        return format!("{v:.2}");
    }
    if a > 0.0 && a < 100.0 {
        return format!("{v:.1}");
    }
    grouped(v.round() as i64)
}

/// An integer with `,` between groups of three digits.
pub fn grouped(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let groups: Vec<&str> = digits
        .as_bytes()
        .rchunks(3)
        .rev()
        .map(|c| std::str::from_utf8(c).unwrap_or(""))
        .collect();
    let sign = if n < 0 { "-" } else { "" };
    format!("{sign}{}", groups.join(","))
}

/// A latency in microseconds with a unit that fits: `850 µs`, `1.24 ms`, `2.1 s`.
pub fn latency_us(us: f64) -> String {
    if !us.is_finite() {
        return "-".into();
    }
    if us >= 1e6 {
        format!("{} s", sig(us / 1e6))
    } else if us >= 1e3 {
        format!("{} ms", sig(us / 1e3))
    } else {
        format!("{} µs", sig(us))
    }
}

/// Three significant digits, without trailing zeros: `0.412`, `12.5`, `850`.
pub fn sig(v: f64) -> String {
    sig_n(v, 3)
}

/// `n` significant digits (at least), without trailing zeros; large values keep all their digits.
pub fn sig_n(v: f64, n: i32) -> String {
    if v == 0.0 || !v.is_finite() {
        return if v == 0.0 { "0".into() } else { "-".into() };
    }
    let decimals = decimals_for(v, n).clamp(0, 9) as usize;
    trim_decimals(format!("{v:.decimals$}"))
}

/// A figure for a CSV cell: plain digits, no grouping, at most 3 decimals.
pub fn csv_number(v: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    if v.fract() == 0.0 && v.abs() < 1e15 {
        return format!("{}", v as i64);
    }
    trim_decimals(format!("{v:.3}"))
}

/// `12.500` → `12.5`, `3.000` → `3`; a number without a decimal point stays.
fn trim_decimals(s: String) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A ratio as `1.52x`.
pub fn ratio(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    format!("{}x", sig(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_latencies_keep_their_digits_in_ms() {
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

    #[test]
    fn counts_are_grouped() {
        assert_eq!(count(22581.4), "22,581");
        assert_eq!(count(1234567.0), "1,234,567");
        assert_eq!(count(999.0), "999");
        assert_eq!(count(12.34), "12.3");
        assert_eq!(count(0.5), "0.50");
        assert_eq!(grouped(-1000), "-1,000");
    }

    #[test]
    fn small_latencies_keep_their_digits_with_a_unit() {
        assert_eq!(latency_us(412.0), "412 µs");
        assert_eq!(latency_us(1240.0), "1.24 ms");
        assert_eq!(latency_us(18210.0), "18.2 ms");
        assert_eq!(latency_us(0.85), "0.85 µs");
        assert_eq!(latency_us(2_100_000.0), "2.1 s");
    }

    #[test]
    fn csv_numbers_are_plain() {
        assert_eq!(csv_number(22581.0), "22581");
        assert_eq!(csv_number(0.1234), "0.123");
        assert_eq!(csv_number(f64::NAN), "");
        assert_eq!(ratio(1.5), "1.5x");
    }
}
