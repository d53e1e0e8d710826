//! `iolens sweep FILE.toml`: the harness. Runs one iolens command per point
//! of a plan (the cartesian product of the file's axes, or an explicit list
//! of points), each as a child process of this binary writing its own result
//! directory inside one sweep directory.
//!
//! - `sweep.json` in the sweep directory records the plan and each point's
//!   status; it is rewritten (atomically) after every point.
//! - `--resume` keeps points whose result.json says `ok` and runs the rest;
//!   an earlier, unfinished attempt is moved to `.attempts/`, never deleted.
//! - A failed point is recorded and the sweep goes on.
//! - Ctrl-C / SIGTERM stops the running child (it writes its result as
//!   `interrupted`), keeps every finished point and exits with 130.
//!
//! The file format is documented in docs/sweep.md.

use crate::errors::usage;
use anyhow::{Context, Result};
use clap::{Args, Parser};
use iolens_core::result::{default_dir_name, ResultDir};
use iolens_core::{interrupt, parse_duration};
use iolens_report::{fmt, load::SWEEP_SCHEMA};
use serde_json::{json, Value};
use std::fs::{self, File};
use std::io::{IsTerminal, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant, SystemTime};

/// `iolens sweep`.
#[derive(Args, Debug, Clone)]
pub struct SweepArgs {
    /// The sweep file (TOML): the command, its options, and the axes or points to run.
    #[arg(value_name = "FILE.toml")]
    pub file: PathBuf,
    /// Sweep directory (default: iolens-results/<UTC timestamp>-<name>/).
    #[arg(long, value_name = "DIR")]
    pub output: Option<PathBuf>,
    /// Continue the sweep in --output: points that finished ok are kept, the others run.
    #[arg(long)]
    pub resume: bool,
    /// Print each point's command line and exit without running anything.
    #[arg(long)]
    pub dry_run: bool,
    /// No progress on stderr.
    #[arg(long, short)]
    pub quiet: bool,
}

/// Commands a sweep cannot run.
const NOT_SWEEPABLE: &[&str] = &["sweep", "report", "compare", "help"];

/// Options the sweep sets itself for every point.
const RESERVED: &[&str] = &["output", "json", "quiet"];

/// Keys of the sweep file.
const FILE_KEYS: &[&str] = &["command", "name", "options", "axes", "points", "pause"];

/// One point of the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedPoint {
    /// Directory name inside the sweep directory (`03-qd=16`).
    pub dir: String,
    /// The axis values of this point, in axis order.
    pub params: Vec<(String, toml::Value)>,
    /// Command-line arguments (command words and options; not --output/--quiet).
    pub argv: Vec<String>,
    /// The command has `--quiet`.
    pub quiet_flag: bool,
    /// The command has `--name`.
    pub name_flag: bool,
}

impl PlannedPoint {
    /// The child's whole command line: the point's arguments, its result
    /// directory, no live progress (when the command has `--quiet`), and a
    /// name (when it has `--name` and the file sets none).
    pub fn child_args(&self, out: &Path, name: &str) -> Vec<String> {
        let mut v = self.argv.clone();
        v.push("--output".into());
        v.push(out.display().to_string());
        if self.quiet_flag {
            v.push("--quiet".into());
        }
        if self.name_flag && !self.argv.iter().any(|a| a == "--name") {
            v.push("--name".into());
            v.push(name.into());
        }
        v
    }
}

/// Whether the (sub)command named by `words` has the long option `long`;
/// None when there is no such command.
fn accepts(words: &[String], long: &str) -> Option<bool> {
    use clap::CommandFactory;
    let root = crate::args::Cli::command();
    let mut cmd = &root;
    for w in words {
        cmd = cmd.find_subcommand(w)?;
    }
    let found = cmd.get_arguments().any(|a| a.get_long() == Some(long));
    Some(found)
}

/// A validated sweep file.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Name of the sweep.
    pub name: String,
    /// The command words (`["db", "run"]`).
    pub command: Vec<String>,
    /// Names of the parameters, in order.
    pub param_order: Vec<String>,
    /// The points, in the order they run.
    pub points: Vec<PlannedPoint>,
    /// Pause between points.
    pub pause: Duration,
}

