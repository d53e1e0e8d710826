//! Access distributions over the blocks of a region: uniform, zipf, pareto and
//! hot spots (fio's `random_distribution`, SLOB's hot spot).

use crate::rng::Rng;
use iolens_core::ByteSize;
use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// How random offsets are spread over the region.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Distribution {
    /// Every block equally likely.
    Uniform,
    /// Zipf with exponent `theta` (> 0, ≠ 1 not required): rank r has weight r^-theta.
    Zipf { theta: f64 },
    /// Pareto "h" as in fio: a share `h` of the accesses goes to a share `1 - h` of the blocks.
    Pareto { h: f64 },
    /// `pct` % of accesses fall uniformly in `[offset, offset + size)`, the rest
    /// uniformly outside it.
    Hotspot { pct: f64, offset: u64, size: u64 },
}

impl fmt::Display for Distribution {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Distribution::Uniform => write!(f, "uniform"),
            Distribution::Zipf { theta } => write!(f, "zipf:{theta}"),
            Distribution::Pareto { h } => write!(f, "pareto:{h}"),
            Distribution::Hotspot { pct, offset, size } => {
                write!(f, "hotspot:{pct}@{}+{}", ByteSize(*offset), ByteSize(*size))
            }
        }
    }
}

impl FromStr for Distribution {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let usage = "expected uniform, zipf:THETA, pareto:H or hotspot:PCT@OFFSET+SIZE (e.g. zipf:1.2, pareto:0.8, hotspot:90@0+1g)";
        let bad = |why: &str| format!("invalid distribution '{s}': {why}; {usage}");
        let (kind, arg) = s.split_once(':').unwrap_or((s, ""));
        match kind {
            "uniform" | "random" if arg.is_empty() => Ok(Distribution::Uniform),
            "zipf" => {
                let theta: f64 = arg.parse().map_err(|_| bad("THETA is not a number"))?;
                if !(theta > 0.0 && theta.is_finite()) {
                    return Err(bad("THETA must be > 0"));
                }
                Ok(Distribution::Zipf { theta })
            }
            "pareto" => {
                let h: f64 = arg.parse().map_err(|_| bad("H is not a number"))?;
                if !(h > 0.0 && h < 1.0) || (h - 0.5).abs() < 1e-9 {
                    return Err(bad("H must be in (0, 1) and not 0.5"));
                }
                Ok(Distribution::Pareto { h })
            }
            "hotspot" => {
                let (pct, band) = arg.split_once('@').ok_or_else(|| bad("missing @"))?;
                let (off, size) = band.split_once('+').ok_or_else(|| bad("missing +SIZE"))?;
                let pct: f64 = pct
                    .trim_end_matches('%')
                    .parse()
                    .map_err(|_| bad("PCT is not a number"))?;
                if !(0.0..=100.0).contains(&pct) {
                    return Err(bad("PCT must be 0..100"));
                }
                let offset = off.parse::<ByteSize>().map_err(|e| bad(&e.to_string()))?.0;
                let size = size.parse::<ByteSize>().map_err(|e| bad(&e.to_string()))?.0;
                if size == 0 {
                    return Err(bad("SIZE must be > 0"));
                }
                Ok(Distribution::Hotspot { pct, offset, size })
            }
            _ => Err(bad("unknown kind")),
        }
    }
}

/// Draws block indexes in `0..n` following a [`Distribution`].
#[derive(Clone, Debug)]
pub enum Sampler {
    Uniform {
        n: u64,
    },
    /// Rank from the Zipf law, scattered over the region by a bijection.
    Zipf {
        zipf: ZipfRejectionInversion,
        scatter: Scatter,
    },
    Pareto {
        n: u64,
        pow: f64,
        scatter: Scatter,
    },
    Hotspot {
        n: u64,
        hot_start: u64,
        hot_len: u64,
        p_hot: f64,
    },
}

