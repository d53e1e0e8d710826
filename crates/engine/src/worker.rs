//! One worker: keeps its engine busy, times every I/O, and reports a
//! per-second interval to the collector. Nothing is shared per I/O: each
//! worker owns its histograms, and they are merged when the job ends.

use crate::buffers::AlignedBuf;
use crate::dist::Sampler;
use crate::engines::{Completion, Engine, IoReq, Op};
use crate::rng::Rng;
use crate::spec::JobSpec;
use crate::target::TargetSet;
use crate::verify;
use iolens_core::LatencyHistogram;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Counts of one direction (read or write).
#[derive(Clone, Debug, Default)]
pub struct DirStats {
    pub ops: u64,
    pub bytes: u64,
    pub hist: LatencyHistogram,
}

impl DirStats {
    #[inline]
    fn add(&mut self, bytes: u64, lat_ns: u64) {
        self.ops += 1;
        self.bytes += bytes;
        self.hist.record(lat_ns);
    }

    /// Adds `other` into `self`.
    pub fn merge(&mut self, other: &DirStats) {
        self.ops += other.ops;
        self.bytes += other.bytes;
        self.hist.merge(&other.hist);
    }
}

/// What one worker did in one second of the run (ramp included).
#[derive(Debug)]
pub struct Interval {
    pub sec: u32,
    pub read: DirStats,
    pub write: DirStats,
}

/// Messages from workers to the collector.
#[derive(Debug)]
pub enum Msg {
    Interval(Box<Interval>),
    Done(u32),
}

/// Verification counters.
#[derive(Clone, Debug, Default)]
pub struct VerifyStats {
    /// Reads whose header and checksum were checked.
    pub checked: u64,
    /// Reads of blocks that carried no header and were not written in this run.
    pub unstamped: u64,
}

/// What a worker measured over the counted window.
#[derive(Debug, Default)]
pub struct WorkerOutcome {
    pub read: DirStats,
    pub write: DirStats,
    pub sync: LatencyHistogram,
    pub verify: VerifyStats,
    /// The first error (I/O error, short transfer, verify mismatch).
    pub error: Option<String>,
    /// When the worker stopped, ns after the start.
    pub last_ns: u64,
}

/// Everything a worker needs, prepared by the job.
pub struct WorkerPlan {
    pub id: u32,
    pub spec: Arc<JobSpec>,
    pub targets: Arc<TargetSet>,
    /// Logical region this worker addresses: [start, start + len).
    pub region_start: u64,
    pub region_len: u64,
    pub t0: Instant,
    pub ramp_ns: u64,
    pub end_ns: u64,
    pub stop: Arc<AtomicBool>,
    pub tx: Sender<Msg>,
}

#[derive(Clone, Copy)]
struct Slot {
    op: Op,
    start_ns: u64,
    logical: u64,
    target: usize,
    offset: u64,
    len: u32,
    busy: bool,
}

/// Slot buffers for one worker: `depth` buffers of `max_bs` bytes each.
pub struct SlotBuffers {
    mem: AlignedBuf,
    stride: usize,
    depth: usize,
}

impl SlotBuffers {
    /// Allocates and fills with random (incompressible) bytes.
    pub fn new(depth: usize, max_bs: usize, seed: u64) -> SlotBuffers {
        let stride = max_bs.div_ceil(4096) * 4096;
        let mut mem = AlignedBuf::new(stride * depth, 4096);
        Rng::new(seed, 0xB0F).fill(mem.as_mut_slice());
        SlotBuffers { mem, stride, depth }
    }

    /// (pointer, length) of every slot buffer, for registration.
    pub fn iovecs(&self) -> Vec<(*mut u8, usize)> {
        // SAFETY: every slot lies inside the allocation.
        (0..self.depth)
            .map(|i| (unsafe { self.mem.ptr().add(i * self.stride) }, self.stride))
            .collect()
    }

    #[inline]
    fn ptr(&self, i: usize) -> *mut u8 {
        // SAFETY: i < depth, so the offset is inside the allocation.
        unsafe { self.mem.ptr().add(i * self.stride) }
    }

