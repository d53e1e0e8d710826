//! The ladder search behind `calibrate`: outstanding I/Os 1, 2, 4, … until
//! the figure stops growing or the mean latency passes the limit, then a few
//! refinement steps between the last two steps.
//!
//! The search is pure: it asks a `measure` function for each step, so the
//! rules are tested here against synthetic devices and the real measurement
//! lives in [`crate::calibrate`].
//!
//! Rules:
//! - climb from `start` doubling each step (capped at `max_outstanding`);
//! - stop on **latency** when a step's mean latency exceeds the limit; if the
//!   very first step does, halve down until a step is within it (or 1);
//! - stop on **plateau** when a step gains less than `min_gain` over the best
//!   step before it (a drop counts as a plateau);
//! - stop on **limit** at `max_outstanding`;
//! - refine: up to `refine` geometric midpoints between the last two steps
//!   (the last within the limit and the first past it; or the two steps that
//!   show the plateau, keeping the half next to the better end).

pub use iolens_core::result::calibrate::{Phase, Stop};

/// Figures this close to the highest (relative) count as equal when the best
/// step is chosen.
pub const TIE: f64 = 0.01;

/// The rules' parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct LadderConfig {
    /// First step's outstanding I/Os (`--num-disks`, else 1).
    pub start: u32,
    pub max_outstanding: u32,
    /// Mean latency limit in µs (`None`: no limit).
    pub max_latency_us: Option<f64>,
    /// Least relative gain that keeps the climb going (0.03 = 3 %).
    pub min_gain: f64,
    /// Refinement steps after the climb.
    pub refine: u32,
}

/// What one step measured: the figure being maximised and the mean latency.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    pub value: f64,
    pub lat_us: f64,
}

/// One measured step.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Step {
    pub outstanding: u32,
    pub phase: Phase,
    pub sample: Sample,
}

/// The steps in the order they ran and why the climb ended.
#[derive(Clone, Debug, PartialEq)]
pub struct LadderOutcome {
    pub steps: Vec<Step>,
    pub stop: Stop,
    /// The search ended early (interrupt or error) after the climb.
    pub cut_short: bool,
}

impl LadderConfig {
    fn within(&self, s: &Sample) -> bool {
        self.max_latency_us.is_none_or(|m| s.lat_us <= m)
    }

    /// Index of the best step among those within the latency limit: the
    /// highest figure, where figures within [`TIE`] (1 %) of the highest
    /// count as equal and the step with the fewest outstanding I/Os — the
    /// lowest latency — wins (on a plateau, more outstanding I/Os only add
    /// latency). `None` when no step is within the limit.
    pub fn best(&self, steps: &[Step]) -> Option<usize> {
        let top = steps
            .iter()
            .filter(|s| self.within(&s.sample))
            .map(|s| s.sample.value)
            .reduce(f64::max)?;
        let floor = top * (1.0 - TIE.min(self.min_gain));
        steps
            .iter()
            .enumerate()
            .filter(|(_, s)| self.within(&s.sample) && s.sample.value >= floor)
            .min_by(|(_, a), (_, b)| {
                a.outstanding
                    .cmp(&b.outstanding)
                    .then(b.sample.value.total_cmp(&a.sample.value))
            })
            .map(|(i, _)| i)
    }
}

fn midpoint(lo: u32, hi: u32) -> Option<u32> {
    if hi <= lo + 1 {
        return None;
    }
    let m = ((lo as f64 * hi as f64).sqrt().round() as u32).clamp(lo + 1, hi - 1);
    Some(m)
}

/// Runs the search. `measure(outstanding, phase)` returns `Ok(None)` when the
/// measurement was cut short (interrupt, I/O error): the search ends there.
pub fn search<E>(
    cfg: &LadderConfig,
    mut measure: impl FnMut(u32, Phase) -> Result<Option<Sample>, E>,
) -> Result<LadderOutcome, E> {
    let mut steps: Vec<Step> = Vec::new();
    let outcome = |steps, stop, cut_short| LadderOutcome {
        steps,
        stop,
        cut_short,
    };
    let Some(stop) = climb(cfg, &mut measure, &mut steps)? else {
        return Ok(outcome(steps, Stop::Stopped, true));
    };
    // The first step was already past the limit: come down until one is within it.
    if stop == Stop::Latency && steps.len() == 1 && !come_down(cfg, &mut measure, &mut steps)? {
        return Ok(outcome(steps, Stop::Stopped, true));
    }
    if let Some(bracket) = bracket(cfg, stop, &steps) {
        if !refine(cfg, stop, bracket, &mut measure, &mut steps)? {
            return Ok(outcome(steps, stop, true));
        }
    }
    Ok(outcome(steps, stop, false))
}

