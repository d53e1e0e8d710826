//! Dropping a database's files from the OS page cache before a run, so that
//! the first reads of the run reach the device (`posix_fadvise(DONTNEED)`:
//! clean pages are dropped, nothing is written).

use std::fs::{self, File};
use std::os::fd::AsRawFd;
use std::path::Path;

/// Files and bytes advised away.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Evicted {
    pub files: u64,
    pub bytes: u64,
}

/// Advises the kernel to drop every regular file under `dir` from the page
/// cache. Files that cannot be opened are skipped.
pub fn evict(dir: &Path) -> Evicted {
    let mut out = Evicted::default();
    let Ok(rd) = fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let Ok(ft) = e.file_type() else { continue };
        let p = e.path();
        if ft.is_dir() {
            let sub = evict(&p);
            out.files += sub.files;
            out.bytes += sub.bytes;
        } else if ft.is_file() {
            if let Ok(f) = File::open(&p) {
                let len = f.metadata().map(|m| m.len()).unwrap_or(0);
                // SAFETY: posix_fadvise only reads its arguments.
                let r =
                    unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
                if r == 0 {
                    out.files += 1;
                    out.bytes += len;
                }
            }
        }
    }
    out
}

/// Bytes of `path` resident in the page cache (mincore), for checks.
pub fn resident_bytes(path: &Path) -> Option<u64> {
    let f = File::open(path).ok()?;
    let len = f.metadata().ok()?.len() as usize;
    if len == 0 {
        return Some(0);
    }
    // SAFETY: a read-only shared mapping of a file we opened, unmapped below;
    // mincore writes one byte per page into a vector of that many bytes.
    unsafe {
        let addr = libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            f.as_raw_fd(),
            0,
        );
        if addr == libc::MAP_FAILED {
            return None;
        }
        let page = libc::sysconf(libc::_SC_PAGESIZE) as usize;
        let mut vec = vec![0u8; len.div_ceil(page)];
        let r = libc::mincore(addr, len, vec.as_mut_ptr());
        libc::munmap(addr, len);
        if r != 0 {
            return None;
        }
        Some(vec.iter().filter(|b| *b & 1 == 1).count() as u64 * page as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn evicted_files_leave_the_page_cache() {
        let dir = std::env::temp_dir().join(format!("iolens-evict-{}", std::process::id()));
        fs::create_dir_all(dir.join("sub")).unwrap();
        let p = dir.join("sub").join("f");
        let mut f = File::create(&p).unwrap();
        f.write_all(&vec![7u8; 1 << 20]).unwrap();
        f.sync_all().unwrap();
        drop(f);
        let _ = fs::read(&p).unwrap();
        let before = resident_bytes(&p).unwrap();
        let e = evict(&dir);
        let after = resident_bytes(&p).unwrap();
        fs::remove_dir_all(&dir).unwrap();
        assert_eq!(e.files, 1);
        assert_eq!(e.bytes, 1 << 20);
        // tmpfs keeps its pages (they are the file); real disks drop them.
        if before > 0 && after < before {
            assert!(after < 1 << 20);
        }
    }
}
