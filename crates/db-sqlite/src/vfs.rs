//! `iolens-direct`: a SQLite VFS that reads the database and WAL files with
//! O_DIRECT and times every page read.
//!
//! SQLite normally reads through the OS page cache, so a "page cache miss" in
//! SQLite need not reach the device. This VFS wraps the default (unix) VFS:
//! every call is passed through, except reads of the main database file,
//! which go to a second descriptor opened with `O_DIRECT` through an aligned
//! bounce buffer. Each such read is timed into a per-thread histogram (the
//! session's single-block read latency) and counted in process-wide totals
//! (compared with `/proc/diskstats` to prove the reads reached the device).
//! Writes stay buffered (the kernel writes back dirty ranges before a direct
//! read of them, so reads stay coherent). Memory-mapped reads are refused
//! (`xFetch` returns no mapping), so every page goes through `xRead`.

use iolens_core::LatencyHistogram;
use rusqlite::ffi;
use std::alloc::{alloc, dealloc, Layout};
use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;
use std::sync::OnceLock;
use std::time::Instant;

/// Name under which the VFS is registered.
pub const VFS_NAME: &str = "iolens-direct";
const ALIGN: usize = 4096;

/// Direct reads of database and WAL files through this VFS, process-wide.
pub static READS: AtomicU64 = AtomicU64::new(0);
/// Bytes asked for by those reads.
pub static READ_BYTES: AtomicU64 = AtomicU64::new(0);
/// Total time spent in those reads, ns.
pub static READ_NS: AtomicU64 = AtomicU64::new(0);

/// Process-wide I/O counters of the files SQLite opens through this VFS.
#[derive(Debug, Default)]
pub struct Counters {
    /// Of the direct reads, those of WAL files (pages newer than the database file).
    pub wal_reads: AtomicU64,
    /// Writes to main database files (checkpoints), their bytes and time.
    pub db_writes: AtomicU64,
    pub db_write_bytes: AtomicU64,
    pub db_write_ns: AtomicU64,
    /// fsyncs of main database files and their time.
    pub db_syncs: AtomicU64,
    pub db_sync_ns: AtomicU64,
    /// Writes to WAL files, their bytes and time.
    pub wal_writes: AtomicU64,
    pub wal_bytes: AtomicU64,
    pub wal_write_ns: AtomicU64,
    /// fsyncs of WAL files and their time.
    pub wal_syncs: AtomicU64,
    pub wal_sync_ns: AtomicU64,
}

/// The counters of every file opened through the VFS.
pub static COUNTERS: Counters = Counters {
    wal_reads: AtomicU64::new(0),
    db_writes: AtomicU64::new(0),
    db_write_bytes: AtomicU64::new(0),
    db_write_ns: AtomicU64::new(0),
    db_syncs: AtomicU64::new(0),
    db_sync_ns: AtomicU64::new(0),
    wal_writes: AtomicU64::new(0),
    wal_bytes: AtomicU64::new(0),
    wal_write_ns: AtomicU64::new(0),
    wal_syncs: AtomicU64::new(0),
    wal_sync_ns: AtomicU64::new(0),
};

/// What a session thread is doing, for wait sampling (an ASH for SQLite).
pub mod wait {
    /// Not running an operation.
    pub const IDLE: u8 = 0;
    /// Running an operation, not in a VFS call.
    pub const CPU: u8 = 1;
    pub const DATA_FILE_READ: u8 = 2;
    pub const DATA_FILE_WRITE: u8 = 3;
    pub const DATA_FILE_SYNC: u8 = 4;
    pub const WAL_WRITE: u8 = 5;
    pub const WAL_SYNC: u8 = 6;
    pub const WAL_READ: u8 = 7;
    pub const LOCK: u8 = 8;

