//! `iolens assess`: the whole picture from one command.
//!
//! 1. raw: `calibrate` on a file under the assessed directory;
//! 2. database: a short SLOB-method run (managed PostgreSQL when its server
//!    binaries are found, embedded SQLite otherwise), read-only and then with
//!    20 % updates, at a few session counts;
//! 3. a side-by-side table and one sentence on where the gap comes from.
//!
//! Each part runs as a child `iolens` process writing its own result
//! directory under the assessment's directory, so every figure is kept in
//! the common schema and can be reported or compared later. The time budget
//! (`--duration`) is split between the parts and re-planned after each one.

use crate::args::OutputArgs;
use crate::errors::usage;
use crate::output::result_dir;
use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use iolens_core::result::assess::{
    AssessDb, AssessResult, AssessSummary, DbPoint, DbVsRaw, RawFigures,
};
use iolens_core::result::calibrate::{CalibrateResult, IoKind};
use iolens_core::result::db::{DbSections, DbSummary};
use iolens_core::units::human_bytes;
use iolens_core::{ByteSize, Document, DurationArg, Status};
use serde::de::DeserializeOwned;
use serde_json::json;
use std::fmt::Write as _;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DbChoice {
    /// PostgreSQL when its server binaries are found, SQLite otherwise.
    Auto,
    Postgres,
    Sqlite,
}

/// `iolens assess`.
#[derive(Args, Debug, Clone)]
pub struct AssessArgs {
    /// Directory on the storage to assess (its files are created there and removed after).
    #[arg(long, default_value = ".")]
    pub dir: PathBuf,
    /// Total time to spend (±10 %).
    #[arg(long, default_value = "2m")]
    pub duration: DurationArg,
    /// Database for the database part.
    #[arg(long, value_enum, default_value = "auto")]
    pub db: DbChoice,
    /// Size of the raw test file.
    #[arg(long, default_value = "1g")]
    pub size: ByteSize,
    /// Session counts of the database runs.
    #[arg(long, value_delimiter = ',', default_value = "1,4")]
    pub sessions: Vec<u32>,
    /// Keep the files and the cluster created for the assessment.
    #[arg(long)]
    pub keep: bool,
    #[command(flatten)]
    pub out: OutputArgs,
}

struct Phase {
    progress: bool,
    start: Instant,
    budget: Duration,
}

impl Phase {
    fn say(&self, what: &str) {
        if self.progress {
            let e = self.start.elapsed().as_secs_f64();
            eprintln!("[{e:>5.0}s / {:.0}s] {what}", self.budget.as_secs_f64());
        }
    }

    fn left(&self) -> Duration {
        self.budget.saturating_sub(self.start.elapsed())
    }
}

/// Runs this executable with `args`; returns its exit code.
fn child(args: &[String]) -> Result<i32> {
    let exe = std::env::current_exe().context("locating the iolens executable")?;
    let status = Command::new(exe)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .status()
        .context("starting a child iolens")?;
    Ok(status.code().unwrap_or(130))
}

/// A part's result, when it wrote one of the expected kind.
fn load<S, X>(dir: &Path) -> Option<Document<S, X>>
where
    S: DeserializeOwned + Default,
    X: DeserializeOwned,
{
    Document::load(&dir.join("result.json")).ok()
}

fn initdb_found() -> bool {
    let in_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join("initdb").exists()))
        .unwrap_or(false);
    in_path
        || std::fs::read_dir("/usr/lib/postgresql")
            .map(|rd| rd.flatten().any(|e| e.path().join("bin/initdb").exists()))
            .unwrap_or(false)
}

fn s(v: impl ToString) -> String {
    v.to_string()
}

fn secs(d: Duration) -> String {
    format!("{:.1}s", d.as_secs_f64().max(0.5))
}

/// Mean latency and IOPS of the first (one outstanding I/O) small-read step of a calibration.
fn qd1(cal: &CalibrateResult) -> (Option<f64>, Option<f64>) {
    let p = cal
        .extra
        .ladder
        .iter()
        .flatten()
        .find(|p| p.io == IoKind::Small && p.outstanding == 1);
    p.map_or((None, None), |p| (Some(p.lat_us.mean), Some(p.iops)))
}

