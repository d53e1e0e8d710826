//! Number formatting for people: thousands separators, latencies with a
//! unit that fits, and enough significant digits (never "0 ms" for 0.4 ms).

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
    let mag = v.abs().log10().floor() as i32;
    let decimals = (n - 1 - mag).clamp(0, 9) as usize;
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// A figure for a CSV cell: plain digits, no grouping, at most 3 decimals.
pub fn csv_number(v: f64) -> String {
    if !v.is_finite() {
        return String::new();
    }
    if v.fract() == 0.0 && v.abs() < 1e15 {
        return format!("{}", v as i64);
    }
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
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
    fn counts_are_grouped() {
        assert_eq!(count(22581.4), "22,581");
        assert_eq!(count(1234567.0), "1,234,567");
        assert_eq!(count(999.0), "999");
        assert_eq!(count(12.34), "12.3");
        assert_eq!(count(0.5), "0.50");
        assert_eq!(grouped(-1000), "-1,000");
    }

    #[test]
    fn small_latencies_keep_their_digits() {
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