    #[inline]
    fn slice(&mut self, i: usize, len: usize) -> &mut [u8] {
        &mut self.mem.as_mut_slice()[i * self.stride..i * self.stride + len]
    }
}

struct Gen {
    rng: Rng,
    sampler: Option<Sampler>,
    unit: u64,
    cursor: u64,
    sizes: Vec<(u64, u32)>,
    weight_total: u32,
    read_pct: u32,
    random: bool,
}

impl Gen {
    #[inline]
    fn size(&mut self) -> u64 {
        if self.sizes.len() == 1 {
            return self.sizes[0].0;
        }
        let mut w = self.rng.below(self.weight_total as u64) as u32;
        for &(s, sw) in &self.sizes {
            if w < sw {
                return s;
            }
            w -= sw;
        }
        self.sizes[0].0
    }

    #[inline]
    fn op(&mut self) -> Op {
        match self.read_pct {
            100 => Op::Read,
            0 => Op::Write,
            p => {
                if (self.rng.below(100) as u32) < p {
                    Op::Read
                } else {
                    Op::Write
                }
            }
        }
    }

    /// Offset inside the worker's region (relative), aligned to `len`.
    #[inline]
    fn offset(&mut self, region_len: u64, len: u64) -> u64 {
        if self.random {
            let idx = match &self.sampler {
                Some(s) => s.sample(&mut self.rng),
                None => 0,
            };
            let off = idx * self.unit / len * len;
            if off + len > region_len {
                (region_len - len) / len * len
            } else {
                off
            }
        } else {
            if self.cursor + len > region_len {
                self.cursor = 0;
            }
            let off = self.cursor;
            self.cursor += len;
            off
        }
    }
}

/// Runs the worker loop until the end of the job, a stop request or an error.
pub fn run<E: Engine>(plan: WorkerPlan, engine: &mut E, bufs: &mut SlotBuffers) -> WorkerOutcome {
    let mut w = Worker::new(plan);
    let r = w.run_loop(engine, bufs);
    w.drain(engine);
    if let Err(e) = r {
        w.out.error.get_or_insert(e);
        w.plan.stop.store(true, Ordering::Relaxed);
    }
    w.finish();
    w.out
}

struct Worker {
    plan: WorkerPlan,
    gen: Gen,
    slots: Vec<Slot>,
    free: Vec<u32>,
    inflight: usize,
    comps: Vec<Completion>,
    out: WorkerOutcome,
    cur_sec: u32,
    next_sec_ns: u64,
    iv_read: DirStats,
    iv_write: DirStats,
    rate_ns: Option<f64>,
    next_intended: f64,
    sync_every: Option<(u32, Op)>,
    writes_since_sync: u32,
    sync_due: bool,
    dirty: Vec<bool>,
    verify: bool,
    written: HashMap<u64, u64>,
    write_seq: u64,
}

impl Worker {
    fn new(plan: WorkerPlan) -> Worker {
        let spec = &plan.spec;
        let depth = spec.qd as usize;
        let unit = spec.min_bs();
        let random = spec.rw.random();
        let sampler = random.then(|| {
            Sampler::new(
                &spec.distribution,
                plan.region_len / unit,
                unit,
                spec.seed ^ plan.id as u64,
            )
        });
        let threads = spec.threads as u64;
        // Sequential streams start spread over the region, one per worker.
        let cursor = if random || spec.verify {
            0
        } else {
            (plan.region_len / threads * plan.id as u64) / spec.max_bs() * spec.max_bs()
        };
        let gen = Gen {
            rng: Rng::new(spec.seed, plan.id as u64 + 1),
            sampler,
            unit,
            cursor,
            weight_total: spec.sizes().iter().map(|s| s.1).sum(),
            sizes: spec.sizes(),
            read_pct: spec.read_pct(),
            random,
        };
        let rate_ns = spec.rate_iops.map(|r| 1e9 * spec.threads as f64 / r as f64);
        let next_intended = rate_ns.map_or(0.0, |r| r * plan.id as f64 / spec.threads as f64);
        let sync_every = spec
            .fsync
            .map(|n| (n, Op::Fsync))
            .or(spec.fdatasync.map(|n| (n, Op::Fdatasync)));
        let ntargets = plan.targets.targets.len().max(1);
        Worker {
            gen,
            slots: vec![
                Slot {
                    op: Op::Read,
                    start_ns: 0,
                    logical: 0,
                    target: 0,
                    offset: 0,
                    len: 0,
                    busy: false
                };
                depth
            ],
            free: (0..depth as u32).rev().collect(),
            inflight: 0,
            comps: Vec::with_capacity(depth),
            out: WorkerOutcome::default(),
            cur_sec: 0,
            next_sec_ns: 1_000_000_000,
            iv_read: DirStats::default(),
            iv_write: DirStats::default(),
            rate_ns,
            next_intended,
            sync_every,
            writes_since_sync: 0,
            sync_due: false,
            dirty: vec![false; ntargets],
            verify: spec.verify,
            written: HashMap::new(),
            write_seq: (plan.id as u64) << 48,
            plan,
        }
    }

