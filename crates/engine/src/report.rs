//! Turning a job's outcome into the `summary` of result.json and into the
//! human summary (`summary.txt`).

use crate::job::JobOutcome;
use crate::spec::JobSpec;
use crate::worker::DirStats;
use iolens_core::result::run::{
    CpuFigures, DeviceFigures, DeviceTotal, IoFigures, RunSummary, SyncFigures, TotalFigures,
    VerifyFigures,
};
use iolens_core::units::human_bytes;
use iolens_core::ByteSize;
use iolens_probe::DiskDelta;
use std::fmt::Write;

/// One direction of I/O over `secs` measured seconds.
pub fn io_figures(d: &DirStats, secs: f64) -> IoFigures {
    let secs = secs.max(1e-9);
    IoFigures {
        ops: d.ops,
        iops: round(d.ops as f64 / secs, 1),
        bytes: d.bytes,
        mbps: round(d.bytes as f64 / secs / 1e6, 3),
        lat_us: d.hist.summary(),
    }
}

fn round(v: f64, digits: i32) -> f64 {
    let m = 10f64.powi(digits);
    (v * m).round() / m
}

/// Sum of the deltas of every device under the targets (`None`: no device).
pub fn device_total(disks: &[DiskDelta]) -> Option<DeviceTotal> {
    if disks.is_empty() {
        return None;
    }
    let sum = |f: fn(&DiskDelta) -> u64| disks.iter().map(f).sum::<u64>();
    let rd = sum(|d| d.read_ios);
    let wr = sum(|d| d.write_ios);
    let wavg = |f: fn(&DiskDelta) -> f64, w: fn(&DiskDelta) -> u64, n: u64| {
        if n == 0 {
            0.0
        } else {
            disks.iter().map(|d| f(d) * w(d) as f64).sum::<f64>() / n as f64
        }
    };
    Some(DeviceTotal {
        names: disks.iter().map(|d| d.device.clone()).collect(),
        read_ios: rd,
        write_ios: wr,
        read_bytes: sum(|d| d.read_bytes),
        write_bytes: sum(|d| d.write_bytes),
        flush_ios: sum(|d| d.flush_ios),
        read_await_ms: round(wavg(|d| d.read_await_ms, |d| d.read_ios, rd), 3),
        write_await_ms: round(wavg(|d| d.write_await_ms, |d| d.write_ios, wr), 3),
        util_pct: round(disks.iter().map(|d| d.util_pct).fold(0.0, f64::max), 1),
        avg_queue: round(disks.iter().map(|d| d.avg_queue).sum::<f64>(), 2),
    })
}

/// One device's delta as the result schema has it (`summary.devices[]`).
pub fn device_figures(d: &DiskDelta) -> DeviceFigures {
    DeviceFigures {
        device: d.device.clone(),
        interval_s: d.interval_s,
        read_ios: d.read_ios,
        write_ios: d.write_ios,
        read_bytes: d.read_bytes,
        write_bytes: d.write_bytes,
        read_merges: d.read_merges,
        write_merges: d.write_merges,
        flush_ios: d.flush_ios,
        read_await_ms: d.read_await_ms,
        write_await_ms: d.write_await_ms,
        avg_queue: d.avg_queue,
        util_pct: d.util_pct,
    }
}

/// `summary` for a `run` result.
pub fn summary(o: &JobOutcome) -> RunSummary {
    let secs = o.measured_s;
    let ops = o.read.ops + o.write.ops;
    let cpu_s = o.cpu.total_s();
    RunSummary {
        measured_s: round(secs, 3),
        read: io_figures(&o.read, secs),
        write: io_figures(&o.write, secs),
        total: TotalFigures {
            ops,
            iops: round(ops as f64 / secs.max(1e-9), 1),
            mbps: round(
                (o.read.bytes + o.write.bytes) as f64 / secs.max(1e-9) / 1e6,
                3,
            ),
        },
        cpu: CpuFigures {
            user_s: round(o.cpu.user_s, 3),
            sys_s: round(o.cpu.sys_s, 3),
            iops_per_cpu_s: if cpu_s > 0.0 {
                round(ops as f64 / cpu_s, 0)
            } else {
                0.0
            },
            cpu_us_per_io: if ops > 0 {
                round(cpu_s * 1e6 / ops as f64, 3)
            } else {
                0.0
            },
        },
        device: device_total(&o.disks),
        devices: o.disks.iter().map(device_figures).collect(),
        sync: (o.sync.count() > 0).then(|| SyncFigures {
            ops: o.sync.count(),
            lat_us: o.sync.summary(),
        }),
        verify: (o.verify.checked + o.verify.unstamped > 0).then_some(VerifyFigures {
            checked: o.verify.checked,
            unstamped: o.verify.unstamped,
        }),
    }
}

