//! From a [`RunOutcome`] to `summary` (result.json), the cache verdict, the
//! warnings, and a summary.txt that reads like an AWR load profile.

use crate::run::RunOutcome;
use crate::workload::{OpKind, WorkloadSpec, BLOCK};
use iolens_core::result::db::{
    CacheFigures, DbFigures, DbIo, DbOps, DbSummary, OpFigures, OsFigures, Wait,
};
use std::fmt::Write as _;

/// Share of the database's physical reads the OS page cache may serve
/// before a run is flagged, %.
pub const CACHE_FLAG_PCT: f64 = 10.0;

/// Facts the report needs beside the outcome.
#[derive(Clone, Debug, Default)]
pub struct Context {
    /// Server version line.
    pub server_version: String,
    pub server_major: u32,
    /// Managed cluster (iolens can offer --os-cache-limit / --direct-io).
    pub managed: bool,
    pub root: bool,
    /// Whether the server bypasses the page cache (debug_io_direct=data).
    pub direct_io: bool,
    /// A memory cgroup limit is in place, bytes.
    pub os_cache_limit: Option<u64>,
    /// Bytes of the tables and indexes the run works on.
    pub data_bytes: u64,
    pub shared_buffers_bytes: u64,
    pub mem_bytes: u64,
}

/// The cache verdict: how much of the database's physical reads the device saw.
#[derive(Clone, Debug, PartialEq)]
pub struct CacheVerdict {
    pub db_reads: u64,
    pub device_reads: Option<u64>,
    /// Share of the database's reads the device did not see, %.
    pub os_cache_hit_pct: Option<f64>,
    /// The same from the server processes' own storage reads (/proc/PID/io).
    pub by_process_pct: Option<f64>,
    pub flagged: bool,
    pub text: String,
    pub advice: Vec<String>,
}

fn per_s(n: f64, s: f64) -> f64 {
    if s > 0.0 {
        n / s
    } else {
        0.0
    }
}

fn r2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

fn gib(b: u64) -> String {
    iolens_core::units::human_bytes(b)
}

/// Compares the database's physical reads with the reads the device saw.
// Long on purpose: one decision (which share of the reads the page cache
// served, and what to say about it) whose cases read best in one place.
pub fn cache_verdict(o: &RunOutcome, cx: &Context) -> CacheVerdict {
    let db_reads = o.db.physical_reads;
    let device_reads = o.device.as_ref().map(|d| d.read_ios);
    let share = |seen: u64| {
        if db_reads == 0 {
            0.0
        } else {
            r2(100.0 * (1.0 - seen.min(db_reads) as f64 / db_reads as f64))
        }
    };
    let pct = device_reads.map(share);
    let by_process_pct = o
        .server
        .filter(|s| s.processes > 0)
        .map(|s| share(s.read_bytes.div_ceil(BLOCK)));
    let mut advice = Vec::new();
    let (text, flagged) = match (device_reads, pct) {
        (None, _) | (_, None) => (
            "unknown: no block device was found under the data directory, so the reads the \
             device saw cannot be compared with the database's"
                .to_string(),
            false,
        ),
        (Some(_), Some(_)) if db_reads == 0 => (
            "no physical reads: every block was found in shared_buffers".to_string(),
            false,
        ),
        (Some(dev), Some(p)) => {
            // The device also counts other processes' reads, which can only
            // hide page-cache hits; the server's own storage reads cannot.
            let worst = by_process_pct.map_or(p, |q| q.max(p));
            let flagged = worst > CACHE_FLAG_PCT;
            let mut t = format!(
                "{p:.1} % of the database's {db_reads} physical reads were served by the OS page cache \
                 (the device saw {dev} reads)"
            );
            if let Some(q) = by_process_pct.filter(|q| *q > p + 5.0) {
                t.push_str(&format!(
                    "; other processes read from the device too: by the server's own storage reads \
                     the page cache served {q:.1} %"
                ));
            }
            if flagged {
                t.push_str(&format!(
                    " - FLAGGED (over {CACHE_FLAG_PCT:.0} %): the figures describe memory more than storage"
                ));
            }
            (t, flagged)
        }
    };
    if flagged {
        if cx.server_major >= 16 && !cx.direct_io {
            advice.push(if cx.managed {
                "use --direct-io (debug_io_direct=data) so the server bypasses the OS page cache".to_string()
            } else {
                "set debug_io_direct = 'data' on the server (16+, restart) to bypass the OS page cache".to_string()
            });
        }
        if cx.managed && cx.root && cx.os_cache_limit.is_none() {
            advice.push(
                "use --os-cache-limit 256M to put the server in a memory cgroup that limits its page cache"
                    .to_string(),
            );
        }
        if cx.os_cache_limit.is_some() {
            advice.push("lower --os-cache-limit".to_string());
        }
        if cx.mem_bytes > 0 && cx.data_bytes > 0 {
            let ratio = cx.data_bytes as f64 / cx.mem_bytes as f64;
            if ratio < 2.0 {
                advice.push(format!(
                    "the data set ({}) is {:.0} % of RAM ({}): make it at least twice RAM with --scale/--schemas",
                    gib(cx.data_bytes),
                    ratio * 100.0,
                    gib(cx.mem_bytes)
                ));
            }
        }
    }
    CacheVerdict {
        db_reads,
        device_reads,
        os_cache_hit_pct: pct,
        by_process_pct,
        flagged,
        text,
        advice,
    }
}

