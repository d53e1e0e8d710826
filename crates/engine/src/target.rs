//! Opening targets safely and mapping the job's address space onto them.
//!
//! Safety rules: a missing file is created and fully written (never sparse);
//! an existing file iolens did not create is only read unless the user gives
//! `--allow-overwrite`; a block device is only read unless the user gives
//! `--allow-destroy`, and is never written while it (or a partition) is
//! mounted, used as swap or held by another device. Files iolens creates carry
//! the extended attribute `user.iolens.owner`.

use crate::rng::Rng;
use crate::spec::{JobSpec, Layout};
use iolens_core::units::human_bytes;
use iolens_core::ByteSize;
use iolens_probe::{device_of_path, BlockDevice};
use std::ffi::CString;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

const OWNER_XATTR: &str = "user.iolens.owner";

/// Errors opening targets: all are the user's to fix (exit code 2).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct TargetError(pub String);

fn terr(s: impl Into<String>) -> TargetError {
    TargetError(s.into())
}

/// What a target is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetKind {
    File,
    BlockDevice,
}

/// One opened target.
#[derive(Debug)]
pub struct Target {
    pub path: PathBuf,
    pub kind: TargetKind,
    pub file: File,
    /// First byte of the region used.
    pub base: u64,
    /// Length of the region used.
    pub len: u64,
    /// Size of the whole file or device.
    pub total_size: u64,
    pub device: Option<BlockDevice>,
    /// Whether this run created the file.
    pub created: bool,
}

/// The opened targets and how they form one address space.
#[derive(Debug)]
pub struct TargetSet {
    pub targets: Vec<Target>,
    pub layout: Layout,
    pub stripe: u64,
    /// Length of the combined address space, bytes.
    pub len: u64,
    /// Alignment every direct I/O offset and length must have.
    pub align: u64,
}