pub fn run(a: AssessArgs) -> Result<u8> {
    if !a.dir.is_dir() {
        return usage(format!("--dir {} is not a directory", a.dir.display()));
    }
    if a.duration.0 < Duration::from_secs(20) {
        return usage(
            "--duration must be at least 20s (a raw calibration and a database run need time)",
        );
    }
    if a.sessions.is_empty() || a.sessions.contains(&0) {
        return usage("--sessions needs session counts ≥ 1, e.g. 1,4");
    }
    let backend = match a.db {
        DbChoice::Postgres if !initdb_found() => return usage(
            "PostgreSQL server binaries not found: apt-get install postgresql, or use --db sqlite",
        ),
        DbChoice::Postgres => "postgres",
        DbChoice::Sqlite => "sqlite",
        DbChoice::Auto if initdb_found() => "postgres",
        DbChoice::Auto => "sqlite",
    };
    let dir = result_dir(&a.out, "assess")?;
    let out = dir.path().to_path_buf();
    let dir_abs =
        std::path::absolute(&a.dir).with_context(|| format!("--dir {}", a.dir.display()))?;
    let work = dir_abs.join(format!(".iolens-assess-{}", std::process::id()));
    std::fs::create_dir_all(&work).with_context(|| format!("creating {}", work.display()))?;
    let mut doc = AssessResult::new("assess", a.out.name.as_deref().unwrap_or("assess"));
    doc.config = json!({
        "dir": a.dir.display().to_string(),
        "duration_s": a.duration.0.as_secs_f64(),
        "db": backend,
        "size": a.size.0,
        "sessions": a.sessions,
        "keep": a.keep,
    });
    dir.write_result(&doc)?;
    let ph = Phase {
        progress: !a.out.quiet,
        start: Instant::now(),
        budget: a.duration.0,
    };
    let total = a.duration.0.as_secs_f64();
    let interrupted = || iolens_core::interrupt::requested();
    let mut warnings: Vec<String> = Vec::new();

    // 1. Raw: calibrate with a time budget of ~30 %.
    let cal_dir = out.join("calibrate");
    let step = (total * 0.30 / 16.0 - 0.25).clamp(0.5, 5.0);
    ph.say(&format!(
        "raw: calibrate on {} ({} file, steps of {step:.1}s)",
        a.dir.display(),
        human_bytes(a.size.0)
    ));
    let target = work.join("calibrate.dat");
    let code = child(&[
        s("calibrate"),
        s("--target"),
        target.display().to_string(),
        s("--size"),
        a.size.to_string(),
        s("--trials"),
        s("1"),
        s("--step-time"),
        format!("{step:.2}s"),
        s("--ramp"),
        s("0.25s"),
        s("--max-outstanding"),
        s("128"),
        s("--quiet"),
        s("--output"),
        cal_dir.display().to_string(),
    ])?;
    let _ = std::fs::remove_file(&target);
    let cal: Option<CalibrateResult> = load(&cal_dir);
    if code != 0 && !interrupted() {
        warnings.push(format!(
            "calibrate exited with code {code}; see {}",
            cal_dir.display()
        ));
    }

    // 2. Database: setup, then points read-only and with 20 % updates.
    let mut points: Vec<(u32, u32, PathBuf)> = Vec::new();
    let db_data = work.join("db");
    // Loading runs without a memory limit (VACUUM needs memory); the runs put
    // the server in a memory cgroup that leaves it a small OS page cache
    // (root, cgroup v1 or v2), so that its reads reach the storage.
    let mut run_flags: Vec<String> = Vec::new();
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let cgroups = Path::new("/sys/fs/cgroup/memory").is_dir()
        || Path::new("/sys/fs/cgroup/cgroup.controllers").exists();
    if backend == "postgres" && root && cgroups {
        run_flags.extend([s("--os-cache-limit"), s("4M")]);
    }
    let server_flags: Vec<String> = if backend == "postgres" {
        vec![
            s("--pg-dir"),
            db_data.display().to_string(),
            s("--cache"),
            s("16M"),
        ]
    } else {
        vec![
            s("--db"),
            s("sqlite"),
            s("--path"),
            db_data.display().to_string(),
            s("--cache"),
            s("1M"),
        ]
    };
    if !interrupted() {
        // PostgreSQL reads through the OS page cache: its data set must be
        // much larger than the cache the memory cgroup leaves it.
        let scale = if backend == "postgres" { 16384 } else { 4096 };
        ph.say(&format!(
            "database: {backend} setup, 2 schemas × {scale} blocks"
        ));
        let mut args = vec![s("db"), s("setup")];
        args.extend(server_flags.clone());
        args.extend([
            s("--schemas"),
            s("2"),
            s("--scale"),
            s(scale),
            s("--scan-scale"),
            s("64"),
            s("--quiet"),
        ]);
        if backend == "postgres" {
            args.push(s("--keep"));
        }
        let code = child(&args)?;
        if code != 0 {
            warnings.push(format!(
                "db setup exited with code {code}: the database part was skipped"
            ));
        } else {
            let plan: Vec<(u32, u32)> = [0u32, 20]
                .iter()
                .flat_map(|&u| a.sessions.iter().map(move |&n| (n, u)))
                .collect();
            for (i, &(n, u)) in plan.iter().enumerate() {
                if interrupted() {
                    break;
                }
                let reserve =
                    Duration::from_secs_f64(if backend == "postgres" { 3.0 } else { 1.0 }); // teardown, summary
                let left = ph.left().saturating_sub(reserve);
                let per = left.as_secs_f64() / (plan.len() - i) as f64;
                if per < 2.0 {
                    warnings.push(
                        "time ran out before every database point ran: use a longer --duration"
                            .into(),
                    );
                    break;
                }
                let warm = (per * 0.25).clamp(0.5, 10.0);
                let run_s = (per - warm - 0.6).max(1.0);
                let pdir = out.join(format!("db-s{n}-u{u}"));
                ph.say(&format!(
                    "database: {n} session(s), {u} % updates, {run_s:.0}s"
                ));
                let mut args = vec![s("db"), s("run")];
                args.extend(server_flags.clone());
                args.extend(run_flags.clone());
                args.extend([
                    s("--sessions"),
                    s(n),
                    s("--update-pct"),
                    s(u),
                    s("--runtime"),
                    secs(Duration::from_secs_f64(run_s)),
                    s("--warmup"),
                    secs(Duration::from_secs_f64(warm)),
                    s("--quiet"),
                    s("--output"),
                    pdir.display().to_string(),
                ]);
                if backend == "postgres" {
                    args.push(s("--keep"));
                }
                let code = child(&args)?;
                if code != 0 && !interrupted() {
                    warnings.push(format!(
                        "db run ({n} sessions, {u} % updates) exited with code {code}"
                    ));
                }
                points.push((n, u, pdir));
            }
        }
        if backend == "postgres" && !a.keep {
            let _ = child(&[
                s("db"),
                s("teardown"),
                s("--pg-dir"),
                db_data.display().to_string(),
            ]);
        }
    }
    if !a.keep {
        let _ = std::fs::remove_dir_all(&work);
    }

    // 3. The picture.
    let summary = picture(cal.as_ref(), &points, backend);
    doc.summary = Some(summary.clone());
    doc.duration_s = ph.start.elapsed().as_secs_f64();
    // A part that produced no figure fails the assessment (the others are kept).
    let missing: Vec<&str> = [
        ("raw calibration", summary.raw.max_iops.is_some()),
        ("database runs", summary.best_db.is_some()),
    ]
    .iter()
    .filter(|(_, ok)| !ok)
    .map(|(what, _)| *what)
    .collect();
    if !missing.is_empty() && !interrupted() {
        doc.error = Some(format!(
            "no figures from: {} (see the warnings)",
            missing.join(", ")
        ));
    }
    doc.status = Status::ended(doc.error.is_some(), interrupted());
    doc.extra.warnings = Some(warnings.clone());
    let text = render(&summary, &warnings, &out, doc.duration_s);
    dir.write_result(&doc)?;
    dir.write_file("summary.txt", text.as_bytes())?;
    if !interrupted() {
        let _ = Command::new(std::env::current_exe()?)
            .args(["report", "--out"])
            .arg(out.join("report"))
            .arg(&out)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
    if a.out.json {
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!("{text}");
        let _ = std::io::stdout().flush();
    }
    Ok(doc.status.exit_code() as u8)
}

fn picture(
    cal: Option<&CalibrateResult>,
    points: &[(u32, u32, PathBuf)],
    backend: &str,
) -> AssessSummary {
    let cs = cal.and_then(|c| c.summary.as_ref());
    let (qd1_lat, qd1_iops) = cal.map_or((None, None), qd1);
    let raw = RawFigures {
        max_iops: cs.and_then(|s| s.max_iops),
        max_mbps: cs.and_then(|s| s.max_mbps),
        latency_ms: cs.and_then(|s| s.latency_ms),
        qd1_lat_us: qd1_lat,
        qd1_iops,
    };
    let mut db_points = Vec::new();
    for (n, u, p) in points {
        let Some(r) = load::<Option<DbSummary>, DbSections>(p) else {
            continue;
        };
        let s = r.summary.as_ref();
        let d = s.map(|s| &s.db);
        db_points.push(DbPoint {
            sessions: *n,
            update_pct: *u,
            status: Some(r.status),
            physical_read_iops: d.map(|d| d.physical_read_iops),
            physical_write_iops: d.and_then(|d| d.physical_write_iops),
            read_lat_us: d.and_then(|d| d.read_lat_us),
            reads_per_db_cpu_s: d.and_then(|d| d.reads_per_db_cpu_s),
            tps: d.map(|d| d.tps),
            device_read_iops: s.and_then(|s| s.os.as_ref()).map(|o| o.read_iops),
            os_cache_hit_pct: s.and_then(|s| s.os_cache_hit_pct),
            dir: p.file_name().map(|x| x.to_string_lossy().into_owned()),
        });
    }
    let best = db_points
        .iter()
        .filter(|p| p.update_pct == 0 && p.physical_read_iops.unwrap_or(0.0) > 0.0)
        .max_by(|a, b| {
            a.physical_read_iops
                .unwrap_or(0.0)
                .total_cmp(&b.physical_read_iops.unwrap_or(0.0))
        })
        .cloned();
    let single = db_points
        .iter()
        .find(|p| p.sessions == 1 && p.update_pct == 0 && p.read_lat_us.is_some());
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    };
    let best_iops = best.as_ref().and_then(|b| b.physical_read_iops);
    let db_lat = single.and_then(|b| b.read_lat_us);
    let iops_ratio = ratio(best_iops, raw.max_iops);
    let lat_ratio = ratio(db_lat, qd1_lat);
    let upd = best.as_ref().and_then(|b| {
        db_points
            .iter()
            .find(|p| p.update_pct == 20 && p.sessions == b.sessions)
    });
    let why = explain(
        iops_ratio,
        lat_ratio,
        best.as_ref(),
        upd,
        best.as_ref().map_or(1, |b| b.sessions as u64),
    );
    AssessSummary {
        raw,
        db: AssessDb {
            backend: backend.to_string(),
            points: db_points.clone(),
        },
        best_db: best,
        db_vs_raw: DbVsRaw {
            iops_ratio,
            latency_ratio: lat_ratio,
        },
        explanation: why,
    }
}