/// Average active sessions by event, largest first.
type Aas = Vec<(String, f64)>;

/// Background waits are sampled with a `bg:` prefix.
fn split_waits(o: &RunOutcome) -> (Aas, Aas) {
    let n = o.ash_samples.max(1) as f64;
    let mut fg = Vec::new();
    let mut bg = Vec::new();
    for (ev, c) in &o.waits {
        let aas = *c as f64 / n;
        match ev.strip_prefix("bg:") {
            Some(e) => bg.push((e.to_string(), aas)),
            None => fg.push((ev.clone(), aas)),
        }
    }
    let by_aas = |a: &(String, f64), b: &(String, f64)| b.1.total_cmp(&a.1);
    fg.sort_by(by_aas);
    bg.sort_by(by_aas);
    (fg, bg)
}

fn wait_class(ev: &str) -> &str {
    ev.split_once(':').map_or("CPU", |(c, _)| c)
}

/// `summary` of a `db` result.
pub fn summary(o: &RunOutcome, spec: &WorkloadSpec, cache: &CacheVerdict) -> DbSummary {
    let s = o.measured_s;
    let execs: u64 = o.ops.iter().map(|t| t.ops).sum();
    let updates = o.ops[OpKind::Update.index()].ops;
    let (waits, background_waits, db_time) = wait_figures(o);
    let op = |k: OpKind| {
        let t = &o.ops[k.index()];
        OpFigures {
            ops: t.ops,
            per_s: r2(per_s(t.ops as f64, s)),
            rows: t.rows,
            lat_us: t.hist.summary(),
        }
    };
    let update_pct_measured = if execs > 0 {
        r2(100.0 * updates as f64 / execs as f64)
    } else {
        0.0
    };
    DbSummary {
        measured_s: r2(s),
        warmup_s: r2(o.warmup_s),
        sessions: spec.sessions,
        schemas: spec.schemas,
        db: db_figures(o, cache),
        os: o.device.as_ref().map(|d| os_figures(d, o.machine_busy_pct)),
        os_cache_hit_pct: cache.os_cache_hit_pct,
        cache: CacheFigures {
            db_physical_reads: cache.db_reads,
            device_read_ios: cache.device_reads,
            os_cache_hit_pct: cache.os_cache_hit_pct,
            os_cache_hit_pct_by_process: cache.by_process_pct,
            flagged: cache.flagged,
            verdict: cache.text.clone(),
            advice: cache.advice.clone(),
        },
        db_time_aas: r2(db_time),
        waits,
        background_waits,
        ash_samples: o.ash_samples,
        ops: DbOps {
            select: op(OpKind::Select),
            update: op(OpKind::Update),
            scan: op(OpKind::Scan),
        },
        update_pct_measured,
        per_session_ops: o.per_session.clone(),
        cgroup: None,
    }
}

