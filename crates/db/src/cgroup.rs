//! A memory cgroup around the managed server, so that the OS page cache it
//! may use is limited (`--os-cache-limit`). Needs root. cgroup v1
//! (`/sys/fs/cgroup/memory`) and v2 (`memory.max`) are both handled; page
//! cache pages are charged to the cgroup of the process that first reads
//! them, so the server's reads beyond the limit evict its own cached pages.

use crate::error::DbError;
use serde::{Deserialize, Serialize};
use std::ffi::CString;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// A memory cgroup created by iolens.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemCgroup {
    /// Its directory in the cgroup filesystem.
    pub path: PathBuf,
    /// The memory limit written to it, bytes.
    pub limit_bytes: u64,
    /// cgroup v2 (`memory.max`) rather than v1 (`memory.limit_in_bytes`).
    pub v2: bool,
}

/// Memory use of the cgroup (from `memory.stat` and the usage files), as
/// the result schema records it.
pub use iolens_core::result::db::CgroupMemory;

const V1_ROOT: &str = "/sys/fs/cgroup/memory";
const V2_ROOT: &str = "/sys/fs/cgroup";

impl MemCgroup {
    /// Creates `iolens-<name>` with `limit_bytes`.
    pub fn create(name: &str, limit_bytes: u64) -> Result<MemCgroup, DbError> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err(DbError::usage(
                "--os-cache-limit needs root (it puts the server in a memory cgroup); \
                 run as root or leave it out and make the data set larger than RAM",
            ));
        }
        let v1 = Path::new(V1_ROOT).join("memory.limit_in_bytes").exists();
        let v2 = !v1
            && fs::read_to_string(Path::new(V2_ROOT).join("cgroup.controllers"))
                .map(|c| c.split_whitespace().any(|x| x == "memory"))
                .unwrap_or(false);
        if !v1 && !v2 {
            return Err(DbError::usage(
                "--os-cache-limit needs the memory cgroup controller, which this system does not offer \
                 (no /sys/fs/cgroup/memory and no memory in /sys/fs/cgroup/cgroup.controllers)",
            ));
        }
        let root = if v1 { V1_ROOT } else { V2_ROOT };
        let path = Path::new(root).join(format!("iolens-{name}"));
        if path.exists() {
            // A leftover of an earlier run of the same cluster: reuse it if empty.
            let cg = MemCgroup {
                path: path.clone(),
                limit_bytes,
                v2,
            };
            if !cg.pids().is_empty() {
                return Err(DbError::usage(format!(
                    "memory cgroup {} is in use by other processes; stop them or remove it",
                    path.display()
                )));
            }
        } else {
            fs::create_dir(&path).map_err(|e| DbError::io("creating memory cgroup", &path, e))?;
        }
        let cg = MemCgroup {
            path,
            limit_bytes,
            v2,
        };
        let file = if v2 {
            "memory.max"
        } else {
            "memory.limit_in_bytes"
        };
        if let Err(e) = fs::write(cg.path.join(file), limit_bytes.to_string()) {
            let _ = cg.remove();
            return Err(DbError::io("setting the limit of", &cg.path, e));
        }
        if v2 {
            let _ = fs::write(cg.path.join("memory.swap.max"), "0");
        } else {
            let _ = fs::write(cg.path.join("memory.swappiness"), "0");
        }
        Ok(cg)
    }

    /// The `cgroup.procs` file; a process joins by writing `0` to it.
    pub fn procs_file(&self) -> CString {
        CString::new(
            self.path
                .join("cgroup.procs")
                .as_os_str()
                .as_encoded_bytes(),
        )
        .expect("cgroup paths have no NUL bytes")
    }

    /// Processes in the cgroup.
    pub fn pids(&self) -> Vec<u32> {
        fs::read_to_string(self.path.join("cgroup.procs"))
            .map(|s| s.lines().filter_map(|l| l.trim().parse().ok()).collect())
            .unwrap_or_default()
    }

    /// Memory use now.
    pub fn memory(&self) -> CgroupMemory {
        let stat = fs::read_to_string(self.path.join("memory.stat")).unwrap_or_default();
        let get = |key: &str| {
            stat.lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(' ')?;
                    (k == key).then(|| v.trim().parse::<u64>().ok())?
                })
                .unwrap_or(0)
        };
        let read = |f: &str| {
            fs::read_to_string(self.path.join(f))
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok())
                .unwrap_or(0)
        };
        if self.v2 {
            CgroupMemory {
                cache_bytes: get("file") + get("shmem"),
                shmem_bytes: get("shmem"),
                anon_bytes: get("anon"),
                max_usage_bytes: read("memory.peak"),
            }
        } else {
            CgroupMemory {
                cache_bytes: get("cache"),
                shmem_bytes: get("shmem"),
                anon_bytes: get("rss"),
                max_usage_bytes: read("memory.max_usage_in_bytes"),
            }
        }
    }

    /// Removes the cgroup; its processes must have ended (waits up to 5 s).
    pub fn remove(&self) -> Result<(), DbError> {
        if !self.path.exists() {
            return Ok(());
        }
        let until = Instant::now() + Duration::from_secs(5);
        loop {
            match fs::remove_dir(&self.path) {
                Ok(()) => return Ok(()),
                Err(e) if Instant::now() >= until => {
                    return Err(DbError::io("removing memory cgroup", &self.path, e))
                }
                Err(_) => std::thread::sleep(Duration::from_millis(50)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cgroup_limits_and_is_removed() {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: not root");
            return;
        }
        let cg = match MemCgroup::create(&format!("unit-{}", std::process::id()), 64 << 20) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("skipped: {e}");
                return;
            }
        };
        assert!(cg.path.exists());
        assert!(cg.pids().is_empty());
        let _ = cg.memory();
        cg.remove().unwrap();
        assert!(!cg.path.exists());
    }
}
