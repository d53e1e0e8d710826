//! The null engine: completes every request at once without touching a
//! device. It measures the tool's own per-I/O cost (fio's `engines/null.c`).

use super::{Caps, Completion, Engine, EngineSetup, IoReq, Op};
use std::io;
use std::time::Duration;

/// Completes requests immediately.
#[derive(Default)]
pub struct NullEngine {
    done: Vec<Completion>,
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
        self.done.push(Completion {
            tag: req.tag,
            result,
        });
        Ok(())
    }

    #[inline]
    fn reap(
        &mut self,
        _min: usize,
        _t: Option<Duration>,
        out: &mut Vec<Completion>,
    ) -> io::Result<()> {
        out.append(&mut self.done);
        Ok(())
    }
}
