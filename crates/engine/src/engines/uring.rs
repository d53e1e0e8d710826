//! io_uring: `depth` requests in flight per worker on registered files and
//! buffers when the kernel allows them. Requests are handed to the kernel as
//! soon as `submit_batch` of them are queued (default 1, like fio's
//! `iodepth_batch_submit`: a steady stream keeps virtualized and NVMe queues
//! busiest); completions are reaped in batches.

use super::{Caps, Completion, Engine, EngineSetup, IoReq, Op};
use io_uring::{opcode, squeue, types, IoUring};
use serde::Serialize;
use std::io;
use std::time::Duration;

/// io_uring's own options (`config` in result.json keeps them at the top
/// level, next to the shared ones).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UringOptions {
    /// Submit once this many requests are queued (1 = each at once).
    pub submit_batch: u32,
}

impl Default for UringOptions {
    fn default() -> Self {
        UringOptions { submit_batch: 1 }
    }
}

impl UringOptions {
    /// Checks the options against the queue depth `qd`.
    pub fn validate(&self, qd: u32) -> Result<(), String> {
        if self.submit_batch == 0 || self.submit_batch > qd {
            return Err(format!(
                "--submit-batch {} must be 1..--qd ({})",
                self.submit_batch, qd
            ));
        }
        Ok(())
    }
}

/// An io_uring instance owned by one worker.
pub struct UringEngine {
    ring: IoUring,
    fds: Vec<i32>,
    fixed_files: bool,
    fixed_bufs: bool,
    queued: usize,
    submit_batch: usize,
}

impl UringEngine {
    /// Sets up a ring for `setup.depth` requests. Tries the single-issuer,
    /// deferred-task-run setup first (fewer interrupts), then a plain ring.
    fn new(setup: &EngineSetup) -> io::Result<UringEngine> {
        let entries = setup.depth.next_power_of_two().max(8);
        let ring = IoUring::builder()
            .setup_single_issuer()
            .setup_defer_taskrun()
            .build(entries)
            .or_else(|_| IoUring::builder().setup_coop_taskrun().build(entries))
            .or_else(|_| IoUring::new(entries))?;
        let fixed_files = ring.submitter().register_files(setup.fds).is_ok();
        let iovecs: Vec<libc::iovec> = setup
            .buffers
            .iter()
            .map(|&(p, len)| libc::iovec {
                iov_base: p.cast(),
                iov_len: len,
            })
            .collect();
        // SAFETY: the buffers belong to the worker, which outlives this engine
        // (it drops the engine before the buffers) and never moves them.
        let fixed_bufs = !iovecs.is_empty()
            && iovecs.len() <= u16::MAX as usize
            && unsafe { ring.submitter().register_buffers(&iovecs) }.is_ok();
        Ok(UringEngine {
            ring,
            fds: setup.fds.to_vec(),
            fixed_files,
            fixed_bufs,
            queued: 0,
            submit_batch: setup.spec.uring.submit_batch.max(1) as usize,
        })
    }

    fn entry(&self, req: &IoReq) -> squeue::Entry {
        macro_rules! with_fd {
            ($build:expr) => {
                if self.fixed_files {
                    $build(types::Fixed(req.file as u32)).build()
                } else {
                    $build(types::Fd(self.fds[req.file])).build()
                }
            };
        }
        let e = match req.op {
            Op::Read if self.fixed_bufs => {
                with_fd!(
                    |fd| opcode::ReadFixed::new(fd, req.buf, req.len, req.buf_index)
                        .offset(req.offset)
                )
            }
            Op::Read => with_fd!(|fd| opcode::Read::new(fd, req.buf, req.len).offset(req.offset)),
            Op::Write if self.fixed_bufs => {
                with_fd!(
                    |fd| opcode::WriteFixed::new(fd, req.buf, req.len, req.buf_index)
                        .offset(req.offset)
                )
            }
            Op::Write => with_fd!(|fd| opcode::Write::new(fd, req.buf, req.len).offset(req.offset)),
            Op::Fsync => with_fd!(opcode::Fsync::new),
            Op::Fdatasync => {
                with_fd!(|fd| opcode::Fsync::new(fd).flags(types::FsyncFlags::DATASYNC))
            }
        };
        e.user_data(req.tag as u64)
    }
}