/// Advice drawn from the figures (page cache, device latency vs ours, ...).
pub fn warnings(spec: &JobSpec, o: &JobOutcome) -> Vec<String> {
    let mut w = Vec::new();
    let dev_reads: u64 = o.disks.iter().map(|d| d.read_ios).sum();
    if !o.disks.is_empty() && o.read.ops > 1000 {
        let seen = dev_reads as f64 / o.read.ops as f64;
        if !spec.direct && seen < 0.9 {
            w.push(format!(
                "the device saw {dev_reads} reads for {} issued ({:.0} % served by the OS page cache): drop --buffered to measure the storage, or use a region much larger than RAM",
                o.read.ops,
                (1.0 - seen.min(1.0)) * 100.0
            ));
        }
    }
    if o.disks.is_empty() && !spec.targets.is_empty() {
        w.push("no block device found under the targets (tmpfs, overlay?): device counters are missing and the figures may not reflect any storage".into());
    }
    if o.measured_s > 0.0 && o.measured_s < 5.0 && o.error.is_none() && !o.interrupted {
        w.push(format!(
            "short run ({:.1} s): figures are noisy; use --runtime 30s or more for decisions",
            o.measured_s
        ));
    }
    w
}

/// The human summary, in fio's spirit but shorter.
pub fn summary_text(
    name: &str,
    status: &str,
    spec: &JobSpec,
    o: &JobOutcome,
    warnings: &[String],
) -> String {
    let mut t = String::new();
    job_line(&mut t, name, spec);
    let _ = writeln!(t, "status: {status}, measured {:.2} s", o.measured_s);
    io_lines(&mut t, o);
    resource_lines(&mut t, o);
    if let Some(e) = &o.error {
        let _ = writeln!(t, "error: {e}");
    }
    for w in warnings {
        let _ = writeln!(t, "warning: {w}");
    }
    t
}

/// The first line: what the job did.
fn job_line(t: &mut String, name: &str, spec: &JobSpec) {
    let bs = match &spec.bs_split {
        Some(s) => {
            s.0.iter()
                .map(|(b, w)| format!("{}/{w}", ByteSize(*b)))
                .collect::<Vec<_>>()
                .join(":")
        }
        None => ByteSize(spec.bs).to_string(),
    };
    let _ = writeln!(
        t,
        "iolens run '{name}': {} bs={bs} engine={} qd={} threads={} {} dist={}{}",
        format!("{:?}", spec.rw).to_lowercase(),
        spec.engine,
        spec.qd,
        spec.threads,
        if spec.direct { "direct" } else { "buffered" },
        spec.distribution,
        spec.rate_iops
            .map_or(String::new(), |r| format!(" rate={r}/s"))
    );
}

/// Read, write and sync: rates and latencies.
fn io_lines(t: &mut String, o: &JobOutcome) {
    let secs = o.measured_s.max(1e-9);
    for (label, d) in [("read", &o.read), ("write", &o.write)] {
        if d.ops == 0 {
            continue;
        }
        let l = d.hist.summary();
        let _ = writeln!(
            t,
            "  {label:<5}: IOPS={:.0}  BW={:.2} MB/s  ops={}  ({})",
            d.ops as f64 / secs,
            d.bytes as f64 / secs / 1e6,
            d.ops,
            human_bytes(d.bytes)
        );
        let _ = writeln!(
            t,
            "         lat (us): mean={:.1} min={:.1} p50={:.1} p90={:.1} p99={:.1} p99.9={:.1} p99.99={:.1} max={:.1}",
            l.mean, l.min, l.p50, l.p90, l.p99, l.p99_9, l.p99_99, l.max
        );
    }
    if o.sync.count() > 0 {
        let l = o.sync.summary();
        let _ = writeln!(
            t,
            "  sync : ops={}  lat (us): mean={:.1} p50={:.1} p99={:.1} max={:.1}",
            o.sync.count(),
            l.mean,
            l.p50,
            l.p99,
            l.max
        );
    }
}

/// CPU, devices and verification.
fn resource_lines(t: &mut String, o: &JobOutcome) {
    let ops = o.read.ops + o.write.ops;
    let cpu = o.cpu.total_s();
    let _ = writeln!(
        t,
        "  cpu  : user={:.2}s sys={:.2}s  {:.0} IOPS per CPU-second ({:.2} us CPU per I/O)",
        o.cpu.user_s,
        o.cpu.sys_s,
        if cpu > 0.0 { ops as f64 / cpu } else { 0.0 },
        if ops > 0 { cpu * 1e6 / ops as f64 } else { 0.0 }
    );
    for d in &o.disks {
        let _ = writeln!(
            t,
            "  device {}: r/s={:.0} w/s={:.0} rMB/s={:.2} wMB/s={:.2} r_await={:.3}ms w_await={:.3}ms aqu-sz={:.2} util={:.1}%",
            d.device,
            d.read_ios as f64 / d.interval_s.max(1e-9),
            d.write_ios as f64 / d.interval_s.max(1e-9),
            d.read_bytes as f64 / d.interval_s.max(1e-9) / 1e6,
            d.write_bytes as f64 / d.interval_s.max(1e-9) / 1e6,
            d.read_await_ms,
            d.write_await_ms,
            d.avg_queue,
            d.util_pct
        );
    }
    if o.verify.checked + o.verify.unstamped > 0 {
        let _ = writeln!(
            t,
            "  verify: {} blocks checked, {} without header (never written with --verify)",
            o.verify.checked, o.verify.unstamped
        );
    }
}