    #[inline]
    fn now(&self) -> u64 {
        self.plan.t0.elapsed().as_nanos() as u64
    }

    fn send_interval(&mut self) {
        let iv = Interval {
            sec: self.cur_sec,
            read: std::mem::take(&mut self.iv_read),
            write: std::mem::take(&mut self.iv_write),
        };
        let _ = self.plan.tx.send(Msg::Interval(Box::new(iv)));
    }

    /// Sends finished seconds up to the one holding `now_ns`.
    fn flush_until(&mut self, now_ns: u64) {
        while now_ns >= self.next_sec_ns {
            self.send_interval();
            self.cur_sec += 1;
            self.next_sec_ns += 1_000_000_000;
        }
    }

    /// Sends the last (partial) second and says goodbye.
    fn finish(&mut self) {
        let now = self.now().min(self.plan.end_ns);
        self.out.last_ns = now;
        self.flush_until(now);
        if now > self.next_sec_ns - 1_000_000_000 {
            self.send_interval();
        }
        let _ = self.plan.tx.send(Msg::Done(self.plan.id));
    }

    fn pick(&mut self) -> (Op, u64, u64) {
        let len = self.gen.size();
        let op = self.gen.op();
        let mut rel = self.gen.offset(self.plan.region_len, len);
        if self.verify {
            // Never two I/Os on one block at once: their order would be undefined.
            for _ in 0..64 {
                let l = self.plan.region_start + rel;
                if !self.slots.iter().any(|s| s.busy && s.logical == l) {
                    break;
                }
                rel = self.gen.offset(self.plan.region_len, len);
            }
        }
        (op, self.plan.region_start + rel, len)
    }

    fn issue<E: Engine>(
        &mut self,
        engine: &mut E,
        bufs: &mut SlotBuffers,
        start_ns: u64,
    ) -> Result<(), String> {
        let slot = self.free.pop().expect("issue is called with a free slot") as usize;
        let (op, logical, len) = self.pick();
        let (target, offset) = self.plan.targets.map(logical, len);
        if op == Op::Write {
            if self.verify {
                self.write_seq += 1;
                verify::stamp(bufs.slice(slot, len as usize), logical, self.write_seq);
                self.written.insert(logical, self.write_seq);
            }
            if let Some((n, _)) = self.sync_every {
                self.dirty[target] = true;
                self.writes_since_sync += 1;
                if self.writes_since_sync >= n {
                    self.sync_due = true;
                }
            }
        }
        self.slots[slot] = Slot {
            op,
            start_ns,
            logical,
            target,
            offset,
            len: len as u32,
            busy: true,
        };
        let req = IoReq {
            op,
            file: target,
            offset,
            len: len as u32,
            buf: bufs.ptr(slot),
            buf_index: slot as u16,
            tag: slot as u32,
        };
        engine
            .queue(&req)
            .map_err(|e| format!("submitting I/O: {e}"))?;
        self.inflight += 1;
        Ok(())
    }

