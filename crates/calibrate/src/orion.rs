//! ORION's output files, in ORION's layout and naming, so that spreadsheets
//! built on them keep working:
//!
//! | file | content |
//! |---|---|
//! | `<test>_<YYYYMMDD_HHMM>_summary.txt` | the test's parameters, the columns and rows, the targets, the best points |
//! | `…_iops.csv` | IOPS of the small stream; rows = large load, columns = small load (≥ 1) |
//! | `…_mbps.csv` | MB/s of the large stream; rows = large load (≥ 1), columns = small load |
//! | `…_lat.csv` | mean latency of the small stream in µs; rows and columns as `iops.csv` |
//! | `…_trace.txt` | every point as it finished: per-second figures of each stream and totals |
//!
//! A CSV starts with `Large/Small, <small loads…>`; each further line is a
//! large load followed by one value per column, empty where the matrix has
//! no such point (or it did not finish). The time stamp is local time, as in
//! ORION. MB/s are 10^6 bytes per second.

use crate::matrix::{
    LargeType, MatrixConfig, MatrixPoint, MatrixRun, PointRows, Stream, StreamFigures,
};
use iolens_core::fmt::fixed;
use iolens_core::result::TargetInfo;
use iolens_engine::Layout;
use iolens_engine::TimeRow;
use std::collections::BTreeSet;
use std::fmt::Write;
use std::time::SystemTime;

/// `YYYYMMDD_HHMM` in local time.
pub fn stamp(t: SystemTime) -> String {
    let secs = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as libc::time_t;
    // SAFETY: localtime_r writes into the zeroed struct we own.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let ok = !unsafe { libc::localtime_r(&secs, &mut tm) }.is_null();
    if !ok {
        return "19700101_0000".into();
    }
    format!(
        "{:04}{:02}{:02}_{:02}{:02}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min
    )
}

/// The five file names for `prefix` (`<test>_<stamp>`): summary, iops, mbps, lat, trace.
pub fn file_names(prefix: &str) -> [String; 5] {
    [
        "summary.txt",
        "iops.csv",
        "mbps.csv",
        "lat.csv",
        "trace.txt",
    ]
    .map(|s| format!("{prefix}_{s}"))
}

fn point_at(run: &MatrixRun, small: u32, large: u32) -> Option<&MatrixPoint> {
    run.finished()
        .find(|p| p.small_load == small && p.large_load == large)
}

/// A CSV grid in ORION's spacing: each field after the first starts with a
/// space and is right-aligned on 6 characters (`Large/Small,      1,      2`).
/// The spaces are part of the fields; no field holds a comma, a quote or a
/// line end, so the csv crate writes them as they are.
fn grid(rows: &[u32], cols: &[u32], cell: impl Fn(u32, u32) -> Option<String>) -> String {
    let mut w = csv::Writer::from_writer(Vec::new());
    let head =
        std::iter::once("Large/Small".to_string()).chain(cols.iter().map(|c| format!(" {c:>6}")));
    w.write_record(head.collect::<Vec<_>>())
        .expect("writing to memory");
    for &r in rows {
        let line = std::iter::once(format!("{r:>11}")).chain(
            cols.iter()
                .map(|&c| format!(" {:>6}", cell(r, c).unwrap_or_default())),
        );
        w.write_record(line.collect::<Vec<_>>())
            .expect("writing to memory");
    }
    let bytes = w.into_inner().expect("writing to memory");
    String::from_utf8(bytes).expect("the fields are UTF-8")
}

/// A stream's figures at one point, if it ran there.
fn figures(stream: Stream, p: &MatrixPoint) -> Option<&StreamFigures> {
    match stream {
        Stream::Small => p.small.as_ref(),
        Stream::Large => p.large.as_ref(),
    }
}

/// Rows (large loads) and columns (small loads) of a stream's file: the
/// points where that stream runs (its own load ≥ 1).
fn shape(cfg: &MatrixConfig, stream: Stream) -> (Vec<u32>, Vec<u32>) {
    let pts = cfg.points.iter().filter(|p| match stream {
        Stream::Small => p.0 > 0,
        Stream::Large => p.1 > 0,
    });
    let rows: BTreeSet<u32> = pts.clone().map(|p| p.1).collect();
    let cols: BTreeSet<u32> = pts.map(|p| p.0).collect();
    (rows.into_iter().collect(), cols.into_iter().collect())
}