/// Measures `o` in `phase` and keeps the step; its sample, or `None` when
/// the measurement was cut short.
fn measure_step<E>(
    measure: &mut impl FnMut(u32, Phase) -> Result<Option<Sample>, E>,
    steps: &mut Vec<Step>,
    o: u32,
    phase: Phase,
) -> Result<Option<Sample>, E> {
    let Some(s) = measure(o, phase)? else {
        return Ok(None);
    };
    steps.push(Step {
        outstanding: o,
        phase,
        sample: s,
    });
    Ok(Some(s))
}

/// Doubles the outstanding I/Os from the start until the latency limit, a
/// plateau or the cap; `None` when a measurement was cut short.
fn climb<E>(
    cfg: &LadderConfig,
    measure: &mut impl FnMut(u32, Phase) -> Result<Option<Sample>, E>,
    steps: &mut Vec<Step>,
) -> Result<Option<Stop>, E> {
    let max = cfg.max_outstanding.max(1);
    let mut o = cfg.start.clamp(1, max);
    loop {
        let best_before = steps.iter().map(|x| x.sample.value).reduce(f64::max);
        let Some(s) = measure_step(measure, steps, o, Phase::Ladder)? else {
            return Ok(None);
        };
        if !cfg.within(&s) {
            return Ok(Some(Stop::Latency));
        }
        if let Some(b) = best_before {
            if s.value < b * (1.0 + cfg.min_gain) {
                return Ok(Some(Stop::Plateau));
            }
        }
        if o >= max {
            return Ok(Some(Stop::Limit));
        }
        o = o.saturating_mul(2).min(max);
    }
}

/// Halves the outstanding I/Os of the only step until one is within the
/// latency limit (or 1 is reached); `false` when a measurement was cut short.
fn come_down<E>(
    cfg: &LadderConfig,
    measure: &mut impl FnMut(u32, Phase) -> Result<Option<Sample>, E>,
    steps: &mut Vec<Step>,
) -> Result<bool, E> {
    let mut o = steps[0].outstanding;
    while o > 1 {
        o /= 2;
        let Some(s) = measure_step(measure, steps, o, Phase::Ladder)? else {
            return Ok(false);
        };
        if cfg.within(&s) {
            break;
        }
    }
    Ok(true)
}

/// The two outstanding counts the refinement searches between: around the
/// latency limit, or the last two steps of a plateau.
fn bracket(cfg: &LadderConfig, stop: Stop, steps: &[Step]) -> Option<(u32, u32)> {
    match stop {
        Stop::Latency => {
            let over = steps
                .iter()
                .filter(|s| !cfg.within(&s.sample))
                .map(|s| s.outstanding)
                .min();
            let under = over.and_then(|over| {
                steps
                    .iter()
                    .filter(|s| cfg.within(&s.sample) && s.outstanding < over)
                    .map(|s| s.outstanding)
                    .max()
            });
            under.zip(over)
        }
        Stop::Plateau if steps.len() >= 2 => {
            let a = steps[steps.len() - 2].outstanding;
            let b = steps[steps.len() - 1].outstanding;
            Some((a.min(b), a.max(b)))
        }
        _ => None,
    }
}

