//! Human units on the command line: byte sizes (`8k`, `1m`, `4KiB`, `1G`) and
//! durations (`30s`, `5m`, `100ms`).
//!
//! Size suffixes are binary (k = 1024), as in fio, ORION and SLOB.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// Why a size or duration could not be parsed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum UnitError {
    /// A size that is not `digits[.digits][k|m|g|t][i][b]`.
    #[error("invalid size '{0}': expected a number followed by an optional K, M, G or T suffix (e.g. 8k, 1m, 4G)")]
    Size(String),
    /// A duration that is not `digits[us|ms|s|m|h]`.
    #[error("invalid duration '{0}': expected a number followed by an optional us, ms, s, m or h suffix (e.g. 30s, 5m)")]
    Duration(String),
}

/// A number of bytes, parsed from `8k`, `1m`, `1.5G`, `4096`, `4KiB`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct ByteSize(pub u64);

impl ByteSize {
    /// The size in bytes.
    pub fn bytes(self) -> u64 {
        self.0
    }
}

/// `"1.5g"` → `("1.5", "g")`: the leading digits and dots, and the rest.
fn split_number(t: &str) -> (&str, &str) {
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    t.split_at(split)
}

impl FromStr for ByteSize {
    type Err = UnitError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let err = || UnitError::Size(s.to_string());
        let t = s.trim();
        let (num, suffix) = split_number(t);
        if num.is_empty() || num.starts_with('.') || num.matches('.').count() > 1 {
            return Err(err());
        }
        let suffix = suffix.trim().to_ascii_lowercase();
        let mult: u64 = match suffix.as_str() {
            "" | "b" => 1,
            "k" | "kb" | "kib" => 1 << 10,
            "m" | "mb" | "mib" => 1 << 20,
            "g" | "gb" | "gib" => 1 << 30,
            "t" | "tb" | "tib" => 1 << 40,
            _ => return Err(err()),
        };
        if let Some((int, frac)) = num.split_once('.') {
            let int: u64 = int.parse().map_err(|_| err())?;
            let f: f64 = format!("0.{frac}").parse().map_err(|_| err())?;
            let whole = int.checked_mul(mult).ok_or_else(err)?;
            Ok(ByteSize(whole + (f * mult as f64).round() as u64))
        } else {
            let n: u64 = num.parse().map_err(|_| err())?;
            n.checked_mul(mult).map(ByteSize).ok_or_else(err)
        }
    }
}

impl fmt::Display for ByteSize {
    /// The shortest exact form: `8k`, `1m`, `1536k`, `4097`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let n = self.0;
        for (shift, suffix) in [(40, "t"), (30, "g"), (20, "m"), (10, "k")] {
            if n != 0 && n.is_multiple_of(1u64 << shift) {
                return write!(f, "{}{}", n >> shift, suffix);
            }
        }
        write!(f, "{n}")
    }
}

impl Serialize for ByteSize {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(self.0)
    }
}

impl<'de> Deserialize<'de> for ByteSize {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(ByteSize(u64::deserialize(d)?))
    }
}

/// Formats a byte count for people: `1.5 GiB`, `8 KiB`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut i = 0;
    while v >= 1024.0 && i < UNITS.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 || v.fract() == 0.0 {
        format!("{} {}", v as u64, UNITS[i])
    } else {
        format!("{v:.1} {}", UNITS[i])
    }
}

/// Parses `30s`, `5m`, `100ms`, `250us`, `1h`, `1.5s`; a bare number is seconds.
pub fn parse_duration(s: &str) -> Result<Duration, UnitError> {
    let err = || UnitError::Duration(s.to_string());
    let t = s.trim();
    let (num, suffix) = split_number(t);
    let v: f64 = num.parse().map_err(|_| err())?;
    if !v.is_finite() || v < 0.0 {
        return Err(err());
    }
    let secs = match suffix.trim() {
        "" | "s" | "sec" => v,
        "ms" => v / 1e3,
        "us" | "µs" => v / 1e6,
        "ns" => v / 1e9,
        "m" | "min" => v * 60.0,
        "h" => v * 3600.0,
        _ => return Err(err()),
    };
    Ok(Duration::from_secs_f64(secs))
}

/// A duration option value that keeps its typed value and prints as seconds in JSON.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct DurationArg(pub Duration);

impl FromStr for DurationArg {
    type Err = UnitError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse_duration(s).map(DurationArg)
    }
}

impl fmt::Display for DurationArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = self.0;
        if d.subsec_nanos() == 0 {
            write!(f, "{}s", d.as_secs())
        } else {
            write!(f, "{}ms", d.as_secs_f64() * 1e3)
        }
    }
}

impl Serialize for DurationArg {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(self.0.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_with_binary_suffixes() {
        assert_eq!("8k".parse::<ByteSize>().unwrap().0, 8192);
        assert_eq!("8K".parse::<ByteSize>().unwrap().0, 8192);
        assert_eq!("1m".parse::<ByteSize>().unwrap().0, 1 << 20);
        assert_eq!("4KiB".parse::<ByteSize>().unwrap().0, 4096);
        assert_eq!("1.5G".parse::<ByteSize>().unwrap().0, 3 << 29);
        assert_eq!("4096".parse::<ByteSize>().unwrap().0, 4096);
        assert_eq!("2t".parse::<ByteSize>().unwrap().0, 2 << 40);
    }

    #[test]
    fn bad_sizes_are_rejected() {
        for s in ["", "k", "8x", "-1", "1..2k", ".5k", "99999999999999999999t"] {
            assert!(s.parse::<ByteSize>().is_err(), "{s} accepted");
        }
    }

    #[test]
    fn sizes_display_in_shortest_exact_form() {
        assert_eq!(ByteSize(8192).to_string(), "8k");
        assert_eq!(ByteSize(1536 * 1024).to_string(), "1536k");
        assert_eq!(ByteSize(4097).to_string(), "4097");
        assert_eq!(ByteSize(1 << 30).to_string(), "1g");
        assert_eq!(human_bytes(1536 << 20), "1.5 GiB");
    }

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("30s").unwrap(), Duration::from_secs(30));
        assert_eq!(parse_duration("5m").unwrap(), Duration::from_secs(300));
        assert_eq!(parse_duration("100ms").unwrap(), Duration::from_millis(100));
        assert_eq!(parse_duration("250us").unwrap(), Duration::from_micros(250));
        assert_eq!(parse_duration("2").unwrap(), Duration::from_secs(2));
        assert_eq!(parse_duration("1.5s").unwrap(), Duration::from_millis(1500));
        assert!(parse_duration("soon").is_err());
        assert!(parse_duration("5 parsecs").is_err());
        assert!(parse_duration("-1s").is_err());
    }
}
