//! I/O engines behind one small trait, each in its own file.
//!
//! An engine takes requests ([`Engine::queue`]) and hands back completions
//! ([`Engine::reap`]). Synchronous engines do the I/O inside `queue`; the
//! io_uring engine only prepares it and submits a whole batch in `reap`.
//! Measurement lives in the worker around the engine, not in the engines.
//!
//! Each engine declares what it can do as [`Caps`] (fio's `FIO_SYNCIO`…
//! flags); job validation and the calibration planners ask the capabilities,
//! never the engine's name. [`dispatch`] is the one place that maps an
//! [`EngineKind`] to its engine type: a new engine is one file here and one
//! arm there. The worker stays generic over the engine, so the per-I/O calls
//! are static.

mod fault;
mod null;
mod psync;
mod uring;

pub use fault::{parse_errno, FaultDelay, FaultEngine, FaultOptions, FaultWhen};
pub use null::NullEngine;
pub use psync::PsyncEngine;
pub use uring::{UringEngine, UringOptions};

use crate::spec::{EngineKind, JobSpec};
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

impl Op {
    /// The operation in words, as error messages name it.
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Fsync => "fsync",
            Op::Fdatasync => "fdatasync",
        }
    }
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

/// The finished requests of a synchronous engine: the I/O is done inside
/// `queue`, and the next `reap` hands the completions over.
#[derive(Debug, Default)]
pub(crate) struct Finished(Vec<Completion>);

impl Finished {
    /// Room for `n` completions.
    pub(crate) fn with_capacity(n: usize) -> Finished {
        Finished(Vec::with_capacity(n))
    }

    /// Records the request `tag` as done with `result`.
    #[inline]
    pub(crate) fn record(&mut self, tag: u32, result: i32) -> io::Result<()> {
        self.0.push(Completion { tag, result });
        Ok(())
    }

    /// Moves every recorded completion to `out`.
    #[inline]
    pub(crate) fn hand_over(&mut self, out: &mut Vec<Completion>) -> io::Result<()> {
        out.append(&mut self.0);
        Ok(())
    }
}

/// What an engine can do, as flags (fio's ioengine flags).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps(u8);

impl Caps {
    /// Nothing special.
    pub const NONE: Caps = Caps(0);
    /// One I/O in flight per worker: the I/O is done inside `queue`
    /// (fio's `FIO_SYNCIO`). More outstanding I/Os need more workers.
    pub const SYNC_IO: Caps = Caps(1);
    /// Touches no storage: runs without targets and measures only the tool
    /// (fio's `FIO_DISKLESSIO`).
    pub const NO_STORAGE: Caps = Caps(1 << 1);
    /// Registers the worker's buffers with the kernel.
    pub const REGISTERS_BUFFERS: Caps = Caps(1 << 2);
    /// Hands queued requests over in batches of `--submit-batch`.
    pub const SUBMIT_BATCH: Caps = Caps(1 << 3);
    /// Injects the faults of [`FaultOptions`].
    pub const INJECTS_FAULTS: Caps = Caps(1 << 4);

    /// Both sets of flags.
    pub const fn with(self, other: Caps) -> Caps {
        Caps(self.0 | other.0)
    }

    /// Whether every flag of `other` is set.
    pub const fn has(self, other: Caps) -> bool {
        self.0 & other.0 == other.0
    }
}

/// What a worker hands an engine when it builds it.
pub struct EngineSetup<'a> {
    pub fds: &'a [RawFd],
    /// Requests in flight at most.
    pub depth: u32,
    /// The worker's buffers, one per slot, for engines with
    /// [`Caps::REGISTERS_BUFFERS`] (empty for the others).
    pub buffers: &'a [(*mut u8, usize)],
    /// The job, whose engine options ([`JobSpec::uring`], [`JobSpec::fault`])
    /// the engine reads.
    pub spec: &'a JobSpec,
}

/// The operations every engine provides.
pub trait Engine: Sized {
    /// The name the user types (`--engine NAME`) and result.json records.
    const NAME: &'static str;
    /// What the engine can do.
    const CAPS: Caps;

