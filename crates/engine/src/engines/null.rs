//! The null engine: completes every request at once without touching a
//! device. It measures the tool's own per-I/O cost (fio's `engines/null.c`).

use super::{Caps, Completion, Engine, EngineSetup, Finished, IoReq, Op};
use std::io;
use std::time::Duration;

/// Completes requests immediately.
#[derive(Default)]
pub struct NullEngine {
    done: Finished,
}

impl Engine for NullEngine {
    const NAME: &'static str = "null";
    const CAPS: Caps = Caps::NO_STORAGE;

    fn open(_setup: &EngineSetup) -> io::Result<NullEngine> {
        Ok(NullEngine::default())
    }

    #[inline]
    fn queue(&mut self, req: &IoReq) -> io::Result<()> {
        let result = match req.op {
            Op::Read | Op::Write => req.len as i32,
            Op::Fsync | Op::Fdatasync => 0,
        };
        self.done.record(req.tag, result)
    }

    #[inline]
    fn reap(&mut self, _: usize, _: Option<Duration>, out: &mut Vec<Completion>) -> io::Result<()> {
        self.done.hand_over(out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::request;
    use super::*;

    #[test]
    fn completes_every_request_in_full_at_once() {
        let mut e = NullEngine::default();
        for (tag, op) in [Op::Read, Op::Write, Op::Fsync].into_iter().enumerate() {
            let mut r = request(op, 0, std::ptr::null_mut(), 8192);
            r.tag = tag as u32;
            e.queue(&r).unwrap();
        }
        let mut out = Vec::new();
        e.reap(0, None, &mut out).unwrap();
        let results: Vec<(u32, i32)> = out.iter().map(|c| (c.tag, c.result)).collect();
        assert_eq!(results, [(0, 8192), (1, 8192), (2, 0)]);
    }
}