    /// The event name of a state, in PostgreSQL's `Class:Name` form.
    pub fn name(s: u8) -> Option<&'static str> {
        Some(match s {
            CPU => "CPU",
            DATA_FILE_READ => "IO:DataFileRead",
            DATA_FILE_WRITE => "IO:DataFileWrite",
            DATA_FILE_SYNC => "IO:DataFileSync",
            WAL_WRITE => "IO:WALWrite",
            WAL_SYNC => "IO:WALSync",
            WAL_READ => "IO:WALRead",
            LOCK => "Lock:database",
            _ => return None,
        })
    }
}

thread_local! {
    static THREAD_READS: RefCell<LatencyHistogram> = RefCell::new(LatencyHistogram::new());
    static BOUNCE: RefCell<Bounce> = const { RefCell::new(Bounce { ptr: std::ptr::null_mut(), len: 0 }) };
    static WAIT_STATE: RefCell<Option<Arc<AtomicU8>>> = const { RefCell::new(None) };
}

/// Makes the calling thread report its waits into `state`.
pub fn bind_thread(state: Arc<AtomicU8>) {
    WAIT_STATE.with(|s| *s.borrow_mut() = Some(state));
}

/// Sets the calling thread's wait state (when bound).
pub fn set_state(v: u8) {
    WAIT_STATE.with(|s| {
        if let Some(a) = s.borrow().as_ref() {
            a.store(v, Ordering::Relaxed)
        }
    });
}

/// Runs `f` in wait state `w`, then returns to CPU.
fn waiting<R>(w: u8, f: impl FnOnce() -> R) -> R {
    set_state(w);
    let r = f();
    set_state(wait::CPU);
    r
}

/// Takes (and resets) the calling thread's read-latency histogram.
pub fn take_thread_reads() -> LatencyHistogram {
    THREAD_READS.with(|h| std::mem::take(&mut *h.borrow_mut()))
}

/// Process-wide (reads, bytes, ns) so far.
pub fn totals() -> (u64, u64, u64) {
    (
        READS.load(Ordering::Relaxed),
        READ_BYTES.load(Ordering::Relaxed),
        READ_NS.load(Ordering::Relaxed),
    )
}

struct Bounce {
    ptr: *mut u8,
    len: usize,
}

impl Bounce {
    fn ensure(&mut self, len: usize) -> *mut u8 {
        if self.len < len {
            if !self.ptr.is_null() {
                // SAFETY: allocated below with this layout.
                unsafe { dealloc(self.ptr, Layout::from_size_align(self.len, ALIGN).unwrap()) };
            }
            let l = len.next_power_of_two().max(ALIGN);
            // SAFETY: non-zero size.
            self.ptr = unsafe { alloc(Layout::from_size_align(l, ALIGN).unwrap()) };
            self.len = if self.ptr.is_null() { 0 } else { l };
        }
        self.ptr
    }
}

impl Drop for Bounce {
    fn drop(&mut self) {
        if !self.ptr.is_null() {
            // SAFETY: allocated in ensure() with this layout.
            unsafe { dealloc(self.ptr, Layout::from_size_align(self.len, ALIGN).unwrap()) };
        }
    }
}

/// Our file object: SQLite's base struct first, then the wrapped file.
#[repr(C)]
struct DirectFile {
    base: ffi::sqlite3_file,
    inner: *mut ffi::sqlite3_file,
    /// O_DIRECT descriptor for reads of a main database file, or -1.
    dfd: c_int,
    /// 1: main database, 2: WAL, 0: anything else.
    class: u8,
}

struct VfsState {
    default: *mut ffi::sqlite3_vfs,
}
// SAFETY: the default VFS lives for the whole process
// and SQLite itself calls it from any thread.
unsafe impl Send for VfsState {}
unsafe impl Sync for VfsState {}

static STATE: OnceLock<Result<VfsState, String>> = OnceLock::new();