fn bad<T>(file: &Path, msg: impl std::fmt::Display) -> Result<T> {
    usage(format!("{}: {msg}", file.display()))
}

/// Validates an option name (`rate_iops`, `rate-iops`) and returns its flag (`--rate-iops`).
fn flag(file: &Path, key: &str) -> Result<String> {
    if key.is_empty()
        || !key
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
    {
        return bad(
            file,
            format!("'{key}' is not an option name: use the command's long option, e.g. rate_iops or rate-iops"),
        );
    }
    let norm = key.replace('_', "-");
    if RESERVED.contains(&norm.as_str()) {
        return bad(
            file,
            format!("option '{key}' is set by the sweep for every point; remove it (use --output on the sweep)"),
        );
    }
    Ok(format!("--{norm}"))
}

/// The text of a scalar option value.
fn scalar_text(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        toml::Value::Datetime(d) => Some(d.to_string()),
        _ => None,
    }
}

/// Appends `key = value` as command-line arguments.
fn push_option(file: &Path, argv: &mut Vec<String>, key: &str, v: &toml::Value) -> Result<()> {
    let f = flag(file, key)?;
    match v {
        toml::Value::Boolean(true) => argv.push(f),
        toml::Value::Boolean(false) => {}
        toml::Value::Array(items) => {
            for item in items {
                match scalar_text(item) {
                    Some(t) => {
                        argv.push(f.clone());
                        argv.push(t);
                    }
                    None => {
                        return bad(
                            file,
                            format!("option '{key}': a list may hold only strings and numbers"),
                        )
                    }
                }
            }
        }
        toml::Value::Table(_) => {
            return bad(
                file,
                format!(
                    "option '{key}': expected a string, number, boolean or list, found a table"
                ),
            )
        }
        other => {
            argv.push(f);
            argv.push(scalar_text(other).unwrap_or_default());
        }
    }
    Ok(())
}

/// A value as it appears in a directory name.
fn dir_value(v: &toml::Value) -> String {
    let t = match v {
        toml::Value::Array(a) => a
            .iter()
            .map(|x| scalar_text(x).unwrap_or_default())
            .collect::<Vec<_>>()
            .join("+"),
        toml::Value::Boolean(b) => b.to_string(),
        other => scalar_text(other).unwrap_or_default(),
    };
    let s: String = t
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+') {
                c
            } else {
                '_'
            }
        })
        .collect();
    s.chars().take(40).collect()
}

/// TOML value → JSON value (for sweep.json).
pub fn to_json(v: &toml::Value) -> Value {
    match v {
        toml::Value::String(s) => json!(s),
        toml::Value::Integer(i) => json!(i),
        toml::Value::Float(f) => json!(f),
        toml::Value::Boolean(b) => json!(b),
        toml::Value::Datetime(d) => json!(d.to_string()),
        toml::Value::Array(a) => Value::Array(a.iter().map(to_json).collect()),
        toml::Value::Table(t) => {
            Value::Object(t.iter().map(|(k, v)| (k.clone(), to_json(v))).collect())
        }
    }
}