impl Engine for UringEngine {
    const NAME: &'static str = "io_uring";
    const CAPS: Caps = Caps::REGISTERS_BUFFERS.with(Caps::SUBMIT_BATCH);

    fn open(setup: &EngineSetup) -> io::Result<UringEngine> {
        UringEngine::new(setup)
    }

    fn probe() -> io::Result<()> {
        IoUring::new(8).map(drop)
    }

    fn setup_error(e: &io::Error) -> String {
        format!(
            "io_uring is not available here ({e}): the kernel lacks it or it is disabled (sysctl kernel.io_uring_disabled); use --engine psync"
        )
    }

    #[inline]
    fn queue(&mut self, req: &IoReq) -> io::Result<()> {
        let e = self.entry(req);
        loop {
            // SAFETY: the entry's buffer stays valid and untouched until its
            // completion is reaped (the worker keeps the slot busy until then).
            if unsafe { self.ring.submission().push(&e) }.is_ok() {
                self.queued += 1;
                if self.queued >= self.submit_batch {
                    self.ring.submit()?;
                    self.queued = 0;
                }
                return Ok(());
            }
            self.ring.submit()?; // submission queue full: hand it to the kernel
            self.queued = 0;
        }
    }

    fn reap(
        &mut self,
        min: usize,
        timeout: Option<Duration>,
        out: &mut Vec<Completion>,
    ) -> io::Result<()> {
        let r = match timeout {
            Some(t) if min > 0 => {
                let ts = types::Timespec::new()
                    .sec(t.as_secs())
                    .nsec(t.subsec_nanos());
                let args = types::SubmitArgs::new().timespec(&ts);
                self.ring.submitter().submit_with_args(min, &args)
            }
            _ => self.ring.submit_and_wait(min),
        };
        match r {
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ETIME) | Some(libc::EINTR) | Some(libc::EBUSY)
                ) => {}
            Err(e) => return Err(e),
        }
        self.queued = 0;
        for cqe in self.ring.completion() {
            out.push(Completion {
                tag: cqe.user_data() as u32,
                result: cqe.result(),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{file_with, request};
    use super::*;
    use crate::spec::JobSpec;
    use std::os::unix::io::AsRawFd;

    #[test]
    fn batches_of_reads_complete_with_their_tags() {
        if let Err(e) = UringEngine::probe() {
            eprintln!("skipped: io_uring is not available here ({e})");
            return;
        }
        let content: Vec<u8> = (0..16384u32).map(|i| (i / 4096) as u8).collect();
        let f = file_with(&content);
        let mut bufs = vec![vec![0u8; 4096]; 4];
        let iovecs: Vec<(*mut u8, usize)> =
            bufs.iter_mut().map(|b| (b.as_mut_ptr(), 4096)).collect();
        let spec = JobSpec {
            uring: UringOptions { submit_batch: 2 },
            ..Default::default()
        };
        let setup = EngineSetup {
            fds: &[f.as_file().as_raw_fd()],
            depth: 4,
            buffers: &iovecs,
            spec: &spec,
        };
        let mut e = UringEngine::open(&setup).unwrap();
        for (i, &(buf, _)) in iovecs.iter().enumerate() {
            let mut r = request(Op::Read, i as u64 * 4096, buf, 4096);
            r.tag = i as u32;
            r.buf_index = i as u16;
            e.queue(&r).unwrap();
        }
        let mut out = Vec::new();
        while out.len() < 4 {
            e.reap(4 - out.len(), None, &mut out).unwrap();
        }
        out.sort_by_key(|c| c.tag);
        assert!(out.iter().all(|c| c.result == 4096), "{out:?}");
        drop(e);
        for (i, b) in bufs.iter().enumerate() {
            assert!(b.iter().all(|&x| x == i as u8));
        }
    }

    #[test]
    fn submit_batch_is_checked_against_the_depth() {
        assert!(UringOptions { submit_batch: 4 }.validate(4).is_ok());
        assert!(UringOptions { submit_batch: 0 }.validate(4).is_err());
        assert!(UringOptions { submit_batch: 5 }.validate(4).is_err());
    }
}
