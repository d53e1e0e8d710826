//! I/O engines behind one small trait.
//!
//! An engine takes requests ([`Engine::queue`]) and hands back completions
//! ([`Engine::reap`]). Synchronous engines do the I/O inside `queue`; the
//! io_uring engine only prepares it and submits a whole batch in `reap`.
//! Measurement lives in the worker around the engine, not in the engines.

mod null;
mod psync;
mod uring;

pub use null::NullEngine;
pub use psync::PsyncEngine;
pub use uring::UringEngine;

use std::io;
use std::os::unix::io::RawFd;
use std::time::Duration;

/// What one request does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    Fsync,
    Fdatasync,
}

/// One I/O request. `buf` stays valid and untouched by the caller until the
/// request's completion has been reaped.
#[derive(Clone, Copy, Debug)]
pub struct IoReq {
    pub op: Op,
    /// Index of the target (file descriptor) in the engine's file table.
    pub file: usize,
    pub offset: u64,
    pub len: u32,
    pub buf: *mut u8,
    /// Index of the registered buffer that holds `buf`.
    pub buf_index: u16,
    /// Caller's tag, returned in the completion.
    pub tag: u32,
}

/// A finished request: bytes transferred, or a negative errno.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    pub tag: u32,
    pub result: i32,
}

/// The operations every engine provides.
pub trait Engine {
    /// Starts a request (synchronous engines finish it here).
    fn queue(&mut self, req: &IoReq) -> io::Result<()>;
    /// Submits what is queued and collects completions, waiting for at least
    /// `min` of them, or until `timeout` when one is given.
    fn reap(
        &mut self,
        min: usize,
        timeout: Option<Duration>,
        out: &mut Vec<Completion>,
    ) -> io::Result<()>;
}

/// Which engine to build, with what it needs.
pub struct EngineSetup<'a> {
    pub fds: &'a [RawFd],
    pub depth: u32,
    /// The worker's buffers, one per slot, for registration.
    pub buffers: &'a [(*mut u8, usize)],
    /// Queued requests that trigger a submission system call.
    pub submit_batch: u32,
}

#[inline]
fn errno_result(n: isize) -> i32 {
    if n < 0 {
        -io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO)
    } else {
        n as i32
    }
}