/// Bisects (geometrically) between `lo` and `hi` for `cfg.refine` steps:
/// towards the latency limit, or towards the higher figure of a plateau;
/// `false` when a measurement was cut short.
fn refine<E>(
    cfg: &LadderConfig,
    stop: Stop,
    (mut lo, mut hi): (u32, u32),
    measure: &mut impl FnMut(u32, Phase) -> Result<Option<Sample>, E>,
    steps: &mut Vec<Step>,
) -> Result<bool, E> {
    let value_at = |steps: &[Step], o: u32| {
        steps
            .iter()
            .filter(|s| s.outstanding == o)
            .map(|s| s.sample.value)
            .fold(0.0, f64::max)
    };
    for _ in 0..cfg.refine {
        let Some(mid) = midpoint(lo, hi) else { break };
        let Some(s) = measure_step(measure, steps, mid, Phase::Refine)? else {
            return Ok(false);
        };
        if stop == Stop::Latency {
            if cfg.within(&s) {
                lo = mid;
            } else {
                hi = mid;
            }
        } else if value_at(steps, lo) >= value_at(steps, hi) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::convert::Infallible;

    /// A device with a fixed service time that saturates at `max_iops`:
    /// IOPS = min(o / t, max), latency by Little's law.
    fn device(service_us: f64, max_iops: f64) -> impl Fn(u32) -> Sample {
        move |o| {
            let iops = (o as f64 * 1e6 / service_us).min(max_iops);
            Sample {
                value: iops,
                lat_us: o as f64 / iops * 1e6,
            }
        }
    }

    fn cfg() -> LadderConfig {
        LadderConfig {
            start: 1,
            max_outstanding: 256,
            max_latency_us: Some(20_000.0),
            min_gain: 0.03,
            refine: 2,
        }
    }

    fn run(cfg: &LadderConfig, dev: impl Fn(u32) -> Sample) -> (LadderOutcome, Vec<u32>) {
        let mut asked = Vec::new();
        let out = search::<Infallible>(cfg, |o, _| {
            asked.push(o);
            Ok(Some(dev(o)))
        })
        .unwrap();
        (out, asked)
    }

    #[test]
    fn climbs_until_the_plateau_then_refines_between_the_last_two_steps() {
        // 1 ms per I/O, saturating at 10,000 IOPS: the knee is at 10 outstanding.
        let (out, asked) = run(&cfg(), device(1000.0, 10_000.0));
        assert_eq!(out.stop, Stop::Plateau);
        // 8 → 8,000, 16 → 10,000 (+25 %), 32 → 10,000 (+0 %): plateau at 32.
        assert_eq!(&asked[..6], &[1, 2, 4, 8, 16, 32]);
        // Refinement between 16 and 32.
        assert!(asked[6..].iter().all(|&o| o > 16 && o < 32), "{asked:?}");
        let best = cfg().best(&out.steps).unwrap();
        assert_eq!(out.steps[best].sample.value, 10_000.0);
        // The best is the fewest outstanding I/Os reaching the plateau.
        assert_eq!(out.steps[best].outstanding, 16);
    }

    #[test]
    fn latency_limit_is_bracketed_and_refined() {
        // IOPS = 1000·√o, so the mean latency is √o ms: 20 ms at 400 outstanding.
        let c = LadderConfig {
            max_outstanding: 1024,
            refine: 4,
            ..cfg()
        };
        let dev = |o: u32| {
            let iops = 1000.0 * (o as f64).sqrt();
            Sample {
                value: iops,
                lat_us: o as f64 / iops * 1e6,
            }
        };
        let (out, asked) = run(&c, dev);
        assert_eq!(out.stop, Stop::Latency);
        assert_eq!(&asked[..10], &[1, 2, 4, 8, 16, 32, 64, 128, 256, 512]);
        assert!(asked[10..].iter().all(|&o| o > 256 && o < 512), "{asked:?}");
        let best = c.best(&out.steps).unwrap();
        let s = out.steps[best];
        assert!(s.sample.lat_us <= 20_000.0);
        // Four bisection steps between 256 and 512 get within 5 % of 400.
        assert!((380..=400).contains(&s.outstanding), "{asked:?}");
        assert_eq!(
            out.steps
                .iter()
                .filter(|s| s.phase == Phase::Refine)
                .count(),
            4
        );
    }

    #[test]
    fn a_start_past_the_limit_comes_down() {
        let c = LadderConfig { start: 64, ..cfg() };
        let (out, asked) = run(&c, device(4000.0, 1_000.0));
        assert_eq!(&asked[..3], &[64, 32, 16]);
        assert_eq!(out.stop, Stop::Latency);
        let best = c.best(&out.steps).unwrap();
        assert!(out.steps[best].outstanding >= 16);
    }

    #[test]
    fn the_cap_stops_a_device_that_keeps_growing() {
        let c = LadderConfig {
            max_outstanding: 8,
            ..cfg()
        };
        let (out, asked) = run(&c, device(100.0, 1e9));
        assert_eq!(out.stop, Stop::Limit);
        assert_eq!(asked, vec![1, 2, 4, 8]);
    }

    #[test]
    fn near_ties_go_to_the_lowest_latency() {
        let step = |o: u32, v: f64| Step {
            outstanding: o,
            phase: Phase::Ladder,
            sample: Sample {
                value: v,
                lat_us: o as f64 * 333.0,
            },
        };
        let c = cfg();
        // 4 outstanding is 0.8 % above 1: the same plateau, so 1 wins.
        let flat = [step(1, 3009.0), step(2, 3000.0), step(4, 3033.0)];
        assert_eq!(c.best(&flat), Some(0));
        // 2 is 2 % above 1 (still under --min-gain): the higher figure wins.
        let near = [step(1, 2940.0), step(2, 3000.0)];
        assert_eq!(c.best(&near), Some(1));
        // 2 is 50 % above 1: a real gain.
        let rising = [step(1, 2000.0), step(2, 3000.0), step(4, 3010.0)];
        assert_eq!(c.best(&rising), Some(1));
        // With no tolerance the strict maximum wins.
        let strict = LadderConfig {
            min_gain: 0.0,
            ..cfg()
        };
        assert_eq!(strict.best(&flat), Some(2));
    }

    #[test]
    fn nothing_within_the_limit_has_no_best() {
        let c = LadderConfig {
            max_latency_us: Some(100.0),
            ..cfg()
        };
        let (out, _) = run(&c, device(4000.0, 1_000.0));
        assert_eq!(c.best(&out.steps), None);
    }

    #[test]
    fn an_interrupt_keeps_the_steps_measured() {
        let mut n = 0;
        let out = search::<Infallible>(&cfg(), |o, _| {
            n += 1;
            Ok((n <= 3).then(|| device(1000.0, 1e6)(o)))
        })
        .unwrap();
        assert_eq!(out.stop, Stop::Stopped);
        assert!(out.cut_short);
        assert_eq!(out.steps.len(), 3);
    }
}
