//! How a number of outstanding I/Os is spread over workers.
//!
//! With io_uring one worker keeps many I/Os in flight, so workers are added
//! only where one would be busy: one worker per [`PER_WORKER`] outstanding
//! I/Os, at most `max_threads`, and always an exact split (threads × qd =
//! outstanding). With a synchronous engine (psync) every outstanding I/O
//! needs its own worker.

use iolens_engine::EngineKind;

/// Outstanding I/Os one io_uring worker is given before a second one is added.
pub const PER_WORKER: u32 = 32;

/// `(threads, qd)` with `threads × qd == outstanding`.
pub fn split(outstanding: u32, engine: EngineKind, max_threads: u32) -> (u32, u32) {
    let o = outstanding.max(1);
    if engine.sync_io() {
        return (o, 1);
    }
    let want = o.div_ceil(PER_WORKER).clamp(1, max_threads.max(1));
    let threads = (1..=want).rev().find(|t| o.is_multiple_of(*t)).unwrap_or(1);
    (threads, o / threads)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_are_exact_and_bounded() {
        for o in 1..=600u32 {
            for max in [1u32, 2, 4, 16] {
                let (t, q) = split(o, EngineKind::IoUring, max);
                assert_eq!(t * q, o, "{o} over {max}");
                assert!(t <= max && t >= 1);
            }
        }
    }

    #[test]
    fn small_depths_stay_on_one_worker() {
        assert_eq!(split(1, EngineKind::IoUring, 8), (1, 1));
        assert_eq!(split(32, EngineKind::IoUring, 8), (1, 32));
        assert_eq!(split(64, EngineKind::IoUring, 8), (2, 32));
        assert_eq!(split(256, EngineKind::IoUring, 2), (2, 128));
    }

    #[test]
    fn psync_uses_one_worker_per_io() {
        assert_eq!(split(12, EngineKind::Psync, 2), (12, 1));
    }
}