/// One stream's figure over the matrix, one cell per finished point.
fn stream_csv(
    cfg: &MatrixConfig,
    run: &MatrixRun,
    stream: Stream,
    cell: impl Fn(&StreamFigures) -> String,
) -> String {
    let (rows, cols) = shape(cfg, stream);
    grid(&rows, &cols, |l, s| {
        point_at(run, s, l)
            .and_then(|p| figures(stream, p))
            .map(&cell)
    })
}

/// `_iops.csv`: IOPS of the small stream.
pub fn iops_csv(cfg: &MatrixConfig, run: &MatrixRun) -> String {
    stream_csv(cfg, run, Stream::Small, |f| format!("{:.0}", f.iops))
}

/// `_mbps.csv`: MB/s of the large stream.
pub fn mbps_csv(cfg: &MatrixConfig, run: &MatrixRun) -> String {
    stream_csv(cfg, run, Stream::Large, |f| format!("{:.2}", f.mbps))
}

/// `_lat.csv`: mean latency of the small stream, µs.
pub fn lat_csv(cfg: &MatrixConfig, run: &MatrixRun) -> String {
    stream_csv(cfg, run, Stream::Small, |f| format!("{:.2}", f.lat_mean_us))
}

fn columns(label: &str, v: impl Iterator<Item = u32>) -> String {
    let set: BTreeSet<u32> = v.collect();
    let mut t = format!("{label}:,");
    for (i, x) in set.iter().enumerate() {
        let _ = write!(t, "{}{x:>6}", if i == 0 { " " } else { ", " });
    }
    t
}

fn lat_line(what: &str, f: &StreamFigures) -> String {
    let (d, name) = if f.read.ops >= f.write.ops {
        (&f.read, "Read")
    } else {
        (&f.write, "Write")
    };
    let l = &d.lat_us;
    format!(
        "{what} {name} Latency: avg={} us, min={} us, p50={} us, p99={} us, max={} us",
        fixed(l.mean, 3, 0),
        fixed(l.min, 3, 0),
        fixed(l.p50, 3, 0),
        fixed(l.p99, 3, 0),
        fixed(l.max, 3, 0)
    )
}

/// `_summary.txt`.
pub fn summary_txt(
    cfg: &MatrixConfig,
    run: &MatrixRun,
    targets: &[TargetInfo],
    commandline: &str,
    status: &str,
    warnings: &[String],
) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "ORION-compatible summary written by iolens {}",
        env!("CARGO_PKG_VERSION")
    );
    let _ = writeln!(t);
    let _ = writeln!(t, "Commandline:");
    let _ = writeln!(t, "{commandline}");
    let _ = writeln!(t);
    write_test(&mut t, cfg);
    write_files(&mut t, targets);
    write_best_points(&mut t, run);
    let _ = writeln!(t);
    write_status(&mut t, cfg, run, status, warnings);
    t
}

/// Kibibytes of `b` bytes.
fn kb(b: u64) -> f64 {
    b as f64 / 1024.0
}

/// "This maps to this test:": the test's parameters, columns and points.
fn write_test(t: &mut String, cfg: &MatrixConfig) {
    let _ = writeln!(t, "This maps to this test:");
    let _ = writeln!(t, "Test: {}", cfg.test);
    let _ = writeln!(t, "Small IO size: {} KB", fixed(kb(cfg.size_small), 1, 0));
    let _ = writeln!(t, "Large IO size: {} KB", fixed(kb(cfg.size_large), 1, 0));
    let mut types = Vec::new();
    if cfg.has_small() {
        types.push("Small Random IOs");
    }
    if cfg.has_large() {
        types.push(match cfg.large_type {
            LargeType::Rand => "Large Random IOs",
            LargeType::Seq => "Large Sequential Streams",
        });
    }
    let _ = writeln!(t, "IO Types: {}", types.join(", "));
    if cfg.large_type == LargeType::Seq && cfg.has_large() {
        let _ = writeln!(
            t,
            "Number of Concurrent IOs Per Stream: {}",
            cfg.num_streamio
        );
    }
    write_array(t, cfg);
    let _ = writeln!(
        t,
        "Duration for each Data Point: {} seconds",
        fixed(cfg.duration.as_secs_f64(), 1, 0)
    );
    let _ = writeln!(
        t,
        "{}",
        columns("Small Columns", cfg.points.iter().map(|p| p.0))
    );
    let _ = writeln!(
        t,
        "{}",
        columns("Large Columns", cfg.points.iter().map(|p| p.1))
    );
    let _ = writeln!(t, "Total Data Points: {}", cfg.points.len());
    let _ = writeln!(t);
}

