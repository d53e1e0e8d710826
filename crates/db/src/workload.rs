//! The SLOB work loop: which operation each loop iteration runs, on which
//! schema and which key range. Pure (seeded) so that the mix is exact and
//! testable without a database.

use iolens_core::ByteSize;
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// Bytes per block (PostgreSQL's page size; one row per block).
pub const BLOCK: u64 = 8192;

/// A number of blocks typed as blocks (`131072`) or as a size (`1G`, `512M`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Blocks(pub u64);

impl FromStr for Blocks {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim();
        if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit()) {
            return t
                .parse()
                .map(Blocks)
                .map_err(|_| format!("'{s}': too many blocks"));
        }
        let b: ByteSize = t.parse().map_err(|_| {
            format!("invalid size '{s}': expected a number of 8 KiB blocks (131072) or a size with a K, M, G or T suffix (1G)")
        })?;
        Ok(Blocks(b.0 / BLOCK))
    }
}

impl fmt::Display for Blocks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// How much an update writes (SLOB REDO_STRESS).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RedoStress {
    /// One filler column gets a new value.
    Lite,
    /// Every filler column gets a new value.
    Heavy,
}

/// `SIZE@OFFSET/FREQ`: every FREQ-th loop picks its key inside the hot spot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hotspot {
    pub size_blocks: u64,
    pub offset_blocks: u64,
    pub every: u32,
}

impl FromStr for Hotspot {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || {
            format!("invalid hot spot '{s}': expected SIZE@OFFSET/FREQ, e.g. 8M@16M/3 (sizes in blocks or with K/M/G)")
        };
        let (size, rest) = s.split_once('@').ok_or_else(bad)?;
        let (off, freq) = rest.split_once('/').ok_or_else(bad)?;
        let h = Hotspot {
            size_blocks: size.parse::<Blocks>().map_err(|_| bad())?.0,
            offset_blocks: off.parse::<Blocks>().map_err(|_| bad())?.0,
            every: freq.trim().parse().map_err(|_| bad())?,
        };
        if h.size_blocks == 0 || h.every == 0 {
            return Err(bad());
        }
        Ok(h)
    }
}

/// `MIN..MAX/FREQ`: every FREQ-th loop sleeps a uniform time in MIN..MAX.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Think {
    pub min: Duration,
    pub max: Duration,
    pub every: u32,
}

impl Serialize for Think {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Think", 3)?;
        st.serialize_field("min_s", &self.min.as_secs_f64())?;
        st.serialize_field("max_s", &self.max.as_secs_f64())?;
        st.serialize_field("every", &self.every)?;
        st.end()
    }
}

impl FromStr for Think {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || format!("invalid think time '{s}': expected MIN..MAX/FREQ, e.g. 1ms..5ms/10");
        let (range, freq) = s.rsplit_once('/').ok_or_else(bad)?;
        let (a, b) = range.split_once("..").ok_or_else(bad)?;
        let t = Think {
            min: iolens_core::parse_duration(a).map_err(|_| bad())?,
            max: iolens_core::parse_duration(b).map_err(|_| bad())?,
            every: freq.trim().parse().map_err(|_| bad())?,
        };
        if t.every == 0 || t.max < t.min {
            return Err(bad());
        }
        Ok(t)
    }
}

/// The work one run does, validated.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct WorkloadSpec {
    /// Sessions in all.
    pub sessions: u32,
    /// Schemas used (session i works on schema i mod schemas + 1).
    pub schemas: u32,
    /// Rows (= blocks) per schema.
    pub scale: u64,
    /// Updates per window of 100 loops.
    pub update_pct: u32,
    /// Scans of the unindexed table per window of 100 loops.
    pub scan_pct: u32,
    /// Rows per select.
    pub work_unit: u64,
    /// Rows per update.
    pub update_work_unit: u64,
    pub redo_stress: RedoStress,
    pub hotspot: Option<Hotspot>,
    /// Every N-th loop works on schema 1.
    pub hot_schema_every: Option<u32>,
    pub think: Option<Think>,
    /// Measured time (ends the run unless work_loop ends it first).
    #[serde(serialize_with = "secs")]
    pub runtime: Duration,
    /// Measured loops per session, when the run is sized by loops.
    pub work_loop: Option<u64>,
    /// Time run before measuring (not counted).
    #[serde(serialize_with = "secs")]
    pub warmup: Duration,
    pub seed: u64,
}