impl Plan {
    /// Parses and validates a sweep file's text (`file` names it in messages).
    pub fn parse(file: &Path, text: &str) -> Result<Plan> {
        let doc: toml::Table = match text.parse() {
            Ok(d) => d,
            Err(e) => return bad(file, format!("not valid TOML: {}", e.to_string().trim())),
        };
        for k in doc.keys() {
            if !FILE_KEYS.contains(&k.as_str()) {
                return bad(
                    file,
                    format!("unknown key '{k}' (expected: {})", FILE_KEYS.join(", ")),
                );
            }
        }
        let command: Vec<String> = match doc.get("command") {
            Some(toml::Value::String(s)) => s.split_whitespace().map(str::to_string).collect(),
            Some(_) => return bad(file, "'command' must be a string, e.g. command = \"run\""),
            None => {
                return bad(
                    file,
                    "missing 'command': the iolens command to run at each point, e.g. command = \"run\" or \"db run\"",
                )
            }
        };
        if command.is_empty() || NOT_SWEEPABLE.contains(&command[0].as_str()) {
            return bad(
                file,
                format!(
                    "'command = \"{}\"' cannot be swept: name a measuring command such as run, calibrate, matrix or \"db run\"",
                    command.join(" ")
                ),
            );
        }
        let name = match doc.get("name") {
            Some(toml::Value::String(s)) if !s.trim().is_empty() => s.trim().to_string(),
            Some(_) => return bad(file, "'name' must be a non-empty string"),
            None => file
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "sweep".into()),
        };
        let pause = match doc.get("pause") {
            None => Duration::ZERO,
            Some(toml::Value::String(s)) => match parse_duration(s) {
                Ok(d) => d,
                Err(e) => return bad(file, format!("pause: {e}")),
            },
            Some(toml::Value::Integer(i)) if *i >= 0 => Duration::from_secs(*i as u64),
            Some(_) => return bad(file, "'pause' must be a duration such as \"10s\""),
        };
        let table = |key: &str| -> Result<toml::Table> {
            match doc.get(key) {
                None => Ok(toml::Table::new()),
                Some(toml::Value::Table(t)) => Ok(t.clone()),
                Some(_) => bad(file, format!("'{key}' must be a table ([{key}])")),
            }
        };
        let options = table("options")?;
        let axes_t = table("axes")?;
        let mut axes: Vec<(String, Vec<toml::Value>)> = Vec::new();
        for (k, v) in &axes_t {
            flag(file, k)?;
            match v {
                toml::Value::Array(vals) if !vals.is_empty() => {
                    if vals.iter().any(|x| matches!(x, toml::Value::Table(_))) {
                        return bad(
                            file,
                            format!("axis '{k}': values must be strings, numbers or booleans"),
                        );
                    }
                    axes.push((k.clone(), vals.clone()));
                }
                _ => {
                    return bad(
                        file,
                        format!(
                            "axis '{k}' must be a non-empty list of values, e.g. {k} = [1, 2, 4]"
                        ),
                    )
                }
            }
        }
        let listed: Vec<toml::Table> = match doc.get("points") {
            None => Vec::new(),
            Some(toml::Value::Array(a)) if !a.is_empty() => a
                .iter()
                .map(|p| match p {
                    toml::Value::Table(t) => Ok(t.clone()),
                    _ => bad(
                        file,
                        "each entry of 'points' must be a table, e.g. [[points]] qd = 4",
                    ),
                })
                .collect::<Result<_>>()?,
            Some(_) => {
                return bad(
                    file,
                    "'points' must be a non-empty list of tables ([[points]])",
                )
            }
        };
        for (i, p) in listed.iter().enumerate() {
            for k in p.keys() {
                flag(file, k)?;
                if axes_t.contains_key(k) {
                    return bad(
                        file,
                        format!(
                            "point {} sets '{k}', which is also an axis: set it in one place",
                            i + 1
                        ),
                    );
                }
            }
        }
        // Parameter order: listed points' keys, then the axes.
        let mut param_order: Vec<String> = Vec::new();
        for p in &listed {
            for k in p.keys() {
                if !param_order.contains(k) {
                    param_order.push(k.clone());
                }
            }
        }
        param_order.extend(axes.iter().map(|(k, _)| k.clone()));

        // Points: each listed point (or one empty point) × the product of the axes.
        let bases: Vec<Vec<(String, toml::Value)>> = if listed.is_empty() {
            vec![Vec::new()]
        } else {
            listed
                .iter()
                .map(|t| t.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
                .collect()
        };
        let mut combos = bases;
        for (k, vals) in &axes {
            combos = combos
                .into_iter()
                .flat_map(|c| {
                    vals.iter().map(move |v| {
                        let mut c = c.clone();
                        c.push((k.clone(), v.clone()));
                        c
                    })
                })
                .collect();
        }
        const MAX_POINTS: usize = 100_000;
        if combos.len() > MAX_POINTS {
            return bad(
                file,
                format!("{} points: at most {MAX_POINTS} per sweep", combos.len()),
            );
        }
        let Some(true) = accepts(&command, "output") else {
            return bad(
                file,
                format!(
                    "`iolens {}` is not a measuring command with --output: name one such as run, calibrate, matrix or \"db run\"",
                    command.join(" ")
                ),
            );
        };
        let quiet_flag = accepts(&command, "quiet").unwrap_or(false);
        let name_flag = accepts(&command, "name").unwrap_or(false);
        let width = combos.len().to_string().len().max(2);
        let mut points = Vec::with_capacity(combos.len());
        for (i, params) in combos.into_iter().enumerate() {
            let mut argv = command.clone();
            for (k, v) in &options {
                let overridden = params
                    .iter()
                    .any(|(pk, _)| pk.replace('_', "-") == k.replace('_', "-"));
                if !overridden {
                    push_option(file, &mut argv, k, v)?;
                }
            }
            for (k, v) in &params {
                push_option(file, &mut argv, k, v)?;
            }
            let mut dir = format!("{:0width$}", i + 1);
            for (k, v) in &params {
                dir.push_str(&format!("-{k}={}", dir_value(v)));
            }
            points.push(PlannedPoint {
                dir,
                params,
                argv,
                quiet_flag,
                name_flag,
            });
        }
        Ok(Plan {
            name,
            command,
            param_order,
            points,
            pause,
        })
    }