fn explain(
    iops_ratio: Option<f64>,
    lat_ratio: Option<f64>,
    best: Option<&DbPoint>,
    upd: Option<&DbPoint>,
    sessions: u64,
) -> String {
    let mut parts = Vec::new();
    let cached = best.and_then(|b| b.os_cache_hit_pct).unwrap_or(0.0);
    if cached > 10.0 {
        parts.push(format!(
            "{cached:.0} % of the database's reads were served by the OS page cache, not the storage: its figures describe memory (use a data set larger than RAM, --os-cache-limit as root, or direct I/O)"
        ));
    } else if let Some(r) = iops_ratio {
        parts.push(format!(
            "the database reached {:.0} % of the raw maximum because each session waits for one synchronous single-block read at a time ({sessions} session(s) ≈ {sessions} outstanding I/O(s)), while calibrate keeps many asynchronous reads in flight",
            r * 100.0
        ));
    }
    if let Some(l) = lat_ratio.filter(|_| cached <= 10.0) {
        if l > 1.2 {
            parts.push(format!(
                "a database read costs {l:.1}× the raw QD1 latency: buffer-cache management, locking and executor CPU sit on every read path"
            ));
        }
    }
    if let (Some(b), Some(u)) = (best, upd) {
        if let (Some(r0), Some(r1)) = (b.physical_read_iops, u.physical_read_iops) {
            if r1 < r0 * 0.9 {
                parts.push(format!(
                    "with 20 % updates reads fall to {:.0} % as commits wait for WAL syncs and dirty pages are written back",
                    r1 / r0 * 100.0
                ));
            }
        }
    }
    if parts.is_empty() {
        "not enough figures to explain the gap (see the warnings)".into()
    } else {
        let mut t = parts.join("; ");
        t.push('.');
        let mut c = t.chars();
        c.next()
            .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
            .unwrap_or(t)
    }
}