    fn complete(&mut self, bufs: &mut SlotBuffers, t: u64) -> Result<(), String> {
        let counted = t >= self.plan.ramp_ns && t < self.plan.end_ns;
        let comps = std::mem::take(&mut self.comps);
        let mut result = Ok(());
        for c in &comps {
            let i = c.tag as usize;
            let s = self.slots[i];
            self.slots[i].busy = false;
            self.free.push(c.tag);
            self.inflight -= 1;
            if c.result != s.len as i32 {
                if result.is_ok() {
                    result = Err(self.io_error(&s, c.result));
                }
                continue;
            }
            let lat = t.saturating_sub(s.start_ns);
            match s.op {
                Op::Read => {
                    if self.verify {
                        let expected = self.written.get(&s.logical).copied();
                        match verify::check(bufs.slice(i, s.len as usize), s.logical, expected) {
                            Ok(verify::Check::Good(_)) => self.out.verify.checked += 1,
                            Ok(verify::Check::Unstamped) => self.out.verify.unstamped += 1,
                            Err(why) => {
                                if result.is_ok() {
                                    result = Err(format!(
                                        "verify failed at {} offset {} (block of {} bytes): {why}",
                                        self.plan.targets.targets[s.target].path.display(),
                                        s.offset,
                                        s.len
                                    ));
                                }
                                continue;
                            }
                        }
                    }
                    self.iv_read.add(s.len as u64, lat);
                    if counted {
                        self.out.read.add(s.len as u64, lat);
                    }
                }
                Op::Write => {
                    self.iv_write.add(s.len as u64, lat);
                    if counted {
                        self.out.write.add(s.len as u64, lat);
                    }
                }
                Op::Fsync | Op::Fdatasync => {}
            }
        }
        self.comps = comps;
        self.comps.clear();
        result
    }

    fn io_error(&self, s: &Slot, res: i32) -> String {
        let path = self
            .plan
            .targets
            .targets
            .get(s.target)
            .map_or("(null)".to_string(), |t| t.path.display().to_string());
        let what = s.op.name();
        if res < 0 {
            let e = std::io::Error::from_raw_os_error(-res);
            let hint = if -res == libc::ENOSPC {
                " (no space left: use a smaller --size or free space)"
            } else {
                ""
            };
            format!(
                "{what} of {} bytes at {path} offset {} failed: {e}{hint}",
                s.len, s.offset
            )
        } else {
            format!(
                "short {what} at {path} offset {}: {res} of {} bytes",
                s.offset, s.len
            )
        }
    }

    /// fsync/fdatasync every dirty target, once the queue is empty.
    fn sync<E: Engine>(&mut self, engine: &mut E) -> Result<(), String> {
        let op = self.sync_every.map_or(Op::Fsync, |s| s.1);
        for t in 0..self.dirty.len() {
            if !self.dirty[t] {
                continue;
            }
            self.dirty[t] = false;
            let start = self.now();
            let req = IoReq {
                op,
                file: t,
                offset: 0,
                len: 0,
                buf: std::ptr::null_mut(),
                buf_index: 0,
                tag: u32::MAX,
            };
            engine
                .queue(&req)
                .map_err(|e| format!("submitting sync: {e}"))?;
            let mut got = Vec::new();
            while got.is_empty() {
                engine
                    .reap(1, None, &mut got)
                    .map_err(|e| format!("waiting for sync: {e}"))?;
            }
            let end = self.now();
            if got[0].result < 0 {
                let s = Slot {
                    op,
                    start_ns: start,
                    logical: 0,
                    target: t,
                    offset: 0,
                    len: 0,
                    busy: false,
                };
                return Err(self.io_error(&s, got[0].result));
            }
            if end >= self.plan.ramp_ns && end < self.plan.end_ns {
                self.out.sync.record(end - start);
            }
        }
        self.writes_since_sync = 0;
        self.sync_due = false;
        Ok(())
    }