/// `summary.db`: the database's own counters over the window, as rates and totals.
// Long on purpose: one struct literal with a line per figure, in the order of
// docs/result-schema.md.
fn db_figures(o: &RunOutcome, cache: &CacheVerdict) -> DbFigures {
    let s = o.measured_s;
    let db = &o.db;
    let execs: u64 = o.ops.iter().map(|t| t.ops).sum();
    let updates = o.ops[OpKind::Update.index()].ops;
    let selects = o.ops[OpKind::Select.index()].ops;
    let db_cpu = o.server.map(|u| u.cpu_s());
    let read_lat_us = db
        .read_time_ms
        .filter(|_| db.physical_reads > 0)
        .map(|t| r2(t * 1000.0 / db.physical_reads as f64));
    let hit_pct = if db.logical_reads == 0 {
        0.0
    } else {
        r2(
            100.0 * (db.logical_reads - db.physical_reads.min(db.logical_reads)) as f64
                / db.logical_reads as f64,
        )
    };
    let lat = |t: Option<f64>, n: Option<u64>| match (t, n) {
        (Some(t), Some(n)) if n > 0 => Some(r2(t * 1000.0 / n as f64)),
        _ => None,
    };
    DbFigures {
        logical_reads_per_s: r2(per_s(db.logical_reads as f64, s)),
        physical_read_iops: r2(per_s(db.physical_reads as f64, s)),
        physical_write_iops: db.physical_writes.map(|w| r2(per_s(w as f64, s))),
        read_lat_us,
        hit_pct,
        executions_per_s: r2(per_s(execs as f64, s)),
        tps: r2(per_s(updates as f64, s)),
        xact_per_s: r2(per_s((db.commits + db.rollbacks) as f64, s)),
        wal_bytes_per_s: db.wal_bytes.map(|b| r2(per_s(b as f64, s))),
        reads_per_db_cpu_s: db_cpu
            .filter(|c| *c > 0.0)
            .map(|c| r2(db.physical_reads as f64 / c)),
        device_reads_per_db_cpu_s: match (db_cpu, cache.device_reads) {
            (Some(c), Some(d)) if c > 0.0 => Some(r2(d as f64 / c)),
            _ => None,
        },
        reads_per_select: (selects > 0).then(|| r2(db.physical_reads as f64 / selects as f64)),
        logical_reads: db.logical_reads,
        physical_reads: db.physical_reads,
        read_time_ms: db.read_time_ms.map(r2),
        physical_writes: db.physical_writes,
        write_time_ms: db.write_time_ms.map(r2),
        checkpoint_writes: db.checkpoint_writes,
        bgwriter_writes: db.bgwriter_writes,
        backend_writes: db.backend_writes,
        backend_fsyncs: db.backend_fsyncs,
        checkpoints: db.checkpoints,
        checkpoint_write_time_ms: db.checkpoint_write_time_ms.map(r2),
        checkpoint_sync_time_ms: db.checkpoint_sync_time_ms.map(r2),
        commits: db.commits,
        rollbacks: db.rollbacks,
        wal_bytes: db.wal_bytes,
        wal_records: db.wal_records,
        wal_fpi: db.wal_fpi,
        wal_writes: db.wal_writes,
        wal_syncs: db.wal_syncs,
        wal_write_time_ms: db.wal_write_time_ms.map(r2),
        wal_sync_time_ms: db.wal_sync_time_ms.map(r2),
        wal_write_lat_us: lat(db.wal_write_time_ms, db.wal_writes),
        wal_sync_lat_us: lat(db.wal_sync_time_ms, db.wal_syncs),
        db_cpu_s: db_cpu.map(r2),
        db_cpu_user_s: o.server.map(|u| r2(u.user_s)),
        db_cpu_sys_s: o.server.map(|u| r2(u.sys_s)),
        server_processes: o.server.map(|u| u.processes as u64),
        server_read_bytes: o.server.map(|u| u.read_bytes),
        server_write_bytes: o.server.map(|u| u.write_bytes),
        io: db
            .io
            .iter()
            .map(|r| DbIo {
                backend_type: r.backend_type.clone(),
                reads: r.reads,
                read_time_ms: r.read_time_ms,
                writes: r.writes,
                write_time_ms: r.write_time_ms,
                extends: r.extends,
                hits: r.hits,
                fsyncs: r.fsyncs,
                fsync_time_ms: r.fsync_time_ms,
            })
            .collect(),
    }
}

