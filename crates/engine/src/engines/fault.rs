//! The fault engine: wraps another engine and injects errors, short
//! transfers and added latency at chosen operations, so that the failure
//! paths of the worker, the job and the commands are tested without failing
//! hardware (raft-engine's failpoints, foyer's latency injection).
//!
//! Operations are counted per worker in the order they are queued, syncs
//! included: operation 1 is a worker's first request. `--engine fault` wraps
//! the [`NullEngine`](super::NullEngine), so it needs no target;
//! [`FaultEngine::new`] wraps any engine in library code.

use super::{Caps, Completion, Engine, EngineSetup, IoReq};
use iolens_core::DurationArg;
use serde::{Serialize, Serializer};
use std::fmt;
use std::io;
use std::str::FromStr;
use std::time::Duration;

/// Which operations a fault hits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FaultWhen {
    /// Every operation.
    Always,
    /// Every Nth operation (N, 2N, …).
    Every(u64),
    /// These operations.
    At(Vec<u64>),
}

impl FaultWhen {
    /// Whether operation `n` (1-based) is hit.
    pub fn hits(&self, n: u64) -> bool {
        match self {
            FaultWhen::Always => true,
            FaultWhen::Every(k) => n.is_multiple_of(*k),
            FaultWhen::At(v) => v.contains(&n),
        }
    }
}

/// Added latency: `by` at the operations `when` hits (`--fault-delay 5ms@every:100`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FaultDelay {
    pub by: Duration,
    pub when: FaultWhen,
}

impl FromStr for FaultDelay {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || {
            format!("invalid --fault-delay '{s}': expected DURATION[@every:N|@N,N..] (e.g. 5ms@every:100, 2ms@3,7 or 1ms)")
        };
        let (by, when) = match s.split_once('@') {
            None => (s, None),
            Some((by, when)) => (by, Some(when)),
        };
        let by = by.parse::<DurationArg>().map_err(|_| bad())?.0;
        let ops = |list: &str| -> Result<Vec<u64>, String> {
            list.split(',')
                .map(|n| {
                    n.trim()
                        .parse::<u64>()
                        .ok()
                        .filter(|&n| n > 0)
                        .ok_or_else(bad)
                })
                .collect()
        };
        let when = match when {
            None => FaultWhen::Always,
            Some(w) => match w.strip_prefix("every:") {
                Some(k) => FaultWhen::Every(k.parse().ok().filter(|&k| k > 0).ok_or_else(bad)?),
                None => FaultWhen::At(ops(w)?),
            },
        };
        Ok(FaultDelay { by, when })
    }
}

impl fmt::Display for FaultDelay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", DurationArg(self.by))?;
        match &self.when {
            FaultWhen::Always => Ok(()),
            FaultWhen::Every(k) => write!(f, "@every:{k}"),
            FaultWhen::At(v) => {
                let v: Vec<String> = v.iter().map(u64::to_string).collect();
                write!(f, "@{}", v.join(","))
            }
        }
    }
}

impl Serialize for FaultDelay {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// The errno names `--fault-errno` accepts (a number is accepted too).
const ERRNO_NAMES: [(&str, i32); 8] = [
    ("EIO", libc::EIO),
    ("ENOSPC", libc::ENOSPC),
    ("EAGAIN", libc::EAGAIN),
    ("EINVAL", libc::EINVAL),
    ("EBADF", libc::EBADF),
    ("ENXIO", libc::ENXIO),
    ("EROFS", libc::EROFS),
    ("ETIMEDOUT", libc::ETIMEDOUT),
];

/// Parses `--fault-errno`: a name such as `EIO` or `ENOSPC`, or a number.
pub fn parse_errno(s: &str) -> Result<i32, String> {
    if let Some(&(_, n)) = ERRNO_NAMES
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(s))
    {
        return Ok(n);
    }
    match s.parse::<i32>() {
        Ok(n) if n > 0 => Ok(n),
        _ => {
            let names: Vec<&str> = ERRNO_NAMES.iter().map(|e| e.0).collect();
            Err(format!(
                "invalid --fault-errno '{s}': use one of {} or a positive number",
                names.join(", ")
            ))
        }
    }
}

/// The fault engine's own options (`fault` in result.json's `config`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FaultOptions {
    /// Operations that fail with `errno`.
    pub error_at: Vec<u64>,
    /// The errno of injected errors (default EIO).
    pub errno: i32,
    /// Reads and writes that transfer only half of their length.
    pub short_at: Vec<u64>,
    /// Added latency.
    pub delay: Option<FaultDelay>,
}

impl Default for FaultOptions {
    fn default() -> Self {
        FaultOptions {
            error_at: Vec::new(),
            errno: libc::EIO,
            short_at: Vec::new(),
            delay: None,
        }
    }
}

impl FaultOptions {
    /// Checks the options.
    pub fn validate(&self) -> Result<(), String> {
        if self.error_at.contains(&0) || self.short_at.contains(&0) {
            return Err(
                "--fault-error-at/--fault-short-at count operations from 1 (the first request)"
                    .into(),
            );
        }
        Ok(())
    }
}

/// `inner` with faults injected.
pub struct FaultEngine<E> {
    inner: E,
    opts: FaultOptions,
    /// Requests queued so far.
    queued: u64,
    /// Completions of the requests failed here (never handed to `inner`).
    failed: Vec<Completion>,
    /// Tags of requests whose completion is cut short.
    short: Vec<u32>,
}