/// The simulated array, the share of writes and the cache.
fn write_array(t: &mut String, cfg: &MatrixConfig) {
    match cfg.layout {
        Layout::Concat => {
            let _ = writeln!(t, "Simulated Array Type: CONCAT");
        }
        Layout::Raid0 => {
            let _ = writeln!(t, "Simulated Array Type: RAID 0");
            let _ = writeln!(t, "Stripe Depth: {} KB", fixed(kb(cfg.stripe), 1, 0));
        }
    }
    let _ = writeln!(t, "Write: {}%", cfg.write_pct);
    if cfg.cache_size > 0 {
        let _ = writeln!(
            t,
            "Cache Size: {} MB",
            fixed(cfg.cache_size as f64 / 1048576.0, 1, 0)
        );
    } else {
        let _ = writeln!(t, "Cache Size: Not Entered");
    }
}

/// The targets, ORION's "FILEs".
fn write_files(t: &mut String, targets: &[TargetInfo]) {
    for ti in targets {
        let _ = writeln!(t, "Name: {}\tSize: {}", ti.path, ti.size_bytes);
    }
    let _ = writeln!(t, "{} FILEs found.", targets.len());
    let _ = writeln!(t);
}

/// The best finished point by `pick` (highest when `max`, else lowest),
/// among the points where it is above zero; the first of equals wins.
fn best_point(
    run: &MatrixRun,
    pick: impl Fn(&MatrixPoint) -> Option<f64>,
    max: bool,
) -> Option<(&MatrixPoint, f64)> {
    run.finished()
        .filter_map(|p| pick(p).map(|v| (p, v)))
        .filter(|(_, v)| *v > 0.0)
        .reduce(|a, b| {
            if (b.1 > a.1) == max && b.1 != a.1 {
                b
            } else {
                a
            }
        })
}

/// Maximum MBPS, maximum IOPS and minimum latency, each with its point;
/// the small stream's latency line follows the small stream's bests.
fn write_best_points(t: &mut String, run: &MatrixRun) {
    let at = |p: &MatrixPoint| format!("@ Small={} and Large={}", p.small_load, p.large_load);
    let small_latency = |t: &mut String, p: &MatrixPoint| {
        if let Some(f) = &p.small {
            let _ = writeln!(t, "{} {}", lat_line("Small", f), at(p));
        }
    };
    if let Some((p, v)) = best_point(run, |p| p.large.as_ref().map(|f| f.mbps), true) {
        let _ = writeln!(t, "Maximum Large MBPS={v:.2} {}", at(p));
    }
    if let Some((p, v)) = best_point(run, |p| p.small.as_ref().map(|f| f.iops), true) {
        let _ = writeln!(t, "Maximum Small IOPS={v:.0} {}", at(p));
        small_latency(t, p);
    }
    if let Some((p, v)) = best_point(run, |p| p.small.as_ref().map(|f| f.lat_mean_us), false) {
        let _ = writeln!(t, "Minimum Small Latency={v:.2} usecs {}", at(p));
        small_latency(t, p);
    }
}

/// iolens's own closing lines: status, error and warnings.
fn write_status(
    t: &mut String,
    cfg: &MatrixConfig,
    run: &MatrixRun,
    status: &str,
    warnings: &[String],
) {
    let done = run.finished().count();
    let _ = writeln!(
        t,
        "iolens: status {status}, {done} of {} data points measured, each over {} s after a {} s ramp, both streams at once; MBPS = 10^6 bytes/s; latencies in microseconds ({} engine, direct I/O).",
        cfg.points.len(),
        fixed(cfg.duration.as_secs_f64(), 1, 0),
        fixed(cfg.ramp.as_secs_f64(), 1, 0),
        cfg.engine
    );
    if let Some(e) = &run.error {
        let _ = writeln!(t, "error: {e}");
    }
    for w in warnings {
        let _ = writeln!(t, "warning: {w}");
    }
}

/// The head of `_trace.txt`.
pub fn trace_header(cfg: &MatrixConfig, commandline: &str) -> String {
    format!(
        "iolens matrix trace (ORION layout)\nCommandline: {commandline}\nTest: {}  points: {}  duration: {} s  ramp: {} s\n\n",
        cfg.test,
        cfg.points.len(),
        fixed(cfg.duration.as_secs_f64(), 1, 0),
        fixed(cfg.ramp.as_secs_f64(), 1, 0)
    )
}