/// `summary.os`: what the device under the data saw over the window.
fn os_figures(d: &iolens_probe::DiskDelta, machine_busy_pct: f64) -> OsFigures {
    OsFigures {
        device: d.device.clone(),
        read_iops: r2(per_s(d.read_ios as f64, d.interval_s)),
        write_iops: r2(per_s(d.write_ios as f64, d.interval_s)),
        read_mbps: r2(per_s(d.read_bytes as f64 / 1e6, d.interval_s)),
        write_mbps: r2(per_s(d.write_bytes as f64 / 1e6, d.interval_s)),
        read_await_ms: r2(d.read_await_ms * 1000.0) / 1000.0,
        write_await_ms: r2(d.write_await_ms * 1000.0) / 1000.0,
        util_pct: r2(d.util_pct),
        avg_queue: r2(d.avg_queue),
        read_ios: d.read_ios,
        write_ios: d.write_ios,
        read_bytes: d.read_bytes,
        write_bytes: d.write_bytes,
        flush_ios: d.flush_ios,
        machine_cpu_busy_pct: r2(machine_busy_pct),
    }
}

/// `summary.waits` and `summary.background_waits`, and the DB time (AAS).
fn wait_figures(o: &RunOutcome) -> (Vec<Wait>, Vec<Wait>, f64) {
    let (fg, bg) = split_waits(o);
    let db_time: f64 = fg.iter().map(|w| w.1).sum();
    let waits = fg
        .iter()
        .map(|(e, aas)| Wait {
            event: e.to_string(),
            class: wait_class(e).to_string(),
            aas: r2(*aas),
            pct_db_time: Some(if db_time > 0.0 {
                r2(100.0 * aas / db_time)
            } else {
                0.0
            }),
        })
        .collect();
    let background_waits = bg
        .iter()
        .map(|(e, aas)| Wait {
            event: e.to_string(),
            class: wait_class(e).to_string(),
            aas: r2(*aas),
            pct_db_time: None,
        })
        .collect();
    (waits, background_waits, db_time)
}

fn num(v: f64) -> String {
    let (int, frac) = {
        let s = format!("{:.1}", v.abs());
        let (i, f) = s.split_once('.').unwrap_or((&s, "0"));
        (i.to_string(), f.to_string())
    };
    let mut out = String::new();
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    format!("{}{out}.{frac}", if v < 0.0 { "-" } else { "" })
}

/// summary.txt: header, Load Profile, Top Events, IO Profile, operation
/// latency and the cache verdict, in the shape of an AWR report.
pub fn summary_text(
    name: &str,
    status: &str,
    o: &RunOutcome,
    spec: &WorkloadSpec,
    cx: &Context,
    cache: &CacheVerdict,
    warnings: &[String],
) -> String {
    let mut t = String::new();
    header_text(&mut t, name, status, o, spec, cx);
    let (fg, bg) = split_waits(o);
    let db_time: f64 = fg.iter().map(|w| w.1).sum();
    load_profile_text(&mut t, o, db_time);
    top_events_text(&mut t, o, &fg, &bg, db_time);
    io_profile_text(&mut t, o);
    operations_text(&mut t, o);
    verdict_text(&mut t, cache, warnings);
    t
}