/// Registers the VFS (once per process). Connections choose it by name
/// ([`VFS_NAME`]); it is not made the default.
pub fn register() -> Result<(), String> {
    STATE
        .get_or_init(|| unsafe {
            let default = ffi::sqlite3_vfs_find(std::ptr::null());
            if default.is_null() {
                return Err("SQLite has no default VFS".into());
            }
            let mut v: ffi::sqlite3_vfs = std::ptr::read(default);
            v.szOsFile = std::mem::size_of::<DirectFile>() as c_int;
            v.zName = CString::new(VFS_NAME).unwrap().into_raw();
            v.pNext = std::ptr::null_mut();
            v.xOpen = Some(x_open);
            let vfs = Box::into_raw(Box::new(v));
            let rc = ffi::sqlite3_vfs_register(vfs, 0);
            if rc != ffi::SQLITE_OK {
                return Err(format!("registering the SQLite VFS failed (code {rc})"));
            }
            Ok(VfsState { default })
        })
        .as_ref()
        .map(|_| ())
        .map_err(|e| e.clone())
}

fn state() -> &'static VfsState {
    STATE
        .get()
        .and_then(|r| r.as_ref().ok())
        .expect("the VFS is registered before use")
}

static METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 3,
    xClose: Some(x_close),
    xRead: Some(x_read),
    xWrite: Some(x_write),
    xTruncate: Some(x_truncate),
    xSync: Some(x_sync),
    xFileSize: Some(x_file_size),
    xLock: Some(x_lock),
    xUnlock: Some(x_unlock),
    xCheckReservedLock: Some(x_check_reserved_lock),
    xFileControl: Some(x_file_control),
    xSectorSize: Some(x_sector_size),
    xDeviceCharacteristics: Some(x_device_characteristics),
    xShmMap: Some(x_shm_map),
    xShmLock: Some(x_shm_lock),
    xShmBarrier: Some(x_shm_barrier),
    xShmUnmap: Some(x_shm_unmap),
    xFetch: Some(x_fetch),
    xUnfetch: Some(x_unfetch),
};

unsafe extern "C" fn x_open(
    _vfs: *mut ffi::sqlite3_vfs,
    name: ffi::sqlite3_filename,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let st = state();
    let df = file as *mut DirectFile;
    (*df).base.pMethods = std::ptr::null();
    (*df).dfd = -1;
    (*df).class = if flags & ffi::SQLITE_OPEN_MAIN_DB != 0 {
        1
    } else if flags & ffi::SQLITE_OPEN_WAL != 0 {
        2
    } else {
        0
    };
    let sz = (*st.default).szOsFile as usize;
    let layout = Layout::from_size_align(sz.max(8), 16).unwrap();
    let inner = alloc(layout) as *mut ffi::sqlite3_file;
    if inner.is_null() {
        return ffi::SQLITE_NOMEM;
    }
    std::ptr::write_bytes(inner as *mut u8, 0, sz);
    let open = (*st.default).xOpen.expect("default VFS has xOpen");
    let rc = open(st.default, name, inner, flags, out_flags);
    if rc != ffi::SQLITE_OK {
        dealloc(inner as *mut u8, layout);
        return rc;
    }
    (*df).inner = inner;
    if flags & (ffi::SQLITE_OPEN_MAIN_DB | ffi::SQLITE_OPEN_WAL) != 0 && !name.is_null() {
        let fd = libc::open(
            name as *const c_char,
            libc::O_RDONLY | libc::O_DIRECT | libc::O_CLOEXEC,
        );
        if fd < 0 {
            let close = (*(*inner).pMethods).xClose.unwrap();
            close(inner);
            dealloc(inner as *mut u8, layout);
            return ffi::SQLITE_CANTOPEN;
        }
        (*df).dfd = fd;
    }
    (*df).base.pMethods = &METHODS;
    ffi::SQLITE_OK
}