    fn run_loop<E: Engine>(
        &mut self,
        engine: &mut E,
        bufs: &mut SlotBuffers,
    ) -> Result<(), String> {
        let mut now = self.now();
        loop {
            if now >= self.next_sec_ns {
                self.flush_until(now);
            }
            if now >= self.plan.end_ns || self.plan.stop.load(Ordering::Relaxed) {
                return Ok(());
            }
            if self.sync_due && self.inflight == 0 {
                self.sync(engine)?;
                now = self.now();
            }
            // Fill the queue.
            let mut wait_for: Option<u64> = None;
            while !self.free.is_empty() && !self.sync_due {
                let start = match self.rate_ns {
                    None => now,
                    Some(step) => {
                        let due = self.next_intended as u64;
                        if due > now {
                            wait_for = Some(due - now);
                            break;
                        }
                        self.next_intended += step;
                        due // latency counts from the intended start
                    }
                };
                self.issue(engine, bufs, start)?;
            }
            if self.inflight == 0 {
                if let Some(ns) = wait_for {
                    sleep_precise(Duration::from_nanos(ns));
                }
                now = self.now();
                continue;
            }
            let min = if wait_for.is_some() || self.free.is_empty() || self.sync_due {
                1
            } else {
                0
            };
            let timeout = wait_for.map(Duration::from_nanos);
            engine
                .reap(min, timeout, &mut self.comps)
                .map_err(|e| format!("waiting for I/O: {e}"))?;
            now = self.now();
            if !self.comps.is_empty() {
                self.complete(bufs, now)?;
            }
        }
    }

    /// Waits for the I/Os still in flight (their buffers belong to the kernel).
    fn drain<E: Engine>(&mut self, engine: &mut E) {
        let mut guard = 0;
        while self.inflight > 0 && guard < 1_000_000 {
            self.comps.clear();
            if engine
                .reap(1, Some(Duration::from_millis(100)), &mut self.comps)
                .is_err()
            {
                guard += 1000;
            }
            for c in &self.comps {
                if let Some(s) = self.slots.get_mut(c.tag as usize) {
                    s.busy = false;
                }
            }
            self.inflight -= self.comps.len().min(self.inflight);
            guard += 1;
        }
        self.comps.clear();
    }
}