    /// Checks every point's command line against the CLI definition, so a
    /// typo fails now rather than hours into the sweep.
    pub fn check_args(&self, file: &Path) -> Result<()> {
        for p in &self.points {
            let argv = std::iter::once("iolens".to_string())
                .chain(p.child_args(Path::new("out"), &self.name));
            if let Err(e) = crate::args::Cli::try_parse_from(argv) {
                let msg = e.to_string();
                let first = msg
                    .lines()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("")
                    .trim_start_matches("error: ")
                    .to_string();
                return bad(
                    file,
                    format!(
                        "point {}: `iolens {}` is not accepted: {first}",
                        p.dir,
                        shell_words(&p.argv)
                    ),
                );
            }
        }
        Ok(())
    }

    /// The expected seconds of a point, from its runtime/ramp/warmup options.
    fn expected_s(&self, p: &PlannedPoint) -> Option<f64> {
        let mut total = None;
        let mut it = p.argv.iter();
        while let Some(a) = it.next() {
            if matches!(
                a.as_str(),
                "--runtime" | "--ramp" | "--warmup" | "--duration"
            ) {
                if let Some(d) = it.next().and_then(|v| parse_duration(v).ok()) {
                    total = Some(total.unwrap_or(0.0) + d.as_secs_f64());
                }
            }
        }
        total.map(|t| t + 1.0)
    }
}