/// The header: run, server, workload, window.
fn header_text(
    t: &mut String,
    name: &str,
    status: &str,
    o: &RunOutcome,
    spec: &WorkloadSpec,
    cx: &Context,
) {
    let s = o.measured_s;
    let _ = writeln!(t, "iolens db {name}: {status}");
    let _ = writeln!(t, "{}", cx.server_version);
    let _ = writeln!(
        t,
        "{} sessions on {} schemas x {} blocks; update {} %, scan {} %, work unit {} (updates {}), redo stress {:?}",
        spec.sessions,
        spec.schemas,
        spec.scale,
        spec.update_pct,
        spec.scan_pct,
        spec.work_unit,
        spec.update_work_unit,
        spec.redo_stress
    );
    let _ = writeln!(
        t,
        "measured {:.1} s after {:.1} s of warm-up; {} {}",
        s,
        o.warmup_s,
        // PostgreSQL reports a major version; embedded databases report 0.
        if cx.server_major > 0 {
            "shared_buffers"
        } else {
            "page cache per connection"
        },
        gib(cx.shared_buffers_bytes)
    );
    if let Some(e) = &o.error {
        let _ = writeln!(t, "error: {e}");
    }
}

/// Load Profile: per second and per transaction.
fn load_profile_text(t: &mut String, o: &RunOutcome, db_time: f64) {
    let s = o.measured_s;
    let db = &o.db;
    let updates = o.ops[OpKind::Update.index()].ops as f64;
    let execs: f64 = o.ops.iter().map(|x| x.ops as f64).sum();
    let db_cpu = o.server.map(|u| u.cpu_s());
    let _ = writeln!(
        t,
        "\nLoad Profile                     Per Second   Per Transaction"
    );
    let mut line = |label: &str, total: Option<f64>| {
        if let Some(v) = total {
            let per_tx = if updates > 0.0 {
                num(v / updates)
            } else {
                String::new()
            };
            let _ = writeln!(t, "  {label:<28} {:>13} {:>17}", num(per_s(v, s)), per_tx);
        }
    };
    line("DB Time(s):", Some(db_time * s));
    line("DB CPU(s):", db_cpu);
    line("Logical read (blocks):", Some(db.logical_reads as f64));
    line("Physical read (blocks):", Some(db.physical_reads as f64));
    line(
        "Physical write (blocks):",
        db.physical_writes.map(|v| v as f64),
    );
    line(
        "Read IO requests (device):",
        o.device.as_ref().map(|d| d.read_ios as f64),
    );
    line(
        "Write IO requests (device):",
        o.device.as_ref().map(|d| d.write_ios as f64),
    );
    line("WAL size (bytes):", db.wal_bytes.map(|v| v as f64));
    line("Executes (SQL):", Some(execs));
    line("Transactions:", Some(updates));
    if let (Some(c), true) = (db_cpu, db.physical_reads > 0) {
        let _ = writeln!(
            t,
            "  Physical reads per DB CPU second: {}",
            num(db.physical_reads as f64 / c.max(1e-9))
        );
    }
    let hit = if db.logical_reads > 0 {
        100.0 * (db.logical_reads - db.physical_reads.min(db.logical_reads)) as f64
            / db.logical_reads as f64
    } else {
        0.0
    };
    let _ = writeln!(t, "  Buffer hit %: {hit:.2}");
}

