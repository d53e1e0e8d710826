//! Which block device lies under a path, its geometry, and whether it is in use.

use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// A block device as the kernel names it in /proc/diskstats and /sys/block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlockDevice {
    /// Kernel name (`vda`, `vda1`, `dm-0`, `loop3`).
    pub name: String,
    pub major: u32,
    pub minor: u32,
    /// The sysfs directory of the device.
    pub sysfs: PathBuf,
    /// Whether this is a partition of a whole disk.
    pub is_partition: bool,
}

impl BlockDevice {
    /// The device with these numbers, if the kernel knows it.
    pub fn from_numbers(major: u32, minor: u32) -> Option<BlockDevice> {
        if major == 0 {
            return None; // tmpfs, overlay, procfs: no block device
        }
        let link = PathBuf::from(format!("/sys/dev/block/{major}:{minor}"));
        let sysfs = fs::canonicalize(&link).ok()?;
        let name = sysfs.file_name()?.to_string_lossy().into_owned();
        Some(BlockDevice {
            is_partition: sysfs.join("partition").exists(),
            name,
            major,
            minor,
            sysfs,
        })
    }

    /// The whole disk holding this device (itself when it is not a partition).
    pub fn whole_disk(&self) -> BlockDevice {
        if !self.is_partition {
            return self.clone();
        }
        self.sysfs
            .parent()
            .and_then(|p| fs::read_to_string(p.join("dev")).ok())
            .and_then(|d| {
                let (ma, mi) = d.trim().split_once(':')?;
                BlockDevice::from_numbers(ma.parse().ok()?, mi.parse().ok()?)
            })
            .unwrap_or_else(|| self.clone())
    }

    fn queue_value(&self, file: &str) -> Option<u64> {
        let disk = self.whole_disk();
        fs::read_to_string(disk.sysfs.join("queue").join(file))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    /// Logical block size in bytes (the smallest direct I/O the device accepts).
    pub fn logical_block_size(&self) -> u64 {
        self.queue_value("logical_block_size").unwrap_or(512)
    }

    /// Physical block size in bytes (smaller writes cost a read-modify-write).
    pub fn physical_block_size(&self) -> u64 {
        self.queue_value("physical_block_size").unwrap_or(512)
    }

    /// Size in bytes, from sysfs.
    pub fn size_bytes(&self) -> u64 {
        fs::read_to_string(self.sysfs.join("size"))
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .map_or(0, |sectors| sectors * 512)
    }

    /// This device and its partitions, as `major:minor` strings.
    fn self_and_partitions(&self) -> Vec<(String, String)> {
        let mut out = vec![(format!("{}:{}", self.major, self.minor), self.name.clone())];
        if let Ok(rd) = fs::read_dir(&self.sysfs) {
            for e in rd.flatten() {
                let p = e.path();
                if p.join("partition").exists() {
                    if let Ok(d) = fs::read_to_string(p.join("dev")) {
                        out.push((d.trim().to_string(), e.file_name().to_string_lossy().into()));
                    }
                }
            }
        }
        out
    }

    /// Why the device must not be written to, if it is in use: mounted (itself
    /// or a partition), used as swap, or held by another device (LVM, md, dm).
    pub fn in_use(&self) -> Option<String> {
        let parts = self.self_and_partitions();
        if let Ok(mi) = fs::read_to_string("/proc/self/mountinfo") {
            for line in mi.lines() {
                let f: Vec<&str> = line.split_whitespace().collect();
                if f.len() > 4 {
                    if let Some((_, name)) = parts.iter().find(|(d, _)| d == f[2]) {
                        return Some(format!("/dev/{name} is mounted on {}", f[4]));
                    }
                }
            }
        }
        if let Ok(sw) = fs::read_to_string("/proc/swaps") {
            for line in sw.lines().skip(1) {
                let dev = line.split_whitespace().next().unwrap_or("");
                if let Some((_, name)) = parts.iter().find(|(_, n)| dev == format!("/dev/{n}")) {
                    return Some(format!("/dev/{name} is in use as swap"));
                }
            }
        }
        for (_, name) in &parts {
            let holders = if *name == self.name {
                self.sysfs.join("holders")
            } else {
                self.sysfs.join(name).join("holders")
            };
            if let Ok(rd) = fs::read_dir(&holders) {
                if let Some(h) = rd.flatten().next() {
                    return Some(format!(
                        "/dev/{name} is held by {} (LVM, md or device-mapper)",
                        h.file_name().to_string_lossy()
                    ));
                }
            }
        }
        None
    }
}

/// The block device under `path`: the device itself for a block special file,
/// the device holding the filesystem for anything else. `None` for paths on
/// filesystems without one (tmpfs, overlay) or that cannot be stat'ed.
pub fn device_of_path(path: &Path) -> Option<BlockDevice> {
    let md = fs::metadata(path)
        .ok()
        .or_else(|| path.parent().and_then(|p| fs::metadata(p).ok()))?;
    let dev = if md.file_type().is_block_device() {
        md.rdev()
    } else {
        md.dev()
    };
    BlockDevice::from_numbers(libc::major(dev), libc::minor(dev))
}

/// Bytes available to unprivileged users on the filesystem holding `path`.
pub fn free_bytes(path: &Path) -> Option<u64> {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).ok()?;
    // SAFETY: statvfs writes only into the zeroed struct we pass.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut s) } != 0 {
        return None;
    }
    Some(s.f_bavail as u64 * s.f_frsize as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tmpfs_has_no_block_device() {
        if let Some(d) = device_of_path(Path::new("/dev/shm")) {
            panic!("/dev/shm resolved to {d:?}");
        }
    }

    #[test]
    fn the_root_filesystem_device_is_mounted() {
        // On machines where / sits on a real block device, that device is in use.
        if let Some(d) = device_of_path(Path::new("/")) {
            assert!(
                d.whole_disk().in_use().is_some(),
                "{d:?} not seen as in use"
            );
            assert!(d.logical_block_size() >= 512);
        } else {
            eprintln!("skipped: / has no block device here");
        }
    }
}