    /// Builds one worker's engine.
    fn open(setup: &EngineSetup) -> io::Result<Self>;

    /// Checks once per job, before any worker starts, that the engine can
    /// run here.
    fn probe() -> io::Result<()> {
        Ok(())
    }

    /// The message for a failed [`Engine::probe`] or [`Engine::open`],
    /// saying what to do instead.
    fn setup_error(e: &io::Error) -> String {
        format!("setting up the {} engine: {e}", Self::NAME)
    }

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

/// Code that runs with the engine type an [`EngineKind`] names, compiled once
/// per engine (no virtual call per I/O).
pub trait WithEngine {
    type Out;
    fn call<E: Engine>(self) -> Self::Out;
}

/// Runs `f` with the engine type of `kind`: the registry of engines.
pub fn dispatch<F: WithEngine>(kind: EngineKind, f: F) -> F::Out {
    match kind {
        EngineKind::Psync => f.call::<PsyncEngine>(),
        EngineKind::IoUring => f.call::<UringEngine>(),
        EngineKind::Null => f.call::<NullEngine>(),
        EngineKind::Fault => f.call::<FaultEngine<NullEngine>>(),
    }
}

impl EngineKind {
    /// What this engine can do.
    pub fn caps(self) -> Caps {
        struct Get;
        impl WithEngine for Get {
            type Out = Caps;
            fn call<E: Engine>(self) -> Caps {
                E::CAPS
            }
        }
        dispatch(self, Get)
    }

    /// The engine's name (`--engine NAME`).
    pub fn name(self) -> &'static str {
        struct Get;
        impl WithEngine for Get {
            type Out = &'static str;
            fn call<E: Engine>(self) -> &'static str {
                E::NAME
            }
        }
        dispatch(self, Get)
    }

    /// Whether the engine keeps one I/O in flight per worker.
    pub fn sync_io(self) -> bool {
        self.caps().has(Caps::SYNC_IO)
    }

    /// Whether the engine touches no storage (runs without targets).
    pub fn no_storage(self) -> bool {
        self.caps().has(Caps::NO_STORAGE)
    }

    /// [`Engine::probe`] of this engine, with its message on failure.
    pub fn probe(self) -> Result<(), String> {
        struct Probe;
        impl WithEngine for Probe {
            type Out = Result<(), String>;
            fn call<E: Engine>(self) -> Result<(), String> {
                E::probe().map_err(|e| E::setup_error(&e))
            }
        }
        dispatch(self, Probe)
    }
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

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Write;

    /// A request on file 0 with tag 0.
    pub(crate) fn request(op: Op, offset: u64, buf: *mut u8, len: u32) -> IoReq {
        IoReq {
            op,
            file: 0,
            offset,
            len,
            buf,
            buf_index: 0,
            tag: 0,
        }
    }

    /// A temporary file holding `content`.
    pub(crate) fn file_with(content: &[u8]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(content).unwrap();
        f.flush().unwrap();
        f
    }

    #[test]
    fn capabilities_are_declared_by_each_engine() {
        assert!(EngineKind::Psync.sync_io());
        assert!(!EngineKind::IoUring.sync_io());
        assert!(EngineKind::Null.no_storage());
        assert!(EngineKind::Fault.no_storage());
        assert!(!EngineKind::Psync.no_storage());
        assert!(EngineKind::IoUring
            .caps()
            .has(Caps::REGISTERS_BUFFERS.with(Caps::SUBMIT_BATCH)));
        assert!(EngineKind::Fault.caps().has(Caps::INJECTS_FAULTS));
        assert!(!EngineKind::Null.caps().has(Caps::INJECTS_FAULTS));
        assert!(Caps::NONE.has(Caps::NONE));
    }

    #[test]
    fn names_match_the_serialized_kinds() {
        for k in [
            EngineKind::Psync,
            EngineKind::IoUring,
            EngineKind::Null,
            EngineKind::Fault,
        ] {
            let json = serde_json::to_string(&k).unwrap();
            assert_eq!(json, format!("\"{}\"", k.name()));
            assert_eq!(k.to_string(), k.name());
        }
    }
}