fn render(s: &AssessSummary, warnings: &[String], out: &Path, elapsed: f64) -> String {
    let mut t = String::new();
    let num = |v: Option<f64>, d: usize| v.map_or("-".to_string(), |x| format!("{x:.d$}"));
    let raw = &s.raw;
    let _ = writeln!(t, "iolens assess ({elapsed:.0} s)");
    let _ = writeln!(
        t,
        "raw:  max_iops = {}  latency = {} ms  max_mbps = {}   (QD1: {} IOPS at {} us)",
        num(raw.max_iops, 0),
        num(raw.latency_ms, 3),
        num(raw.max_mbps, 0),
        num(raw.qd1_iops, 0),
        num(raw.qd1_lat_us, 1)
    );
    let _ = writeln!(t, "database ({}):", s.db.backend);
    let _ = writeln!(
        t,
        "  {:>8} {:>7} {:>12} {:>12} {:>12} {:>11} {:>14} {:>10}",
        "sessions",
        "upd %",
        "phys rd/s",
        "device rd/s",
        "read lat us",
        "write/s",
        "rd per DBcpu",
        "OS cache %"
    );
    for p in &s.db.points {
        let _ = writeln!(
            t,
            "  {:>8} {:>7} {:>12} {:>12} {:>12} {:>11} {:>14} {:>10}",
            p.sessions.to_string(),
            p.update_pct.to_string(),
            num(p.physical_read_iops, 0),
            num(p.device_read_iops, 0),
            num(p.read_lat_us, 1),
            num(p.physical_write_iops, 0),
            num(p.reads_per_db_cpu_s, 0),
            num(p.os_cache_hit_pct, 1)
        );
    }
    let b = s.best_db.as_ref();
    let _ = writeln!(t, "side by side:");
    let _ = writeln!(t, "  {:<34} {:>14} {:>14}", "", "raw", "database");
    let _ = writeln!(
        t,
        "  {:<34} {:>14} {:>14}",
        "read IOPS (best)",
        num(raw.max_iops, 0),
        num(b.and_then(|b| b.physical_read_iops), 0)
    );
    let single =
        s.db.points
            .iter()
            .find(|p| p.sessions == 1 && p.update_pct == 0);
    let _ = writeln!(
        t,
        "  {:<34} {:>14} {:>14}",
        "single-block read latency (us)",
        num(raw.qd1_lat_us, 1),
        num(single.and_then(|p| p.read_lat_us), 1)
    );
    let _ = writeln!(
        t,
        "  {:<34} {:>14} {:>14}",
        "reads per DB CPU second",
        "",
        num(b.and_then(|b| b.reads_per_db_cpu_s), 0)
    );
    let _ = writeln!(
        t,
        "  {:<34} {:>14} {:>14}",
        "share served by the OS cache (%)",
        "0 (direct)",
        num(b.and_then(|b| b.os_cache_hit_pct), 1)
    );
    let _ = writeln!(t, "why: {}", s.explanation);
    for w in warnings {
        let _ = writeln!(t, "warning: {w}");
    }
    let _ = writeln!(t, "results: {}", out.display());
    t
}