/// Top Events: the sampled waits of the sessions, largest first.
fn top_events_text(
    t: &mut String,
    o: &RunOutcome,
    fg: &[(String, f64)],
    bg: &[(String, f64)],
    db_time: f64,
) {
    let s = o.measured_s;
    let db = &o.db;
    let _ = writeln!(
        t,
        "\nTop Events (ASH: {} samples every 100 ms)",
        o.ash_samples
    );
    let _ = writeln!(
        t,
        "  {:<28} {:>12} {:>10} {:>11} {:>8}  Wait Class",
        "Event", "Waits", "Time(s)", "Avg wait", "% DB time"
    );
    for (ev, aas) in fg.iter().take(10) {
        let (waits, time_s) = if ev == "IO:DataFileRead" {
            match db.read_time_ms {
                Some(ms) => (Some(db.physical_reads), ms / 1e3),
                None => (None, aas * s),
            }
        } else {
            (None, aas * s)
        };
        let avg = match waits {
            Some(n) if n > 0 => format!("{:.2}us", time_s * 1e6 / n as f64),
            _ => String::new(),
        };
        let _ = writeln!(
            t,
            "  {:<28} {:>12} {:>10.2} {:>11} {:>8.1}  {}",
            ev,
            waits.map(|n| n.to_string()).unwrap_or_default(),
            time_s,
            avg,
            if db_time > 0.0 {
                100.0 * aas / db_time
            } else {
                0.0
            },
            wait_class(ev)
        );
    }
    if !bg.is_empty() {
        let _ = writeln!(
            t,
            "  background I/O waits (AAS): {}",
            bg.iter()
                .map(|(e, a)| format!("{e} {a:.2}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
}

/// IO Profile: the database's blocks, the device, the WAL.
fn io_profile_text(t: &mut String, o: &RunOutcome) {
    let s = o.measured_s;
    let db = &o.db;
    let _ = writeln!(
        t,
        "\nIO Profile                     Read/s     Write/s   Read MB/s  Write MB/s   Read lat"
    );
    let rl = db
        .read_time_ms
        .filter(|_| db.physical_reads > 0)
        .map(|ms| format!("{:.1}us", ms * 1e3 / db.physical_reads as f64))
        .unwrap_or_else(|| "-".into());
    let _ = writeln!(
        t,
        "  {:<24} {:>10} {:>11} {:>11} {:>11} {:>10}",
        "database (blocks)",
        num(per_s(db.physical_reads as f64, s)),
        db.physical_writes
            .map(|w| num(per_s(w as f64, s)))
            .unwrap_or_else(|| "-".into()),
        num(per_s(db.physical_reads as f64 * BLOCK as f64 / 1e6, s)),
        db.physical_writes
            .map(|w| num(per_s(w as f64 * BLOCK as f64 / 1e6, s)))
            .unwrap_or_else(|| "-".into()),
        rl
    );
    if let Some(d) = &o.device {
        let _ = writeln!(
            t,
            "  {:<24} {:>10} {:>11} {:>11} {:>11} {:>10}",
            format!("device {}", d.device),
            num(per_s(d.read_ios as f64, d.interval_s)),
            num(per_s(d.write_ios as f64, d.interval_s)),
            num(per_s(d.read_bytes as f64 / 1e6, d.interval_s)),
            num(per_s(d.write_bytes as f64 / 1e6, d.interval_s)),
            format!("{:.3}ms", d.read_await_ms)
        );
        let _ = writeln!(
            t,
            "  device util {:.1} %, queue {:.2}; machine CPU busy {:.1} %",
            d.util_pct, d.avg_queue, o.machine_busy_pct
        );
    }
    if let (Some(w), Some(b)) = (db.wal_writes, db.wal_bytes) {
        let _ = writeln!(
            t,
            "  WAL: {} writes/s, {} syncs/s, {} MB/s{}",
            num(per_s(w as f64, s)),
            num(per_s(db.wal_syncs.unwrap_or(0) as f64, s)),
            num(per_s(b as f64 / 1e6, s)),
            match (db.wal_sync_time_ms, db.wal_syncs) {
                (Some(ms), Some(n)) if n > 0 => format!(", sync {:.1}us", ms * 1e3 / n as f64),
                _ => String::new(),
            }
        );
    }
}

/// Operations: count, rate and latency of each kind.
fn operations_text(t: &mut String, o: &RunOutcome) {
    let s = o.measured_s;
    let _ = writeln!(t, "\nOperations             ops        /s      mean       p50       p95       p99       max (us)");
    for k in OpKind::ALL {
        let x = &o.ops[k.index()];
        if x.ops == 0 {
            continue;
        }
        let l = x.hist.summary();
        let _ = writeln!(
            t,
            "  {:<10} {:>11} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1} {:>9.1}",
            k.name(),
            x.ops,
            per_s(x.ops as f64, s),
            l.mean,
            l.p50,
            l.p95,
            l.p99,
            l.max
        );
    }
}

/// The cache verdict, its advice and the warnings.
fn verdict_text(t: &mut String, cache: &CacheVerdict, warnings: &[String]) {
    let _ = writeln!(t, "\nCache verdict: {}", cache.text);
    if let Some(p) = cache.by_process_pct {
        let _ = writeln!(
            t,
            "  (from the server processes' own storage reads: {p:.1} % served by the page cache)"
        );
    }
    for a in &cache.advice {
        let _ = writeln!(t, "  advice: {a}");
    }
    for w in warnings {
        let _ = writeln!(t, "warning: {w}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolens_probe::DiskDelta;

    fn outcome(db_reads: u64, dev_reads: u64) -> RunOutcome {
        let mut o = RunOutcome {
            measured_s: 10.0,
            ..Default::default()
        };
        o.db.physical_reads = db_reads;
        o.db.logical_reads = db_reads * 2;
        o.device = Some(DiskDelta {
            device: "vda".into(),
            interval_s: 10.0,
            read_ios: dev_reads,
            ..Default::default()
        });
        o
    }

    #[test]
    fn the_cache_share_is_what_the_device_did_not_see() {
        let cx = Context {
            managed: true,
            root: true,
            server_major: 15,
            mem_bytes: 16 << 30,
            data_bytes: 1 << 30,
            ..Default::default()
        };
        let v = cache_verdict(&outcome(1000, 950), &cx);
        assert_eq!(v.os_cache_hit_pct, Some(5.0));
        assert!(!v.flagged);
        let v = cache_verdict(&outcome(1000, 300), &cx);
        assert_eq!(v.os_cache_hit_pct, Some(70.0));
        assert!(v.flagged);
        assert!(v.advice.iter().any(|a| a.contains("--os-cache-limit")));
        assert!(v.advice.iter().any(|a| a.contains("RAM")));
        assert!(!v.advice.iter().any(|a| a.contains("--direct-io")));
        // Other processes' reads on the device never make the share negative.
        assert_eq!(
            cache_verdict(&outcome(1000, 5000), &cx).os_cache_hit_pct,
            Some(0.0)
        );
        // Device noise cannot hide page-cache hits the server's own reads reveal.
        let mut o = outcome(1000, 5000);
        o.server = Some(crate::procs::ProcUsage {
            processes: 5,
            read_bytes: 300 * BLOCK,
            ..Default::default()
        });
        let v = cache_verdict(&o, &cx);
        assert_eq!(v.os_cache_hit_pct, Some(0.0));
        assert_eq!(v.by_process_pct, Some(70.0));
        assert!(
            v.flagged && v.text.contains("other processes"),
            "{}",
            v.text
        );
        let mut o = outcome(1000, 10);
        o.device = None;
        assert_eq!(cache_verdict(&o, &cx).os_cache_hit_pct, None);
    }

    #[test]
    fn numbers_are_grouped_like_awr() {
        assert_eq!(num(1234567.25), "1,234,567.2");
        assert_eq!(num(12.0), "12.0");
        assert_eq!(num(-1000.0), "-1,000.0");
    }
}
