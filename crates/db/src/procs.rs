//! The database server's processes, as the OS sees them: which they are,
//! how much CPU they used and how many bytes they made the storage fetch.

use std::fs;
use std::path::{Path, PathBuf};

/// CPU and storage I/O of a set of processes, summed.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ProcUsage {
    /// Processes counted.
    pub processes: usize,
    /// User CPU seconds (own and reaped children).
    pub user_s: f64,
    /// System CPU seconds (own and reaped children).
    pub sys_s: f64,
    /// Bytes the processes caused to be read from storage (`/proc/PID/io`
    /// `read_bytes`): page-cache hits are not in it.
    pub read_bytes: u64,
    /// Bytes the processes caused to be written to storage.
    pub write_bytes: u64,
}

impl ProcUsage {
    /// user + sys.
    pub fn cpu_s(&self) -> f64 {
        self.user_s + self.sys_s
    }

    /// `self - before`, clamped at zero (a process that ended takes its
    /// counters with it unless its parent reaped it).
    pub fn since(&self, before: &ProcUsage) -> ProcUsage {
        ProcUsage {
            processes: self.processes,
            user_s: (self.user_s - before.user_s).max(0.0),
            sys_s: (self.sys_s - before.sys_s).max(0.0),
            read_bytes: self.read_bytes.saturating_sub(before.read_bytes),
            write_bytes: self.write_bytes.saturating_sub(before.write_bytes),
        }
    }
}

fn clock_ticks() -> f64 {
    // SAFETY: sysconf has no preconditions.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 {
        t as f64
    } else {
        100.0
    }
}

/// Every process id in /proc.
fn all_pids() -> Vec<u32> {
    fs::read_dir("/proc")
        .map(|rd| {
            rd.flatten()
                .filter_map(|e| e.file_name().to_str()?.parse().ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Processes whose working directory is `dir`. A PostgreSQL server changes
/// into its data directory at start and every process it forks inherits
/// it, so this finds a cluster's processes even after its postmaster died.
pub fn pids_with_cwd(dir: &Path) -> Vec<u32> {
    let want: PathBuf = fs::canonicalize(dir).unwrap_or_else(|_| dir.to_path_buf());
    let me = std::process::id();
    all_pids()
        .into_iter()
        .filter(|&p| p != me)
        .filter(|p| {
            fs::read_link(format!("/proc/{p}/cwd"))
                .map(|c| c == want)
                .unwrap_or(false)
        })
        .collect()
}

/// Whether process `pid` exists (and is not a zombie).
pub fn alive(pid: u32) -> bool {
    match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(s) => stat_fields(&s).and_then(|f| f.first().copied()) != Some("Z"),
        Err(_) => false,
    }
}

/// The fields after `(comm)` of a /proc/PID/stat line: state is index 0.
fn stat_fields(s: &str) -> Option<Vec<&str>> {
    let close = s.rfind(')')?;
    Some(s[close + 1..].split_whitespace().collect())
}

/// CPU (own + reaped children) and storage bytes of `pids`, summed. Processes
/// that cannot be read (gone, or not ours) are skipped.
pub fn usage(pids: &[u32]) -> ProcUsage {
    let hz = clock_ticks();
    let mut u = ProcUsage::default();
    for p in pids {
        let Ok(stat) = fs::read_to_string(format!("/proc/{p}/stat")) else {
            continue;
        };
        let Some(f) = stat_fields(&stat) else {
            continue;
        };
        // After the state (index 0): utime is field 14 of the full line,
        // i.e. index 11 here; stime 12, cutime 13, cstime 14.
        let g = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
        u.processes += 1;
        u.user_s += (g(11) + g(13)) / hz;
        u.sys_s += (g(12) + g(14)) / hz;
        if let Ok(io) = fs::read_to_string(format!("/proc/{p}/io")) {
            for line in io.lines() {
                if let Some(v) = line.strip_prefix("read_bytes:") {
                    u.read_bytes += v.trim().parse::<u64>().unwrap_or(0);
                } else if let Some(v) = line.strip_prefix("write_bytes:") {
                    u.write_bytes += v.trim().parse::<u64>().unwrap_or(0);
                }
            }
        }
    }
    u
}

/// Sends `sig` to each of `pids`.
pub fn signal(pids: &[u32], sig: i32) {
    for &p in pids {
        // SAFETY: kill has no memory-safety preconditions.
        unsafe { libc::kill(p as libc::pid_t, sig) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_found_by_its_usage_and_liveness() {
        let me = std::process::id();
        assert!(alive(me));
        let mut x = 0u64;
        let t = std::time::Instant::now();
        while t.elapsed().as_millis() < 30 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let u = usage(&[me]);
        assert_eq!(u.processes, 1);
        assert!(u.cpu_s() > 0.0);
        assert!(!alive(u32::MAX - 1));
    }

    #[test]
    fn stat_fields_survive_spaces_in_the_command_name() {
        let f = stat_fields("12 (a b) S 1 2 3").unwrap();
        assert_eq!(f[0], "S");
        assert_eq!(f[1], "1");
    }

    #[test]
    fn a_child_in_a_directory_is_found_by_its_cwd() {
        let dir = std::env::temp_dir().join(format!("iolens-cwd-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .current_dir(&dir)
            .spawn()
            .unwrap();
        let found = pids_with_cwd(&dir);
        child.kill().unwrap();
        child.wait().unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(found, vec![child.id()]);
    }
}