unsafe fn inner(
    f: *mut ffi::sqlite3_file,
) -> (*mut ffi::sqlite3_file, &'static ffi::sqlite3_io_methods) {
    let i = (*(f as *mut DirectFile)).inner;
    (i, &*(*i).pMethods)
}

unsafe extern "C" fn x_close(f: *mut ffi::sqlite3_file) -> c_int {
    let df = f as *mut DirectFile;
    if (*df).dfd >= 0 {
        libc::close((*df).dfd);
        (*df).dfd = -1;
    }
    let (i, m) = inner(f);
    let rc = m.xClose.map_or(ffi::SQLITE_OK, |c| c(i));
    let sz = (*state().default).szOsFile as usize;
    dealloc(
        i as *mut u8,
        Layout::from_size_align(sz.max(8), 16).unwrap(),
    );
    rc
}

unsafe extern "C" fn x_read(
    f: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    amt: c_int,
    off: i64,
) -> c_int {
    let dfd = (*(f as *mut DirectFile)).dfd;
    if dfd < 0 {
        let (i, m) = inner(f);
        return m.xRead.unwrap()(i, buf, amt, off);
    }
    let wal = (*(f as *mut DirectFile)).class == 2;
    if wal {
        COUNTERS.wal_reads.fetch_add(1, Ordering::Relaxed);
    }
    let amt = amt as usize;
    let off = off as usize;
    let start = off / ALIGN * ALIGN;
    let end = (off + amt).div_ceil(ALIGN) * ALIGN;
    let len = end - start;
    BOUNCE.with(|b| {
        let mut b = b.borrow_mut();
        let p = b.ensure(len);
        if p.is_null() {
            return ffi::SQLITE_IOERR_NOMEM;
        }
        set_state(if wal {
            wait::WAL_READ
        } else {
            wait::DATA_FILE_READ
        });
        let t = Instant::now();
        let n = libc::pread(dfd, p as *mut c_void, len, start as i64);
        let ns = t.elapsed().as_nanos() as u64;
        set_state(wait::CPU);
        if n < 0 {
            return ffi::SQLITE_IOERR_READ;
        }
        READS.fetch_add(1, Ordering::Relaxed);
        READ_BYTES.fetch_add(amt as u64, Ordering::Relaxed);
        READ_NS.fetch_add(ns, Ordering::Relaxed);
        THREAD_READS.with(|h| h.borrow_mut().record(ns));
        let got = (n as usize).saturating_sub(off - start).min(amt);
        std::ptr::copy_nonoverlapping(p.add(off - start), buf as *mut u8, got);
        if got < amt {
            std::ptr::write_bytes((buf as *mut u8).add(got), 0, amt - got);
            return ffi::SQLITE_IOERR_SHORT_READ;
        }
        ffi::SQLITE_OK
    })
}

macro_rules! pass {
    ($name:ident, $field:ident, ($($arg:ident : $ty:ty),*)) => {
        unsafe extern "C" fn $name(f: *mut ffi::sqlite3_file $(, $arg: $ty)*) -> c_int {
            let (i, m) = inner(f);
            match m.$field {
                Some(func) => func(i $(, $arg)*),
                None => ffi::SQLITE_IOERR,
            }
        }
    };
}

unsafe extern "C" fn x_write(
    f: *mut ffi::sqlite3_file,
    buf: *const c_void,
    amt: c_int,
    off: i64,
) -> c_int {
    let (i, m) = inner(f);
    let w = m.xWrite.expect("inner file has xWrite");
    let (state, n, bytes, time) = match (*(f as *mut DirectFile)).class {
        1 => (
            wait::DATA_FILE_WRITE,
            &COUNTERS.db_writes,
            &COUNTERS.db_write_bytes,
            &COUNTERS.db_write_ns,
        ),
        2 => (
            wait::WAL_WRITE,
            &COUNTERS.wal_writes,
            &COUNTERS.wal_bytes,
            &COUNTERS.wal_write_ns,
        ),
        _ => return w(i, buf, amt, off),
    };
    let t = Instant::now();
    let rc = waiting(state, || w(i, buf, amt, off));
    n.fetch_add(1, Ordering::Relaxed);
    bytes.fetch_add(amt as u64, Ordering::Relaxed);
    time.fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
    rc
}