impl<E: Engine> FaultEngine<E> {
    /// Wraps `inner`.
    pub fn new(inner: E, opts: FaultOptions) -> FaultEngine<E> {
        FaultEngine {
            inner,
            opts,
            queued: 0,
            failed: Vec::new(),
            short: Vec::new(),
        }
    }
}

impl<E: Engine> Engine for FaultEngine<E> {
    const NAME: &'static str = "fault";
    const CAPS: Caps = E::CAPS.with(Caps::INJECTS_FAULTS);

    fn open(setup: &EngineSetup) -> io::Result<Self> {
        let opts = setup.spec.fault.clone().unwrap_or_default();
        Ok(FaultEngine::new(E::open(setup)?, opts))
    }

    fn probe() -> io::Result<()> {
        E::probe()
    }

    fn setup_error(e: &io::Error) -> String {
        E::setup_error(e)
    }

    fn queue(&mut self, req: &IoReq) -> io::Result<()> {
        self.queued += 1;
        let n = self.queued;
        if let Some(d) = &self.opts.delay {
            if d.when.hits(n) {
                std::thread::sleep(d.by);
            }
        }
        if self.opts.error_at.contains(&n) {
            self.failed.push(Completion {
                tag: req.tag,
                result: -self.opts.errno,
            });
            return Ok(());
        }
        if req.len > 1 && self.opts.short_at.contains(&n) {
            self.short.push(req.tag);
        }
        self.inner.queue(req)
    }

    fn reap(
        &mut self,
        min: usize,
        timeout: Option<Duration>,
        out: &mut Vec<Completion>,
    ) -> io::Result<()> {
        let failed = self.failed.len();
        out.append(&mut self.failed);
        let first = out.len();
        self.inner.reap(min.saturating_sub(failed), timeout, out)?;
        if !self.short.is_empty() {
            for c in &mut out[first..] {
                if let Some(i) = self.short.iter().position(|&t| t == c.tag) {
                    self.short.swap_remove(i);
                    if c.result > 0 {
                        c.result /= 2;
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::{NullEngine, Op};
    use super::*;
    use std::time::Instant;

    fn req(tag: u32) -> IoReq {
        IoReq {
            op: Op::Read,
            file: 0,
            offset: 0,
            len: 4096,
            buf: std::ptr::null_mut(),
            buf_index: 0,
            tag,
        }
    }

    fn results(opts: FaultOptions, n: u32) -> Vec<i32> {
        let mut e = FaultEngine::new(NullEngine::default(), opts);
        let mut out = Vec::new();
        for tag in 0..n {
            e.queue(&req(tag)).unwrap();
            e.reap(1, None, &mut out).unwrap();
        }
        assert_eq!(
            out.iter().map(|c| c.tag).collect::<Vec<_>>(),
            (0..n).collect::<Vec<_>>()
        );
        out.iter().map(|c| c.result).collect()
    }

    #[test]
    fn errors_hit_exactly_the_chosen_operations() {
        let opts = FaultOptions {
            error_at: vec![2, 4],
            errno: libc::ENOSPC,
            ..Default::default()
        };
        assert_eq!(
            results(opts, 5),
            [4096, -libc::ENOSPC, 4096, -libc::ENOSPC, 4096]
        );
    }

    #[test]
    fn short_transfers_return_half_the_length() {
        let opts = FaultOptions {
            short_at: vec![3],
            ..Default::default()
        };
        assert_eq!(results(opts, 4), [4096, 4096, 2048, 4096]);
    }

    #[test]
    fn delays_add_latency_at_the_chosen_operations() {
        let opts = FaultOptions {
            delay: Some("20ms@every:2".parse().unwrap()),
            ..Default::default()
        };
        let mut e = FaultEngine::new(NullEngine::default(), opts);
        let mut took = Vec::new();
        for tag in 0..4 {
            let t = Instant::now();
            e.queue(&req(tag)).unwrap();
            took.push(t.elapsed());
        }
        assert!(took[1] >= Duration::from_millis(20) && took[3] >= Duration::from_millis(20));
        assert!(took[0] < Duration::from_millis(20) && took[2] < Duration::from_millis(20));
    }

    #[test]
    fn a_failed_request_counts_towards_the_wait() {
        // An injected failure is a completion: reap must not block on the inner engine for it.
        let mut e = FaultEngine::new(
            NullEngine::default(),
            FaultOptions {
                error_at: vec![1],
                ..Default::default()
            },
        );
        e.queue(&req(7)).unwrap();
        let mut out = Vec::new();
        e.reap(1, None, &mut out).unwrap();
        assert_eq!(
            out,
            [Completion {
                tag: 7,
                result: -libc::EIO
            }]
        );
    }

    #[test]
    fn delay_and_errno_parse_and_print() {
        for s in ["5ms@every:100", "2ms@3,7", "1s"] {
            assert_eq!(s.parse::<FaultDelay>().unwrap().to_string(), s);
        }
        for s in ["", "5ms@every:0", "5ms@0", "x@3", "5ms@every:x", "5ms@"] {
            assert!(s.parse::<FaultDelay>().is_err(), "{s} accepted");
        }
        assert_eq!(parse_errno("eio"), Ok(libc::EIO));
        assert_eq!(parse_errno("28"), Ok(28));
        assert!(parse_errno("EWHAT").unwrap_err().contains("ENOSPC"));
        assert!(parse_errno("0").is_err());
    }
}