fn secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

impl WorkloadSpec {
    /// Checks the options against each other and the data set; the message
    /// says what to type instead.
    pub fn validate(&self) -> Result<(), String> {
        if self.sessions == 0 {
            return Err("--sessions must be at least 1".into());
        }
        if self.update_pct > 100 || (51..=99).contains(&self.update_pct) {
            return Err(format!(
                "--update-pct {}: use 0..50 or 100 (51-99 cannot be mixed deterministically, as in SLOB)",
                self.update_pct
            ));
        }
        if self.scan_pct > 100 || self.scan_pct + self.update_pct > 100 {
            return Err(format!(
                "--scan-pct {} with --update-pct {}: together they must not exceed 100",
                self.scan_pct, self.update_pct
            ));
        }
        if self.work_unit == 0 || self.update_work_unit == 0 {
            return Err("--work-unit and --update-work-unit must be at least 1".into());
        }
        let wu = self.work_unit.max(self.update_work_unit);
        if wu > self.scale {
            return Err(format!(
                "--work-unit {wu} is larger than the schema scale ({} rows); use a smaller work unit or a larger --scale",
                self.scale
            ));
        }
        if let Some(h) = self.hotspot {
            if h.offset_blocks + h.size_blocks > self.scale || h.size_blocks < wu {
                return Err(format!(
                    "--hotspot {}@{}/{} (blocks) does not fit: it must hold a work unit ({wu}) and end within the scale ({})",
                    h.size_blocks, h.offset_blocks, h.every, self.scale
                ));
            }
        }
        if self.hot_schema_every == Some(0) {
            return Err("--hot-schema-freq must be at least 1".into());
        }
        if self.work_loop == Some(0) {
            return Err("--work-loop must be at least 1".into());
        }
        if self.work_loop.is_none() && self.runtime.is_zero() {
            return Err("--runtime must be more than 0 (or give --work-loop)".into());
        }
        Ok(())
    }

    /// The schema session `i` (0-based) belongs to, 1-based.
    pub fn schema_of(&self, i: u32) -> u32 {
        i % self.schemas + 1
    }
}

/// SplitMix64: small, fast, good enough for picking keys.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x9E37_79B9_7F4A_7C15)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }
}

/// What one loop iteration does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    Select,
    Update,
    Scan,
}

impl OpKind {
    /// All kinds, in report order.
    pub const ALL: [OpKind; 3] = [OpKind::Select, OpKind::Update, OpKind::Scan];

    pub fn name(self) -> &'static str {
        match self {
            OpKind::Select => "select",
            OpKind::Update => "update",
            OpKind::Scan => "scan",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

/// One planned loop iteration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Op {
    pub kind: OpKind,
    pub schema: u32,
    /// Key range (inclusive); unused by scans.
    pub lo: u64,
    pub hi: u64,
    /// Sleep after the operation.
    pub think: Option<Duration>,
}

/// The loop of one session: exact mix per window of 100, key ranges, hot
/// spot, hot schema and think time.
#[derive(Clone, Debug)]
pub struct LoopPlan {
    spec: WorkloadSpec,
    schema: u32,
    rng: Rng,
    window: [OpKind; 100],
    pos: usize,
    loops: u64,
}

impl LoopPlan {
    /// The plan of session `i` (0-based).
    pub fn new(spec: &WorkloadSpec, i: u32) -> LoopPlan {
        LoopPlan {
            schema: spec.schema_of(i),
            rng: Rng::new(
                spec.seed
                    .wrapping_add(i as u64)
                    .wrapping_mul(0x2545_F491_4F6C_DD1D),
            ),
            spec: spec.clone(),
            window: [OpKind::Select; 100],
            pos: 100,
            loops: 0,
        }
    }