impl Sampler {
    /// A sampler over `n` blocks of `unit` bytes each.
    pub fn new(d: &Distribution, n: u64, unit: u64, seed: u64) -> Sampler {
        let n = n.max(1);
        match *d {
            Distribution::Uniform => Sampler::Uniform { n },
            Distribution::Zipf { theta } => Sampler::Zipf {
                zipf: ZipfRejectionInversion::new(n, theta),
                scatter: Scatter::new(n, seed),
            },
            Distribution::Pareto { h } => Sampler::Pareto {
                n,
                pow: h.ln() / (1.0 - h).ln(),
                scatter: Scatter::new(n, seed),
            },
            Distribution::Hotspot { pct, offset, size } => {
                let hot_start = (offset / unit).min(n - 1);
                let hot_len = (size / unit).clamp(1, n - hot_start);
                Sampler::Hotspot {
                    n,
                    hot_start,
                    hot_len,
                    p_hot: pct / 100.0,
                }
            }
        }
    }

    /// The next block index.
    #[inline]
    pub fn sample(&self, rng: &mut Rng) -> u64 {
        match self {
            Sampler::Uniform { n } => rng.below(*n),
            Sampler::Zipf { zipf, scatter } => scatter.map(zipf.sample(rng) - 1),
            Sampler::Pareto { n, pow, scatter } => {
                // u^pow is near 1 for most u: those are the hot ranks, counted from the top.
                let v = rng.unit().powf(*pow);
                let rank = ((*n as f64) * v) as u64;
                scatter.map(n - 1 - rank.min(n - 1))
            }
            Sampler::Hotspot {
                n,
                hot_start,
                hot_len,
                p_hot,
            } => {
                let cold = n - hot_len;
                if cold == 0 || rng.unit() < *p_hot {
                    hot_start + rng.below(*hot_len)
                } else {
                    let c = rng.below(cold);
                    if c < *hot_start {
                        c
                    } else {
                        c + hot_len
                    }
                }
            }
        }
    }
}

/// A cheap bijection on `0..n` (an affine map modulo n with a multiplier
/// coprime to n), so that hot ranks land all over the region instead of in
/// its first blocks.
#[derive(Clone, Debug)]
pub struct Scatter {
    n: u64,
    mul: u64,
    add: u64,
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

impl Scatter {
    fn new(n: u64, seed: u64) -> Scatter {
        let mut r = Rng::new(seed, 0x5CA7);
        let mut mul = (n / 2 + r.below(n.max(2) / 2 + 1)) | 1;
        while n > 1 && gcd(mul % n, n) != 1 {
            mul += 2;
        }
        Scatter {
            n,
            mul: mul % n.max(1),
            add: r.below(n),
        }
    }

    #[inline]
    fn map(&self, x: u64) -> u64 {
        if self.n <= 1 {
            return 0;
        }
        ((x as u128 * self.mul as u128 + self.add as u128) % self.n as u128) as u64
    }
}

/// Zipf sampling in O(1) per draw for any exponent > 0 by rejection-inversion
/// (W. Hörmann, G. Derflinger, "Rejection-inversion to generate variates from
/// monotone discrete distributions", 1996). Returns ranks in `1..=n`.
#[derive(Clone, Debug)]
pub struct ZipfRejectionInversion {
    n: f64,
    q: f64,
    h_x1: f64,
    h_n: f64,
    s: f64,
}

impl ZipfRejectionInversion {
    fn new(n: u64, q: f64) -> Self {
        let mut z = ZipfRejectionInversion {
            n: n as f64,
            q,
            h_x1: 0.0,
            h_n: 0.0,
            s: 0.0,
        };
        z.h_x1 = z.h_integral(1.5) - 1.0;
        z.h_n = z.h_integral(n as f64 + 0.5);
        z.s = 2.0 - z.h_integral_inv(z.h_integral(2.5) - z.h(2.0));
        z
    }

    fn h(&self, x: f64) -> f64 {
        (-self.q * x.ln()).exp()
    }

    /// ∫ x^-q dx, written to stay accurate near q = 1.
    fn h_integral(&self, x: f64) -> f64 {
        let lx = x.ln();
        helper2((1.0 - self.q) * lx) * lx
    }

    fn h_integral_inv(&self, x: f64) -> f64 {
        let t = (x * (1.0 - self.q)).max(-1.0);
        (helper1(t) * x).exp()
    }