/// Sleeps for `d` with microsecond precision: the kernel sleep for all but
/// the last 50 µs, then a spin.
fn sleep_precise(d: Duration) {
    let end = Instant::now() + d;
    if d > Duration::from_micros(100) {
        std::thread::sleep(d - Duration::from_micros(50));
    }
    while Instant::now() < end {
        std::hint::spin_loop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::{FaultEngine, FaultOptions, NullEngine};
    use crate::spec::{EngineKind, Rw};
    use std::sync::mpsc;

    fn spec(runtime_ms: u64) -> JobSpec {
        JobSpec {
            engine: EngineKind::Null,
            runtime: Duration::from_millis(runtime_ms),
            ..Default::default()
        }
    }

    /// Runs one worker on `engine` with its stop flag, returning its outcome
    /// and the messages it sent.
    fn run_with<E: Engine>(
        spec: JobSpec,
        mut engine: E,
        stop: Arc<AtomicBool>,
    ) -> (WorkerOutcome, Vec<Msg>) {
        let (tx, rx) = mpsc::channel();
        let targets = TargetSet::none(1 << 30);
        let mut bufs = SlotBuffers::new(spec.qd as usize, spec.max_bs() as usize, 1);
        let plan = WorkerPlan {
            id: 0,
            end_ns: spec.runtime.as_nanos() as u64,
            spec: Arc::new(spec),
            region_start: 0,
            region_len: targets.len,
            targets: Arc::new(targets),
            t0: Instant::now(),
            ramp_ns: 0,
            stop,
            tx,
        };
        let out = run(plan, &mut engine, &mut bufs);
        (out, rx.try_iter().collect())
    }

    fn faulty(opts: FaultOptions) -> FaultEngine<NullEngine> {
        FaultEngine::new(NullEngine::default(), opts)
    }

    #[test]
    fn every_completed_io_is_counted_and_reported_by_the_second() {
        let s = JobSpec { qd: 8, ..spec(200) };
        let (out, msgs) = run_with(s, NullEngine::default(), Arc::default());
        assert!(out.error.is_none(), "{:?}", out.error);
        assert!(out.read.ops > 0);
        assert_eq!(out.read.bytes, out.read.ops * 8192);
        assert_eq!(out.read.hist.count(), out.read.ops);
        assert_eq!(out.write.ops, 0);
        let reported: u64 = msgs
            .iter()
            .map(|m| match m {
                Msg::Interval(iv) => iv.read.ops,
                Msg::Done(_) => 0,
            })
            .sum();
        // The intervals also hold the last completions, past the counted window.
        assert!(
            reported >= out.read.ops && reported <= out.read.ops + 8,
            "{reported}"
        );
        assert!(matches!(msgs.last(), Some(Msg::Done(0))));
    }

    #[test]
    fn an_injected_error_stops_the_worker_with_a_message_naming_the_operation() {
        let e = faulty(FaultOptions {
            error_at: vec![5],
            ..Default::default()
        });
        let stop = Arc::new(AtomicBool::new(false));
        let (out, _) = run_with(spec(10_000), e, stop.clone());
        let err = out.error.unwrap();
        assert!(
            err.starts_with("read of 8192 bytes at (null) offset"),
            "{err}"
        );
        assert!(err.contains("Input/output error"), "{err}");
        assert_eq!(out.read.ops, 4);
        assert!(
            stop.load(Ordering::Relaxed),
            "the other workers are told to stop"
        );
    }

    #[test]
    fn a_short_read_is_an_error_not_a_success() {
        let e = faulty(FaultOptions {
            short_at: vec![3],
            ..Default::default()
        });
        let (out, _) = run_with(spec(10_000), e, Arc::default());
        let err = out.error.unwrap();
        assert!(err.starts_with("short read at (null) offset"), "{err}");
        assert!(err.ends_with(": 4096 of 8192 bytes"), "{err}");
        assert_eq!(out.read.ops, 2);
    }

    #[test]
    fn a_failed_sync_names_the_sync() {
        let s = JobSpec {
            rw: Rw::Randwrite,
            fdatasync: Some(4),
            ..spec(10_000)
        };
        // Four writes, then the fdatasync as operation 5.
        let e = faulty(FaultOptions {
            error_at: vec![5],
            errno: libc::ENOSPC,
            ..Default::default()
        });
        let (out, _) = run_with(s, e, Arc::default());
        let err = out.error.unwrap();
        assert!(err.starts_with("fdatasync of 0 bytes"), "{err}");
        assert!(
            err.contains("(no space left: use a smaller --size or free space)"),
            "{err}"
        );
        assert_eq!(out.write.ops, 4);
    }

    #[test]
    fn added_latency_shows_in_the_latency_figures() {
        let e = faulty(FaultOptions {
            delay: Some("3ms".parse().unwrap()),
            ..Default::default()
        });
        let (out, _) = run_with(spec(100), e, Arc::default());
        assert!(out.error.is_none());
        assert!(out.read.ops > 0);
        assert!(
            out.read.hist.quantile_ns(0.0) >= 3_000_000,
            "min {}",
            out.read.hist.quantile_ns(0.0)
        );
    }

    #[test]
    fn a_stop_request_ends_the_run_early() {
        let stop = Arc::new(AtomicBool::new(false));
        let s2 = stop.clone();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            s2.store(true, Ordering::Relaxed);
        });
        let started = Instant::now();
        let (out, _) = run_with(spec(60_000), NullEngine::default(), stop);
        t.join().unwrap();
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(out.error.is_none());
        assert!(out.last_ns < 10_000_000_000);
    }

    #[test]
    fn syncs_are_timed_in_their_own_histogram() {
        let s = JobSpec {
            rw: Rw::Randwrite,
            fsync: Some(4),
            ..spec(100)
        };
        let (out, _) = run_with(s, NullEngine::default(), Arc::default());
        assert!(out.error.is_none());
        assert!(out.sync.count() > 0);
        assert!(out.sync.count() <= out.write.ops / 4 + 1);
    }
}