    fn refill(&mut self) {
        let u = self.spec.update_pct as usize;
        let s = self.spec.scan_pct as usize;
        for (j, w) in self.window.iter_mut().enumerate() {
            *w = if j < u {
                OpKind::Update
            } else if j < u + s {
                OpKind::Scan
            } else {
                OpKind::Select
            };
        }
        for j in (1..100).rev() {
            let k = self.rng.below(j as u64 + 1) as usize;
            self.window.swap(j, k);
        }
        self.pos = 0;
    }

    /// The next iteration.
    pub fn next_op(&mut self) -> Op {
        if self.pos == 100 {
            self.refill();
        }
        let kind = self.window[self.pos];
        self.pos += 1;
        self.loops += 1;
        let n = self.loops;
        let schema = match self.spec.hot_schema_every {
            Some(e) if n.is_multiple_of(e as u64) => 1,
            _ => self.schema,
        };
        let units = if kind == OpKind::Update {
            self.spec.update_work_unit
        } else {
            self.spec.work_unit
        };
        // Keys 1..=scale; a range of `units` keys starting at lo.
        let (base, span) = match self.spec.hotspot {
            Some(h) if n.is_multiple_of(h.every as u64) => (h.offset_blocks, h.size_blocks),
            _ => (0, self.spec.scale),
        };
        let lo = base + 1 + self.rng.below(span - units + 1);
        let think = match self.spec.think {
            Some(t) if n.is_multiple_of(t.every as u64) => {
                let range = (t.max - t.min).as_nanos() as u64;
                Some(
                    t.min
                        + Duration::from_nanos(if range == 0 {
                            0
                        } else {
                            self.rng.below(range + 1)
                        }),
                )
            }
            _ => None,
        };
        Op {
            kind,
            schema,
            lo,
            hi: lo + units - 1,
            think,
        }
    }
}

/// A seeded bijection of `0..n` (a Feistel network with cycle walking):
/// keys in random physical order without holding a shuffled array.
#[derive(Clone, Copy, Debug)]
pub struct Permutation {
    n: u64,
    half_bits: u32,
    seed: u64,
}

impl Permutation {
    pub fn new(n: u64, seed: u64) -> Permutation {
        let bits = 64 - n.max(2).saturating_sub(1).leading_zeros();
        let half_bits = bits.div_ceil(2).max(1);
        Permutation { n, half_bits, seed }
    }

    fn round(&self, x: u64, r: u64) -> u64 {
        let mut z = x ^ self
            .seed
            .wrapping_add(r.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        z = (z ^ (z >> 31)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 29)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 32)
    }

    fn once(&self, x: u64) -> u64 {
        let mask = (1u64 << self.half_bits) - 1;
        let (mut l, mut r) = (x >> self.half_bits, x & mask);
        for round in 0..4 {
            let t = l ^ (self.round(r, round) & mask);
            l = r;
            r = t;
        }
        (l << self.half_bits) | r
    }