/// Arguments quoted for a POSIX shell where needed.
pub fn shell_words(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The state of one point, as recorded in sweep.json.
#[derive(Debug, Clone)]
struct PointState {
    status: String,
    exit_code: Option<i32>,
    duration_s: Option<f64>,
    error: Option<String>,
}

fn result_status(dir: &Path) -> Option<(String, Option<String>)> {
    let text = fs::read_to_string(dir.join("result.json")).ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    Some((
        v["status"].as_str()?.to_string(),
        v["error"].as_str().map(str::to_string),
    ))
}

/// The sweep directory being written.
struct SweepDir {
    dir: ResultDir,
    plan: Plan,
    file: PathBuf,
    started_at: String,
    states: Vec<PointState>,
}

impl SweepDir {
    fn write(&self, status: &str) -> Result<()> {
        let points: Vec<Value> = self
            .plan
            .points
            .iter()
            .zip(&self.states)
            .map(|(p, s)| {
                let mut o = json!({
                    "dir": p.dir,
                    "params": Value::Object(p.params.iter().map(|(k, v)| (k.clone(), to_json(v))).collect()),
                    "args": p.argv,
                    "status": s.status,
                });
                if let Some(c) = s.exit_code {
                    o["exit_code"] = json!(c);
                }
                if let Some(d) = s.duration_s {
                    o["duration_s"] = json!((d * 1000.0).round() / 1000.0);
                }
                if let Some(e) = &s.error {
                    o["error"] = json!(e);
                }
                o
            })
            .collect();
        let doc = json!({
            "schema": SWEEP_SCHEMA,
            "tool": {"name": "iolens", "version": env!("CARGO_PKG_VERSION")},
            "name": self.plan.name,
            "command": self.plan.command.join(" "),
            "file": self.file.display().to_string(),
            "status": status,
            "started_at": self.started_at,
            "updated_at": now(),
            "param_order": self.plan.param_order,
            "points": points,
        });
        let mut text = serde_json::to_string_pretty(&doc)?;
        text.push('\n');
        self.dir.write_file("sweep.json", text.as_bytes())?;
        Ok(())
    }
}

fn now() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

/// Holds `sweep.lock` (our pid) while the sweep runs.
struct Lock(PathBuf);

impl Lock {
    fn take(dir: &Path) -> Result<Lock> {
        let p = dir.join("sweep.lock");
        for _ in 0..2 {
            match fs::OpenOptions::new().write(true).create_new(true).open(&p) {
                Ok(mut f) => {
                    let _ = write!(f, "{}", std::process::id());
                    return Ok(Lock(p));
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    let pid: i32 = fs::read_to_string(&p)
                        .ok()
                        .and_then(|s| s.trim().parse().ok())
                        .unwrap_or(0);
                    // SAFETY: kill with signal 0 only checks that the process exists.
                    let alive = pid > 0 && unsafe { libc::kill(pid, 0) } == 0;
                    if alive {
                        return usage(format!(
                            "{} is in use by a running sweep (pid {pid}); wait for it or stop it",
                            dir.display()
                        ));
                    }
                    let _ = fs::remove_file(&p);
                }
                Err(e) => return Err(e).with_context(|| p.display().to_string()),
            }
        }
        usage(format!("{}: cannot take sweep.lock", dir.display()))
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

/// Moves an unfinished attempt aside (`.attempts/<dir>-<n>`): nothing is deleted.
fn move_aside(sweep: &Path, dir: &str) -> Result<()> {
    let src = sweep.join(dir);
    if !src.exists() {
        return Ok(());
    }
    let attempts = sweep.join(".attempts");
    fs::create_dir_all(&attempts).with_context(|| attempts.display().to_string())?;
    let mut n = 1;
    while attempts.join(format!("{dir}-{n}")).exists() {
        n += 1;
    }
    fs::rename(&src, attempts.join(format!("{dir}-{n}")))
        .with_context(|| format!("moving {} aside", src.display()))
}

fn last_line(log: &Path) -> Option<String> {
    let text = fs::read_to_string(log).ok()?;
    text.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| l.trim_start_matches("iolens: ").to_string())
}

fn hms(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, (s % 3600) / 60)
    } else if s >= 60 {
        format!("{}m{:02}s", s / 60, s % 60)
    } else {
        format!("{s}s")
    }
}