fn is_owned(f: &File) -> bool {
    let name = CString::new(OWNER_XATTR).unwrap();
    let mut buf = [0u8; 16];
    // SAFETY: the buffer is valid for its length; the fd is open.
    let n = unsafe {
        libc::fgetxattr(
            f.as_raw_fd(),
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    n > 0
}

fn mark_owned(f: &File) {
    let name = CString::new(OWNER_XATTR).unwrap();
    let v = b"iolens";
    // SAFETY: as above. Failure (no xattr support) only means a later run
    // will need --allow-overwrite to write the file.
    unsafe {
        libc::fsetxattr(f.as_raw_fd(), name.as_ptr(), v.as_ptr().cast(), v.len(), 0);
    }
}

fn io_msg(path: &Path, what: &str, e: &io::Error) -> TargetError {
    match e.raw_os_error() {
        Some(libc::EACCES) | Some(libc::EPERM) => terr(format!(
            "permission denied {what} {}: run as a user who may access it, or choose another --target",
            path.display()
        )),
        Some(libc::ENOSPC) => terr(format!(
            "no space left on the filesystem of {} while {what} it; free space or use a smaller --size",
            path.display()
        )),
        Some(libc::EROFS) => terr(format!("{} is on a read-only filesystem; choose another --target", path.display())),
        _ => terr(format!("{what} {}: {e}", path.display())),
    }
}

/// Creates `path` with `size` bytes of incompressible data, written through
/// to the device (never sparse).
fn create_file(path: &Path, size: u64) -> Result<File, TargetError> {
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !parent.is_dir() {
        return Err(terr(format!(
            "cannot create {}: directory {} does not exist",
            path.display(),
            parent.display()
        )));
    }
    if let Some(free) = iolens_probe::free_bytes(parent) {
        if free < size {
            return Err(terr(format!(
                "not enough space to create {} ({}): {} free on that filesystem; use a smaller --size",
                path.display(),
                human_bytes(size),
                human_bytes(free)
            )));
        }
    }
    let mut f = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| io_msg(path, "creating", &e))?;
    let mut fill = || -> io::Result<()> {
        let mut rng = Rng::new(size, 0xF111);
        let mut buf = vec![0u8; 1 << 20];
        let mut left = size;
        while left > 0 {
            if iolens_core::interrupt::requested() {
                return Err(io::Error::new(io::ErrorKind::Interrupted, "interrupted"));
            }
            let n = left.min(buf.len() as u64) as usize;
            rng.fill(&mut buf[..n]);
            f.write_all(&buf[..n])?;
            left -= n as u64;
        }
        f.sync_all()?;
        // Drop the pages we just wrote so the first reads go to the device.
        // SAFETY: plain advice on an open fd.
        unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
        mark_owned(&f);
        Ok(())
    };
    if let Err(e) = fill() {
        drop(f);
        let _ = fs::remove_file(path);
        return Err(io_msg(path, "filling", &e));
    }
    Ok(f)
}

fn open_rw(path: &Path, write: bool, direct: bool, excl: bool) -> io::Result<File> {
    let mut flags = 0;
    if direct {
        flags |= libc::O_DIRECT;
    }
    if excl {
        flags |= libc::O_EXCL;
    }
    OpenOptions::new()
        .read(true)
        .write(write)
        .custom_flags(flags)
        .open(path)
}

/// One aligned read at the start of the region, to learn whether direct I/O
/// really works there (some filesystems accept O_DIRECT at open but not at read).
fn probe_direct(f: &File, base: u64, align: u64) -> io::Result<()> {
    let buf = crate::buffers::AlignedBuf::new(align as usize, align as usize);
    // SAFETY: buf is valid for align bytes.
    let n = unsafe { libc::pread(f.as_raw_fd(), buf.ptr().cast(), align as usize, base as i64) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

impl TargetSet {
    /// Opens (creating when missing) every target of `spec`, applying the safety rules.
    pub fn open(spec: &JobSpec) -> Result<TargetSet, TargetError> {
        let write = spec.rw.writes();
        let mut targets = Vec::new();
        for path in &spec.targets {
            targets.push(open_one(spec, path, write)?);
        }
        let mut align = 1;
        if spec.direct {
            align = 4096;
            for t in &targets {
                if let Some(d) = &t.device {
                    align = align.max(d.logical_block_size());
                }
            }
            let check = |what: &str, v: u64| -> Result<(), TargetError> {
                if !v.is_multiple_of(align) {
                    Err(terr(format!(
                        "{what} {} is not a multiple of {align} bytes, which direct I/O needs here; use a multiple of {} (e.g. --bs 8k) or add --buffered",
                        ByteSize(v),
                        ByteSize(align)
                    )))
                } else {
                    Ok(())
                }
            };
            for (bs, _) in spec.sizes() {
                check("--bs", bs)?;
            }
            check("--offset", spec.offset)?;
            if let Some(s) = spec.size {
                check("--size", s)?;
            }
            for t in &targets {
                if let Err(e) = probe_direct(&t.file, t.base, align) {
                    let fix = if e.raw_os_error() == Some(libc::EINVAL) {
                        "the filesystem does not support O_DIRECT; add --buffered or put the target on another filesystem"
                    } else {
                        "check the target"
                    };
                    return Err(terr(format!(
                        "direct I/O on {} failed ({e}): {fix}",
                        t.path.display()
                    )));
                }
            }
        }
        let max_bs = spec.max_bs();
        let len = match spec.layout {
            Layout::Concat => targets.iter().map(|t| t.len).sum(),
            Layout::Raid0 => {
                let per =
                    targets.iter().map(|t| t.len).min().unwrap_or(0) / spec.stripe * spec.stripe;
                if per == 0 {
                    return Err(terr(format!(
                        "the region of each target is smaller than one --stripe ({}); use a larger --size or a smaller --stripe",
                        ByteSize(spec.stripe)
                    )));
                }
                per * targets.len() as u64
            }
        };
        for t in &targets {
            if t.len < max_bs {
                return Err(terr(format!(
                    "target {} is too small: its region holds {} but one I/O is {}; use a larger --size or smaller --bs",
                    t.path.display(),
                    human_bytes(t.len),
                    ByteSize(max_bs)
                )));
            }
        }
        Ok(TargetSet {
            targets,
            layout: spec.layout,
            stripe: spec.stripe,
            len,
            align,
        })
    }

    /// An empty set, for the null engine without targets.
    pub fn none(len: u64) -> TargetSet {
        TargetSet {
            targets: Vec::new(),
            layout: Layout::Concat,
            stripe: 1 << 20,
            len,
            align: 1,
        }
    }

    /// Maps a logical offset of an I/O of `len` bytes to (target index, offset
    /// in that target's file). Concat I/Os that would cross the end of a target
    /// are moved back to end there.
    #[inline]
    pub fn map(&self, logical: u64, len: u64) -> (usize, u64) {
        if self.targets.is_empty() {
            return (0, logical);
        }
        match self.layout {
            Layout::Concat => {
                let mut off = logical;
                for (i, t) in self.targets.iter().enumerate() {
                    if off < t.len {
                        let o = if off + len > t.len { t.len - len } else { off };
                        return (i, t.base + o);
                    }
                    off -= t.len;
                }
                let last = self.targets.len() - 1;
                let t = &self.targets[last];
                (last, t.base + t.len - len)
            }
            Layout::Raid0 => map_raid0(logical, self.stripe, self.targets.len() as u64, |i| {
                self.targets[i].base
            }),
        }
    }
}

/// raid0: stripe s of the logical space lives on target s mod n, at stripe row s / n.
#[inline]
pub fn map_raid0(logical: u64, stripe: u64, n: u64, base: impl Fn(usize) -> u64) -> (usize, u64) {
    let s = logical / stripe;
    let t = (s % n) as usize;
    (t, base(t) + (s / n) * stripe + logical % stripe)
}

/// What opening a path gave: its kind, the open file, its whole size and
/// whether iolens created it.
type Opened = (TargetKind, File, u64, bool);

fn open_one(spec: &JobSpec, path: &Path, write: bool) -> Result<Target, TargetError> {
    let md = match fs::metadata(path) {
        Ok(m) => Some(m),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(io_msg(path, "reading", &e)),
    };
    let (kind, file, total_size, created) = match md {
        None => create_target_file(spec, path, write)?,
        Some(m) if m.file_type().is_block_device() => open_block_device(spec, path, write)?,
        Some(m) if m.is_file() => open_existing_file(spec, path, write, m.len())?,
        Some(_) => {
            return Err(terr(format!(
                "target {} is neither a regular file nor a block device",
                path.display()
            )))
        }
    };
    let len = region_len(spec, path, total_size)?;
    Ok(Target {
        path: path.to_path_buf(),
        kind,
        file,
        base: spec.offset,
        len,
        total_size,
        device: device_of_path(path),
        created,
    })
}

/// A missing target: created with `--offset` + `--size` bytes.
fn create_target_file(spec: &JobSpec, path: &Path, write: bool) -> Result<Opened, TargetError> {
    let size = spec.size.ok_or_else(|| {
        terr(format!(
            "target {} does not exist; give --size to create it (e.g. --size 1g)",
            path.display()
        ))
    })?;
    drop(create_file(path, spec.offset + size)?);
    let f = open_rw(path, write, spec.direct, false).map_err(|e| io_msg(path, "opening", &e))?;
    Ok((TargetKind::File, f, spec.offset + size, true))
}

/// A block device: written only with `--allow-destroy` and never while in use.
fn open_block_device(spec: &JobSpec, path: &Path, write: bool) -> Result<Opened, TargetError> {
    let dev = device_of_path(path);
    if write {
        if !spec.allow_destroy {
            return Err(terr(format!(
                "writing to block device {} destroys its data; add --allow-destroy if that is what you want",
                path.display()
            )));
        }
        if let Some(why) = dev.as_ref().and_then(|d| d.in_use()) {
            return Err(terr(format!(
                "refusing to write to {}: {why}",
                path.display()
            )));
        }
    }
    // O_EXCL on a block device fails with EBUSY while it is mounted.
    let f = open_rw(path, write, spec.direct, write).map_err(|e| {
        if e.raw_os_error() == Some(libc::EBUSY) {
            terr(format!(
                "refusing to write to {}: the device is busy (mounted or held)",
                path.display()
            ))
        } else {
            io_msg(path, "opening", &e)
        }
    })?;
    let size = dev.as_ref().map_or(0, |d| d.size_bytes());
    Ok((TargetKind::BlockDevice, f, size, false))
}

/// An existing file of `size` bytes: written only when iolens created it or
/// with `--allow-overwrite`.
fn open_existing_file(
    spec: &JobSpec,
    path: &Path,
    write: bool,
    size: u64,
) -> Result<Opened, TargetError> {
    let f = open_rw(path, write, spec.direct, false).map_err(|e| io_msg(path, "opening", &e))?;
    if write && !spec.allow_overwrite && !is_owned(&f) {
        return Err(terr(format!(
            "{} exists and was not created by iolens; writing would destroy its contents: add --allow-overwrite, or name a new file",
            path.display()
        )));
    }
    Ok((TargetKind::File, f, size, false))
}

/// Length of the region used: `--size`, or all from `--offset` to the end.
fn region_len(spec: &JobSpec, path: &Path, total_size: u64) -> Result<u64, TargetError> {
    if spec.offset >= total_size {
        return Err(terr(format!(
            "--offset {} is beyond the end of {} ({})",
            ByteSize(spec.offset),
            path.display(),
            human_bytes(total_size)
        )));
    }
    let avail = total_size - spec.offset;
    match spec.size {
        Some(s) if s > avail => Err(terr(format!(
            "target {} is too small: {} from --offset, --size asks for {}; use --size {} or less, or another target",
            path.display(),
            human_bytes(avail),
            human_bytes(s),
            ByteSize(avail)
        ))),
        Some(s) => Ok(s),
        None => Ok(avail),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raid0_places_stripes_round_robin() {
        let base = |_| 0;
        let st = 1 << 20;
        assert_eq!(map_raid0(0, st, 3, base), (0, 0));
        assert_eq!(map_raid0(st, st, 3, base), (1, 0));
        assert_eq!(map_raid0(2 * st + 4096, st, 3, base), (2, 4096));
        assert_eq!(map_raid0(3 * st, st, 3, base), (0, st));
        assert_eq!(
            map_raid0(7 * st + 8192, st, 3, |i| i as u64 * 100),
            (1, 100 + 2 * st + 8192)
        );
    }

    fn set(lens: &[u64]) -> TargetSet {
        let targets = lens
            .iter()
            .map(|&len| Target {
                path: "/dev/null".into(),
                kind: TargetKind::File,
                file: File::open("/dev/null").unwrap(),
                base: 4096,
                len,
                total_size: len + 4096,
                device: None,
                created: false,
            })
            .collect();
        TargetSet {
            targets,
            layout: Layout::Concat,
            stripe: 1 << 20,
            len: lens.iter().sum(),
            align: 4096,
        }
    }

    #[test]
    fn concat_places_targets_end_to_end() {
        let s = set(&[16384, 8192]);
        assert_eq!(s.map(0, 4096), (0, 4096));
        assert_eq!(s.map(12288, 4096), (0, 4096 + 12288));
        assert_eq!(s.map(16384, 4096), (1, 4096));
        // An I/O crossing the end of target 0 is moved back inside it.
        assert_eq!(s.map(12288, 8192), (0, 4096 + 8192));
    }
}
