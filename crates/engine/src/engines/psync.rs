//! psync: one synchronous pread/pwrite per request, the shape of a
//! database's single-block read.

use super::{errno_result, Caps, Completion, Engine, EngineSetup, IoReq, Op};
use std::io;
use std::os::unix::io::RawFd;
use std::time::Duration;

/// Synchronous positional I/O.
pub struct PsyncEngine {
    fds: Vec<RawFd>,
    done: Vec<Completion>,
}

impl PsyncEngine {
    /// An engine over these open file descriptors.
    pub fn new(fds: &[RawFd]) -> PsyncEngine {
        PsyncEngine {
            fds: fds.to_vec(),
            done: Vec::with_capacity(1),
        }
    }
}

impl Engine for PsyncEngine {
    const NAME: &'static str = "psync";
    const CAPS: Caps = Caps::SYNC_IO;

    fn open(setup: &EngineSetup) -> io::Result<PsyncEngine> {
        Ok(PsyncEngine::new(setup.fds))
    }

    #[inline]
    fn queue(&mut self, req: &IoReq) -> io::Result<()> {
        let fd = self.fds[req.file];
        // SAFETY: the caller guarantees buf is valid for len bytes until completion,
        // and completion happens before this call returns.
        let n = unsafe {
            match req.op {
                Op::Read => libc::pread(fd, req.buf.cast(), req.len as usize, req.offset as i64),
                Op::Write => libc::pwrite(fd, req.buf.cast(), req.len as usize, req.offset as i64),
                Op::Fsync => libc::fsync(fd) as isize,
                Op::Fdatasync => libc::fdatasync(fd) as isize,
            }
        };
        self.done.push(Completion {
            tag: req.tag,
            result: errno_result(n),
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
