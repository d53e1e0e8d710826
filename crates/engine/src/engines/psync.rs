//! psync: one synchronous pread/pwrite per request, the shape of a
//! database's single-block read.

use super::{errno_result, Caps, Completion, Engine, EngineSetup, Finished, IoReq, Op};
use std::io;
use std::os::unix::io::RawFd;
use std::time::Duration;

/// Synchronous positional I/O.
pub struct PsyncEngine {
    fds: Vec<RawFd>,
    done: Finished,
}

impl PsyncEngine {
    /// An engine over these open file descriptors.
    pub fn new(fds: &[RawFd]) -> PsyncEngine {
        PsyncEngine {
            fds: fds.to_vec(),
            done: Finished::with_capacity(1),
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
        self.done.record(req.tag, errno_result(n))
    }

    #[inline]
    fn reap(&mut self, _: usize, _: Option<Duration>, out: &mut Vec<Completion>) -> io::Result<()> {
        self.done.hand_over(out)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{file_with, request};
    use super::*;
    use std::os::unix::io::AsRawFd;

    fn one(e: &mut PsyncEngine, req: &IoReq) -> i32 {
        e.queue(req).unwrap();
        let mut out = Vec::new();
        e.reap(1, None, &mut out).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].tag, req.tag);
        out[0].result
    }

    #[test]
    fn reads_what_was_written_and_reports_a_short_read_at_the_end() {
        let f = file_with(&[0u8; 8192]);
        let mut e = PsyncEngine::new(&[f.as_file().as_raw_fd()]);
        let mut data = vec![7u8; 4096];
        let w = request(Op::Write, 4096, data.as_mut_ptr(), 4096);
        assert_eq!(one(&mut e, &w), 4096);
        let mut back = vec![0u8; 4096];
        assert_eq!(
            one(&mut e, &request(Op::Read, 4096, back.as_mut_ptr(), 4096)),
            4096
        );
        assert_eq!(back, data);
        // 4 KiB asked for, 2 KiB left before the end of the file.
        let r = request(Op::Read, 6144, back.as_mut_ptr(), 4096);
        assert_eq!(one(&mut e, &r), 2048);
        assert_eq!(
            one(&mut e, &request(Op::Fsync, 0, std::ptr::null_mut(), 0)),
            0
        );
    }

    #[test]
    fn an_error_comes_back_as_a_negative_errno() {
        let mut e = PsyncEngine::new(&[-1]);
        let mut buf = vec![0u8; 512];
        let r = request(Op::Read, 0, buf.as_mut_ptr(), 512);
        assert_eq!(one(&mut e, &r), -libc::EBADF);
    }
}