unsafe extern "C" fn x_sync(f: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    let (i, m) = inner(f);
    let s = m.xSync.expect("inner file has xSync");
    let (state, n, time) = match (*(f as *mut DirectFile)).class {
        1 => (
            wait::DATA_FILE_SYNC,
            &COUNTERS.db_syncs,
            &COUNTERS.db_sync_ns,
        ),
        2 => (wait::WAL_SYNC, &COUNTERS.wal_syncs, &COUNTERS.wal_sync_ns),
        _ => return s(i, flags),
    };
    let t = Instant::now();
    let rc = waiting(state, || s(i, flags));
    n.fetch_add(1, Ordering::Relaxed);
    time.fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
    rc
}
pass!(x_truncate, xTruncate, (size: i64));
pass!(x_file_size, xFileSize, (size: *mut i64));
pass!(x_lock, xLock, (l: c_int));
pass!(x_unlock, xUnlock, (l: c_int));
pass!(x_check_reserved_lock, xCheckReservedLock, (out: *mut c_int));
pass!(x_shm_map, xShmMap, (pg: c_int, sz: c_int, extend: c_int, pp: *mut *mut c_void));
pass!(x_shm_lock, xShmLock, (off: c_int, n: c_int, flags: c_int));
pass!(x_shm_unmap, xShmUnmap, (delete: c_int));

unsafe extern "C" fn x_file_control(
    f: *mut ffi::sqlite3_file,
    op: c_int,
    arg: *mut c_void,
) -> c_int {
    let (i, m) = inner(f);
    m.xFileControl
        .map_or(ffi::SQLITE_NOTFOUND, |c| c(i, op, arg))
}

unsafe extern "C" fn x_sector_size(f: *mut ffi::sqlite3_file) -> c_int {
    let (i, m) = inner(f);
    m.xSectorSize.map_or(4096, |c| c(i))
}

unsafe extern "C" fn x_device_characteristics(f: *mut ffi::sqlite3_file) -> c_int {
    let (i, m) = inner(f);
    m.xDeviceCharacteristics.map_or(0, |c| c(i))
}

unsafe extern "C" fn x_shm_barrier(f: *mut ffi::sqlite3_file) {
    let (i, m) = inner(f);
    if let Some(c) = m.xShmBarrier {
        c(i)
    }
}

/// No memory mapping: every page is read with xRead (and so timed).
unsafe extern "C" fn x_fetch(
    _f: *mut ffi::sqlite3_file,
    _off: i64,
    _amt: c_int,
    pp: *mut *mut c_void,
) -> c_int {
    *pp = std::ptr::null_mut();
    ffi::SQLITE_OK
}

unsafe extern "C" fn x_unfetch(_f: *mut ffi::sqlite3_file, _off: i64, _p: *mut c_void) -> c_int {
    ffi::SQLITE_OK
}

/// The name SQLite reports for a connection's VFS (for checks in tests).
pub fn vfs_name(conn: &rusqlite::Connection) -> Option<String> {
    // SAFETY: the handle is valid while `conn` lives; we only read the name.
    unsafe {
        let mut vfs: *mut ffi::sqlite3_vfs = std::ptr::null_mut();
        let rc = ffi::sqlite3_file_control(
            conn.handle(),
            c"main".as_ptr(),
            ffi::SQLITE_FCNTL_VFS_POINTER,
            &mut vfs as *mut _ as *mut c_void,
        );
        if rc != ffi::SQLITE_OK || vfs.is_null() {
            return None;
        }
        Some(CStr::from_ptr((*vfs).zName).to_string_lossy().into_owned())
    }
}