    /// The image of `i` (< n).
    pub fn apply(&self, i: u64) -> u64 {
        let mut x = self.once(i);
        while x >= self.n {
            x = self.once(x);
        }
        x
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> WorkloadSpec {
        WorkloadSpec {
            sessions: 4,
            schemas: 2,
            scale: 2000,
            update_pct: 20,
            scan_pct: 5,
            work_unit: 64,
            update_work_unit: 8,
            redo_stress: RedoStress::Lite,
            hotspot: None,
            hot_schema_every: None,
            think: None,
            runtime: Duration::from_secs(1),
            work_loop: None,
            warmup: Duration::ZERO,
            seed: 7,
        }
    }

    #[test]
    fn the_mix_is_exact_in_every_window_of_100() {
        let mut p = LoopPlan::new(&spec(), 1);
        for _ in 0..5 {
            let ops: Vec<Op> = (0..100).map(|_| p.next_op()).collect();
            let count = |k| ops.iter().filter(|o| o.kind == k).count();
            assert_eq!(count(OpKind::Update), 20);
            assert_eq!(count(OpKind::Scan), 5);
            assert_eq!(count(OpKind::Select), 75);
        }
    }

    #[test]
    fn ranges_stay_in_the_key_space_and_have_the_work_unit() {
        let s = spec();
        let mut p = LoopPlan::new(&s, 0);
        for _ in 0..10_000 {
            let o = p.next_op();
            assert!(o.lo >= 1 && o.hi <= s.scale, "{o:?}");
            let want = if o.kind == OpKind::Update { 8 } else { 64 };
            assert_eq!(o.hi - o.lo + 1, want);
            assert_eq!(o.schema, 1);
        }
        assert_eq!(LoopPlan::new(&s, 1).next_op().schema, 2);
    }

    #[test]
    fn hot_spot_hot_schema_and_think_apply_on_their_frequency() {
        let mut s = spec();
        s.hotspot = Some("100@1000/3".parse().unwrap());
        s.hot_schema_every = Some(4);
        s.think = Some("1ms..2ms/5".parse().unwrap());
        let mut p = LoopPlan::new(&s, 1);
        for n in 1..=600u64 {
            let o = p.next_op();
            if n % 3 == 0 {
                assert!(o.lo > 1000 && o.hi <= 1100, "loop {n}: {o:?}");
            }
            assert_eq!(o.schema, if n % 4 == 0 { 1 } else { 2 });
            match o.think {
                Some(t) => {
                    assert_eq!(n % 5, 0);
                    assert!(t >= Duration::from_millis(1) && t <= Duration::from_millis(2));
                }
                None => assert_ne!(n % 5, 0),
            }
        }
    }

    #[test]
    fn validation_rejects_what_slob_rejects() {
        let mut s = spec();
        s.update_pct = 60;
        assert!(s.validate().unwrap_err().contains("51-99"));
        s.update_pct = 100;
        s.scan_pct = 0;
        assert!(s.validate().is_ok());
        s.update_pct = 50;
        s.scan_pct = 60;
        assert!(s.validate().is_err());
        let mut s = spec();
        s.work_unit = 5000;
        assert!(s.validate().unwrap_err().contains("scale"));
        let mut s = spec();
        s.hotspot = Some("8M@0/3".parse().unwrap()); // 1024 blocks
        s.scale = 500;
        s.work_unit = 8;
        assert!(s.validate().is_err());
    }

    #[test]
    fn options_parse() {
        assert_eq!("131072".parse::<Blocks>().unwrap().0, 131072);
        assert_eq!("1G".parse::<Blocks>().unwrap().0, 131072);
        assert!("1x".parse::<Blocks>().is_err());
        let h: Hotspot = "8M@16M/3".parse().unwrap();
        assert_eq!((h.size_blocks, h.offset_blocks, h.every), (1024, 2048, 3));
        assert!("8M@16M".parse::<Hotspot>().is_err());
        let t: Think = "1ms..5ms/10".parse().unwrap();
        assert_eq!(t.max, Duration::from_millis(5));
        assert!("5ms..1ms/10".parse::<Think>().is_err());
    }

    #[test]
    fn the_permutation_is_a_bijection_and_not_the_identity() {
        for n in [1u64, 2, 3, 10, 1000, 4097] {
            let p = Permutation::new(n, 42);
            let mut seen = vec![false; n as usize];
            for i in 0..n {
                let v = p.apply(i);
                assert!(v < n);
                assert!(!seen[v as usize], "n={n}: {v} twice");
                seen[v as usize] = true;
            }
        }
        let p = Permutation::new(1000, 1);
        let fixed = (0..1000).filter(|&i| p.apply(i) == i).count();
        assert!(fixed < 20, "{fixed} fixed points");
    }
}