/// One point's block of `_trace.txt`, with the point's per-second rows.
pub fn trace_point(total: usize, p: &MatrixPoint, rows: &PointRows) -> String {
    let mut t = String::new();
    let lay =
        |f: &Option<StreamFigures>| f.as_ref().map_or("-".to_string(), |f| f.layout.join(" + "));
    let _ = writeln!(
        t,
        "Point {} of {total}: Small={} Large={}{}  [small: {}; large: {}; warm-up {} bytes]",
        p.point,
        p.small_load,
        p.large_load,
        if p.interrupted { " (cut short)" } else { "" },
        lay(&p.small),
        lay(&p.large),
        p.warmup_bytes
    );
    write_trace_seconds(&mut t, rows);
    write_trace_totals(&mut t, p);
    t
}

/// The per-second table of one point: each stream's IOPS, MB/s and mean
/// latency, reads and writes together.
fn write_trace_seconds(t: &mut String, rows: &PointRows) {
    let _ = writeln!(
        t,
        "  {:>4} {:>5} {:>11} {:>11} {:>13} {:>11} {:>11} {:>13}",
        "sec",
        "phase",
        "small_iops",
        "small_mbps",
        "small_lat_us",
        "large_iops",
        "large_mbps",
        "large_lat_us"
    );
    let secs: BTreeSet<u32> = [&rows.small, &rows.large]
        .iter()
        .flat_map(|rs| rs.iter().map(|r| r.sec))
        .collect();
    for sec in secs {
        let (si, sm, sl, sr) = trace_cells(&rows.small, sec);
        let (li, lm, ll, lr) = trace_cells(&rows.large, sec);
        let _ = writeln!(
            t,
            "  {sec:>4} {:>5} {si:>11} {sm:>11} {sl:>13} {li:>11} {lm:>11} {ll:>13}",
            if sr || lr { "ramp" } else { "run" }
        );
    }
}

/// One stream's IOPS, MB/s and mean latency in second `sec` (empty when it
/// has no such second), and whether the second is ramp.
fn trace_cells(rows: &[TimeRow], sec: u32) -> (String, String, String, bool) {
    let Some(r) = rows.iter().find(|r| r.sec == sec) else {
        return ("".into(), "".into(), "".into(), false);
    };
    let iops = r.read.iops + r.write.iops;
    let lat = if iops > 0.0 {
        (r.read.lat_mean_us * r.read.iops + r.write.lat_mean_us * r.write.iops) / iops
    } else {
        0.0
    };
    (
        format!("{iops:.0}"),
        format!("{:.2}", r.read.mbps + r.write.mbps),
        format!("{lat:.1}"),
        r.ramp,
    )
}

/// One point's totals: each stream, the device and the CPU.
fn write_trace_totals(t: &mut String, p: &MatrixPoint) {
    for (name, f) in [("small", &p.small), ("large", &p.large)] {
        if let Some(f) = f {
            let _ = writeln!(
                t,
                "  {name}: IOPS={:.0} MBPS={:.2} avg latency={:.1} us | reads {} p99={:.1} us | writes {} p99={:.1} us",
                f.iops, f.mbps, f.lat_mean_us, f.read.ops, f.read.lat_us.p99, f.write.ops, f.write.lat_us.p99
            );
        }
    }
    if let Some(d) = &p.device {
        let _ = writeln!(
            t,
            "  device: read_ios={:.0} write_ios={:.0} r_await={:.3} ms w_await={:.3} ms aqu-sz={:.2} util={:.1}%",
            d.read_ios as f64,
            d.write_ios as f64,
            d.read_await_ms,
            d.write_await_ms,
            d.avg_queue,
            d.util_pct
        );
    }
    let _ = writeln!(
        t,
        "  cpu: user={:.2}s sys={:.2}s over {:.2} s measured\n",
        p.cpu_user_s, p.cpu_sys_s, p.measured_s
    );
}