/// Runs one child and waits for it, forwarding a stop request. Returns its exit status.
fn run_child(
    exe: &Path,
    p: &PlannedPoint,
    pdir: &Path,
    name: &str,
    mut tick: impl FnMut(f64),
) -> Result<(ExitStatus, f64)> {
    let log = File::create(pdir.join("sweep.log"))
        .with_context(|| pdir.join("sweep.log").display().to_string())?;
    let mut cmd = Command::new(exe);
    cmd.args(p.child_args(pdir, name))
        .stdin(Stdio::null())
        .stdout(log.try_clone()?)
        .stderr(log);
    // SAFETY: prctl is async-signal-safe; it makes the child stop if the sweep dies.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM);
            Ok(())
        });
    }
    let mut child = cmd
        .spawn()
        .with_context(|| format!("starting {}", exe.display()))?;
    let started = Instant::now();
    let mut stop_sent: Option<Instant> = None;
    loop {
        if let Some(st) = child.try_wait()? {
            return Ok((st, started.elapsed().as_secs_f64()));
        }
        if interrupt::requested() {
            match stop_sent {
                None => {
                    // SAFETY: sending a signal to our own child process.
                    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
                    stop_sent = Some(Instant::now());
                }
                Some(t) if t.elapsed() > Duration::from_secs(60) => {
                    let _ = child.kill();
                }
                _ => {}
            }
        }
        tick(started.elapsed().as_secs_f64());
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// A one-line description of a finished point's figures.
fn headline(pdir: &Path) -> String {
    let Ok(pts) = iolens_report::load::load_result(pdir, "p") else {
        return String::new();
    };
    let Some(p) = pts.first() else {
        return String::new();
    };
    let f = &p.figures;
    let mut parts = Vec::new();
    if let Some(i) = f.iops() {
        parts.push(format!("{} IOPS", fmt::count(i)));
    }
    if let Some(m) = f.get("mbps").filter(|m| *m > 0.0) {
        parts.push(format!("{} MB/s", fmt::sig(m)));
    }
    if let Some(l) = f.lat_mean_us() {
        parts.push(format!(
            "{} mean {}{}",
            f.lat_op(),
            fmt::latency_us(l),
            f.lat_p99_us()
                .map_or(String::new(), |p| format!(", p99 {}", fmt::latency_us(p)))
        ));
    }
    parts.join(", ")
}

pub fn run(a: SweepArgs) -> Result<u8> {
    if a.resume && a.output.is_none() {
        return usage("--resume needs --output DIR: the sweep directory to continue");
    }
    let text = match fs::read_to_string(&a.file) {
        Ok(t) => t,
        Err(e) => return usage(format!("{}: {e}", a.file.display())),
    };
    let plan = Plan::parse(&a.file, &text)?;
    plan.check_args(&a.file)?;
    if a.dry_run {
        for p in &plan.points {
            println!("{}: iolens {}", p.dir, shell_words(&p.argv));
        }
        println!("{} points", plan.points.len());
        return Ok(0);
    }
    let out = match &a.output {
        Some(o) => o.clone(),
        None => PathBuf::from(crate::output::RESULTS_ROOT).join(default_dir_name(&plan.name)),
    };
    let existing = out.join("sweep.json");
    if existing.exists() && !a.resume {
        return usage(format!(
            "{} already holds a sweep; add --resume to continue it, or choose another --output",
            out.display()
        ));
    }
    if a.resume && !existing.exists() {
        return usage(format!(
            "{} holds no sweep to resume (no sweep.json); run without --resume to start one",
            out.display()
        ));
    }
    if !existing.exists()
        && out.is_dir()
        && fs::read_dir(&out)
            .map(|mut d| d.next().is_some())
            .unwrap_or(false)
    {
        return usage(format!(
            "{} is not empty; choose a new --output for the sweep",
            out.display()
        ));
    }
    let mut started_at = now();
    if a.resume {
        let old: Value = serde_json::from_str(&fs::read_to_string(&existing)?)
            .map_err(|e| crate::errors::UsageError(format!("{}: {e}", existing.display())))?;
        let old_points = old["points"].as_array().cloned().unwrap_or_default();
        let same = old_points.len() == plan.points.len()
            && old_points.iter().zip(&plan.points).all(|(o, p)| {
                o["dir"].as_str() == Some(p.dir.as_str()) && o["args"] == json!(p.argv)
            });
        if !same {
            return usage(format!(
                "{} was started from a different plan (the sweep file changed); resume with the same file, or choose a new --output",
                out.display()
            ));
        }
        if let Some(s) = old["started_at"].as_str() {
            started_at = s.to_string();
        }
    }
    let dir = ResultDir::create(&out)?;
    let _lock = Lock::take(&out)?;
    if !a.resume {
        dir.write_file("sweep.toml", text.as_bytes())?;
    }
    let exe = std::env::current_exe().context("locating the iolens binary")?;
    let states: Vec<PointState> = plan
        .points
        .iter()
        .map(|p| {
            let st = result_status(&out.join(&p.dir));
            PointState {
                status: match &st {
                    Some((s, _)) if s == "ok" => "ok".into(),
                    _ => "pending".into(),
                },
                exit_code: None,
                duration_s: None,
                error: None,
            }
        })
        .collect();
    let mut sw = SweepDir {
        dir,
        plan: plan.clone(),
        file: a.file.clone(),
        started_at,
        states,
    };
    sw.write("running")?;

    let n = plan.points.len();
    let kept = sw.states.iter().filter(|s| s.status == "ok").count();
    let tty = std::io::stderr().is_terminal() && !a.quiet;
    let say = |line: &str| {
        if !a.quiet {
            let mut e = std::io::stderr();
            if tty {
                let _ = write!(e, "\r\x1b[2K");
            }
            let _ = writeln!(e, "{line}");
        }
    };
    say(&format!(
        "sweep '{}': {n} points of `iolens {}` → {}{}",
        plan.name,
        plan.command.join(" "),
        out.display(),
        if kept > 0 {
            format!(" ({kept} kept from the earlier run)")
        } else {
            String::new()
        }
    ));
    let sweep_started = Instant::now();
    let mut durations: Vec<f64> = Vec::new();
    let mut interrupted = false;
    for (i, p) in plan.points.iter().enumerate() {
        if sw.states[i].status == "ok" {
            continue;
        }
        if interrupt::requested() {
            interrupted = true;
            break;
        }
        move_aside(&out, &p.dir)?;
        let pdir = out.join(&p.dir);
        fs::create_dir_all(&pdir).with_context(|| pdir.display().to_string())?;
        sw.states[i].status = "running".into();
        sw.write("running")?;
        // Estimate of what remains, this point included.
        let remaining: Vec<&PlannedPoint> = plan.points[i..]
            .iter()
            .zip(&sw.states[i..])
            .filter(|(_, s)| s.status != "ok")
            .map(|(p, _)| p)
            .collect();
        let avg =
            (!durations.is_empty()).then(|| durations.iter().sum::<f64>() / durations.len() as f64);
        let estimate: Option<f64> = remaining
            .iter()
            .map(|q| {
                avg.or_else(|| plan.expected_s(q))
                    .map(|s| s + plan.pause.as_secs_f64())
            })
            .sum();
        let done_before = sw
            .states
            .iter()
            .filter(|s| s.status == "ok" || s.status == "failed")
            .count();
        let label = format!("{}/{}", i + 1, n);
        let (status, took) =
            run_child(&exe, p, &pdir, &format!("{}-{}", plan.name, p.dir), |el| {
                if tty {
                    let eta = estimate.map_or("?".into(), |e| hms(e - el));
                    let frac = done_before as f64 / n as f64;
                    let w = 20usize;
                    let filled = (frac * w as f64).round() as usize;
                    let mut e = std::io::stderr();
                    let _ = write!(
                        e,
                        "\r\x1b[2K[{}{}] {label} {}  {}  ETA {eta}",
                        "#".repeat(filled),
                        ".".repeat(w - filled),
                        p.dir,
                        hms(el)
                    );
                    let _ = e.flush();
                }
            })?;
        let code = status.code();
        let log_line = || last_line(&pdir.join("sweep.log"));
        let (st, err) = match result_status(&pdir) {
            Some((s, e)) if s == "ok" => ("ok".to_string(), e),
            _ if interrupt::requested() || code == Some(130) => {
                ("interrupted".to_string(), Some("interrupted".into()))
            }
            Some((_, e)) => ("failed".to_string(), e.or_else(log_line)),
            None => (
                "failed".to_string(),
                log_line().or_else(|| {
                    Some(match code {
                        Some(c) => format!("exited with code {c}"),
                        None => "killed by a signal".into(),
                    })
                }),
            ),
        };
        sw.states[i] = PointState {
            status: st.clone(),
            exit_code: code,
            duration_s: Some(took),
            error: if st == "ok" { None } else { err.clone() },
        };
        sw.write("running")?;
        if st == "ok" {
            durations.push(took);
        }
        let left: usize = sw.states.iter().filter(|s| s.status == "pending").count();
        let avg =
            (!durations.is_empty()).then(|| durations.iter().sum::<f64>() / durations.len() as f64);
        let eta = match avg {
            Some(a) if left > 0 => format!(
                "; ETA {}",
                hms(left as f64 * (a + plan.pause.as_secs_f64()))
            ),
            _ => String::new(),
        };
        let what = match st.as_str() {
            "ok" => headline(&pdir),
            "interrupted" => "stopped before its end".to_string(),
            _ => err.unwrap_or_default(),
        };
        say(&format!(
            "[{label}] {}: {st}, {what} ({}){eta}",
            p.dir,
            hms(took)
        ));
        if st == "interrupted" && interrupt::requested() {
            interrupted = true;
            break;
        }
        if i + 1 < n && !plan.pause.is_zero() {
            let until = Instant::now() + plan.pause;
            while Instant::now() < until && !interrupt::requested() {
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
    let ok = sw.states.iter().filter(|s| s.status == "ok").count();
    let failed = sw.states.iter().filter(|s| s.status == "failed").count();
    let final_status = if interrupted || interrupt::requested() && ok + failed < n {
        "interrupted"
    } else if failed > 0 {
        "failed"
    } else {
        "ok"
    };
    sw.write(final_status)?;
    let summary = format!(
        "sweep '{}' {final_status}: {ok} ok, {failed} failed, {} not run, of {n} points in {} → {}",
        plan.name,
        n - ok - failed,
        hms(sweep_started.elapsed().as_secs_f64()),
        out.display()
    );
    say(&summary);
    if !a.quiet {
        if final_status == "interrupted" {
            eprintln!(
                "continue with: iolens sweep {} --output {} --resume",
                a.file.display(),
                out.display()
            );
        }
        eprintln!("analyse with:  iolens report {}", out.display());
    }
    println!("{}", out.display());
    Ok(match final_status {
        "interrupted" => 130,
        "failed" => 1,
        _ => 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(text: &str) -> Result<Plan> {
        Plan::parse(Path::new("s.toml"), text)
    }

    #[test]
    fn axes_make_a_cartesian_product_in_file_order() {
        let p = plan(
            r#"
            command = "run"
            name = "qd"
            [options]
            target = ["/a", "/b"]
            rw = "randread"
            buffered = false
            verify = true
            [axes]
            bs = ["8k", "64k"]
            qd = [1, 4, 16]
            "#,
        )
        .unwrap();
        assert_eq!(p.points.len(), 6);
        assert_eq!(p.param_order, vec!["bs", "qd"]);
        assert_eq!(p.points[0].dir, "01-bs=8k-qd=1");
        assert_eq!(p.points[5].dir, "06-bs=64k-qd=16");
        assert_eq!(
            p.points[1].argv,
            vec![
                "run", "--target", "/a", "--target", "/b", "--rw", "randread", "--verify", "--bs",
                "8k", "--qd", "4"
            ]
        );
    }

    #[test]
    fn listed_points_combine_with_axes_and_override_options() {
        let p = plan(
            r#"
            command = "db run"
            [options]
            update_pct = 0
            runtime = "10s"
            [[points]]
            update_pct = 0
            [[points]]
            update_pct = 20
            [axes]
            sessions = [1, 2]
            "#,
        )
        .unwrap();
        assert_eq!(p.points.len(), 4);
        assert_eq!(p.name, "s");
        assert_eq!(p.param_order, vec!["update_pct", "sessions"]);
        assert_eq!(
            p.points[3].argv,
            vec![
                "db",
                "run",
                "--runtime",
                "10s",
                "--update-pct",
                "20",
                "--sessions",
                "2"
            ]
        );
        assert_eq!(p.expected_s(&p.points[0]), Some(11.0));
    }

    #[test]
    fn bad_files_say_what_to_fix() {
        let cases = [
            ("", "missing 'command'"),
            ("command = \"report\"", "cannot be swept"),
            ("command = \"nosuch\"", "not a measuring command"),
            ("command = \"run\"\n[axes]\nqd = []", "non-empty list"),
            (
                "command = \"run\"\n[options]\noutput = \"x\"",
                "set by the sweep",
            ),
            ("command = \"run\"\naxis = 1", "unknown key 'axis'"),
            (
                "command = \"run\"\n[options]\n\"Bad Key\" = 1",
                "not an option name",
            ),
            ("command = run", "not valid TOML"),
            (
                "command = \"run\"\n[axes]\nqd=[1]\n[[points]]\nqd = 2",
                "also an axis",
            ),
        ];
        for (text, want) in cases {
            let e = plan(text).unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: {e}");
            assert!(e.starts_with("s.toml: "), "{e}");
        }
    }

    #[test]
    fn unknown_options_are_caught_before_running() {
        let p = plan("command = \"run\"\n[axes]\nqdd = [1]").unwrap();
        let e = p.check_args(Path::new("s.toml")).unwrap_err().to_string();
        assert!(e.contains("--qdd"), "{e}");
        let ok =
            plan("command = \"run\"\n[options]\nengine = \"null\"\n[axes]\nqd = [1, 2]").unwrap();
        ok.check_args(Path::new("s.toml")).unwrap();
    }

    #[test]
    fn shell_words_quote_what_needs_it() {
        let v: Vec<String> = ["run", "--target", "/a b", "--x", "it's"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(shell_words(&v), "run --target '/a b' --x 'it'\\''s'");
    }
}