    fn sample(&self, rng: &mut Rng) -> u64 {
        loop {
            let u = self.h_n + rng.unit() * (self.h_x1 - self.h_n);
            let x = self.h_integral_inv(u);
            let k = (x + 0.5).floor().clamp(1.0, self.n);
            if k - x <= self.s || u >= self.h_integral(k + 0.5) - self.h(k) {
                return k as u64;
            }
        }
    }
}

/// ln(1 + x) / x, continuous at 0.
fn helper1(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.ln_1p() / x
    } else {
        1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x))
    }
}

/// (e^x − 1) / x, continuous at 0.
fn helper2(x: f64) -> f64 {
    if x.abs() > 1e-8 {
        x.exp_m1() / x
    } else {
        1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draw(d: &str, n: u64, count: usize) -> Vec<u64> {
        let s = Sampler::new(&d.parse().unwrap(), n, 1, 9);
        let mut r = Rng::new(1, 0);
        (0..count).map(|_| s.sample(&mut r)).collect()
    }

    /// Share of draws that fall on the most-drawn `frac` of blocks.
    fn top_share(v: &[u64], n: u64, frac: f64) -> f64 {
        let mut c = vec![0u64; n as usize];
        for &x in v {
            c[x as usize] += 1;
        }
        c.sort_unstable_by(|a, b| b.cmp(a));
        let k = (n as f64 * frac) as usize;
        c[..k].iter().sum::<u64>() as f64 / v.len() as f64
    }

    #[test]
    fn everything_stays_in_range() {
        for d in [
            "uniform",
            "zipf:1.2",
            "zipf:0.8",
            "pareto:0.9",
            "hotspot:90@100+50",
        ] {
            assert!(draw(d, 1000, 50_000).iter().all(|&x| x < 1000), "{d}");
        }
    }

    #[test]
    fn pareto_puts_h_of_accesses_on_1_minus_h_of_blocks() {
        let v = draw("pareto:0.8", 10_000, 400_000);
        let share = top_share(&v, 10_000, 0.2);
        assert!((share - 0.8).abs() < 0.03, "top 20% got {share}");
    }

    #[test]
    fn zipf_is_skewed_and_rank_one_is_hottest() {
        let n = 1000;
        let v = draw("zipf:1.2", n, 200_000);
        // Rank 1 has probability 1/H(n,1.2) ≈ 0.19 for n=1000.
        let h: f64 = (1..=n).map(|k| (k as f64).powf(-1.2)).sum();
        let share = top_share(&v, n, 0.001);
        assert!(
            (share - 1.0 / h).abs() < 0.01,
            "rank-1 share {share}, want {}",
            1.0 / h
        );
        let uniform = top_share(&draw("uniform", n, 200_000), n, 0.1);
        assert!(top_share(&v, n, 0.1) > uniform + 0.3);
    }

    #[test]
    fn hotspot_sends_pct_into_the_band() {
        let v = draw("hotspot:90@100+50", 1000, 100_000);
        let hot = v.iter().filter(|&&x| (100..150).contains(&x)).count() as f64 / v.len() as f64;
        assert!((hot - 0.9).abs() < 0.01, "{hot}");
    }

    #[test]
    fn uniform_is_flat() {
        let v = draw("uniform", 100, 100_000);
        let share = top_share(&v, 100, 0.2);
        assert!(share < 0.22, "{share}");
    }

    #[test]
    fn scatter_is_a_bijection() {
        for n in [1u64, 2, 10, 97, 1000, 4096] {
            let s = Scatter::new(n, 3);
            let mut seen: Vec<u64> = (0..n).map(|x| s.map(x)).collect();
            seen.sort_unstable();
            seen.dedup();
            assert_eq!(seen.len() as u64, n);
        }
    }

    #[test]
    fn bad_distributions_explain_the_syntax() {
        for s in [
            "zipf",
            "zipf:-1",
            "pareto:1.5",
            "hotspot:90",
            "hotspot:150@0+1g",
            "gauss",
        ] {
            let e = s.parse::<Distribution>().unwrap_err();
            assert!(e.contains("expected uniform"), "{e}");
        }
        assert_eq!(
            "hotspot:90@0+1g".parse::<Distribution>().unwrap(),
            Distribution::Hotspot {
                pct: 90.0,
                offset: 0,
                size: 1 << 30
            }
        );
    }
}