/// Advice drawn from the matrix: page-cache-free but shared devices, points
/// cut short, tiny points.
pub fn warnings(cfg: &MatrixConfig, run: &MatrixRun) -> Vec<String> {
    let mut w = Vec::new();
    if !run.points.is_empty() && run.points.iter().all(|p| p.device.is_none()) {
        w.push("no block device found under the targets (tmpfs, overlay?): device counters are missing and the figures may not reflect any storage".into());
    }
    let coarse = run
        .finished()
        .filter(|p| {
            [&p.small, &p.large]
                .iter()
                .filter_map(|f| f.as_ref())
                .any(|f| f.read.ops + f.write.ops < 100)
        })
        .count();
    if coarse > 0 {
        w.push(format!(
            "{coarse} data point(s) completed fewer than 100 I/Os in a stream: their figures are coarse; use a longer --duration (ORION's default is 60s)"
        ));
    }
    if cfg.duration.as_secs_f64() < 5.0 {
        w.push(format!(
            "short points ({} s): figures are noisy; use --duration 60s (ORION's default) for decisions",
            fixed(cfg.duration.as_secs_f64(), 2, 0)
        ));
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::{MatrixKind, MatrixOptions, RunKind};

    fn cfg(m: MatrixKind, s: u32, l: u32) -> MatrixConfig {
        MatrixOptions {
            targets: vec!["/tmp/a".into()],
            run: RunKind::Advanced,
            matrix: Some(m),
            num_small: Some(s),
            num_large: Some(l),
            ..Default::default()
        }
        .resolve()
        .unwrap()
    }

    fn fake_run(c: &MatrixConfig) -> MatrixRun {
        let fig = |v: f64| StreamFigures {
            iops: v,
            mbps: v / 10.0,
            lat_mean_us: v * 2.0,
            ..Default::default()
        };
        MatrixRun {
            points: c
                .points
                .iter()
                .enumerate()
                .map(|(i, &(s, l))| MatrixPoint {
                    point: i + 1,
                    small_load: s,
                    large_load: l,
                    small: (s > 0).then(|| fig(100.0 * s as f64 + l as f64)),
                    large: (l > 0).then(|| fig(1000.0 * l as f64 + s as f64)),
                    ..Default::default()
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn csv_files_have_orions_rows_and_columns() {
        let c = cfg(MatrixKind::Detailed, 3, 2);
        let r = fake_run(&c);
        let iops = iops_csv(&c, &r);
        let lines: Vec<&str> = iops.lines().collect();
        assert_eq!(lines[0], "Large/Small,      1,      2,      3");
        assert_eq!(lines.len(), 1 + 3); // large 0, 1, 2
        assert_eq!(lines[1], "          0,    100,    200,    300");
        assert_eq!(lines[3], "          2,    102,    202,    302");
        let mbps = mbps_csv(&c, &r);
        let lines: Vec<&str> = mbps.lines().collect();
        assert_eq!(lines[0], "Large/Small,      0,      1,      2,      3");
        assert_eq!(lines.len(), 1 + 2); // large 1, 2
        assert_eq!(lines[1], "          1, 100.00, 100.10, 100.20, 100.30");
        let lat = lat_csv(&c, &r);
        assert!(lat.lines().nth(1).unwrap().ends_with(", 600.00"));
    }

    #[test]
    fn unmeasured_cells_stay_empty() {
        let c = cfg(MatrixKind::Basic, 2, 1);
        let mut r = fake_run(&c);
        r.points[1].interrupted = true; // (2, 0) did not finish
        let iops = iops_csv(&c, &r);
        assert_eq!(iops.lines().nth(1).unwrap(), "          0,    100,       ");
        // basic has no small I/O beside large I/O: one row only.
        assert_eq!(iops.lines().count(), 2);
        let mbps = mbps_csv(&c, &r);
        assert_eq!(mbps.lines().next().unwrap(), "Large/Small,      0");
    }

    #[test]
    fn summary_names_the_best_points() {
        let c = cfg(MatrixKind::Detailed, 2, 1);
        let r = fake_run(&c);
        let targets = vec![TargetInfo {
            path: "/dev/sdb".into(),
            kind: "blockdev".into(),
            size_bytes: 1 << 30,
            device: Some("sdb".into()),
        }];
        let s = summary_txt(&c, &r, &targets, "iolens matrix ...", "ok", &[]);
        assert!(s.contains("Small IO size: 8 KB"));
        assert!(s.contains("Large IO size: 1024 KB"));
        assert!(s.contains("Small Columns:,      0,      1,      2"));
        assert!(s.contains("Large Columns:,      0,      1"));
        assert!(s.contains("Total Data Points: 5"));
        assert!(s.contains("Name: /dev/sdb\tSize: 1073741824"));
        assert!(s.contains("Maximum Large MBPS=100.20 @ Small=2 and Large=1"));
        assert!(s.contains("Maximum Small IOPS=201 @ Small=2 and Large=1"));
        assert!(s.contains("Minimum Small Latency=200.00 usecs @ Small=1 and Large=0"));
    }

    #[test]
    fn names_follow_orion() {
        let n = file_names("mytest_20240101_0930");
        assert_eq!(n[0], "mytest_20240101_0930_summary.txt");
        assert_eq!(n[4], "mytest_20240101_0930_trace.txt");
        let s = stamp(SystemTime::now());
        assert_eq!(s.len(), 13);
        assert_eq!(&s[8..9], "_");
    }
}
