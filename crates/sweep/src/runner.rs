//! Running a plan: the sweep directory, one child per point, `sweep.json`
//! after every point, and progress through [`Progress`].

use crate::child::{judge, result_status, run_child};
use crate::dir::{move_aside, now, Lock, PointState, SweepDir};
use crate::{Plan, SweepError};
use iolens_core::interrupt;
use iolens_core::result::{default_dir_name, ResultDir};
use iolens_core::sweep::{PointStatus, SweepDoc, SweepStatus};
use iolens_core::Status;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What to sweep and where.
#[derive(Debug, Clone)]
pub struct SweepOptions {
    /// The sweep file (TOML).
    pub file: PathBuf,
    /// The sweep directory; None: `<results_root>/<UTC timestamp>-<name>/`.
    pub output: Option<PathBuf>,
    /// Where sweep directories go by default.
    pub results_root: PathBuf,
    /// Continue the sweep in `output`: points that finished ok are kept.
    pub resume: bool,
    /// The command-line definition of iolens: point options are checked against it.
    pub cli: clap::Command,
    /// The iolens binary each point runs; None: this executable.
    pub exe: Option<PathBuf>,
}

/// The sweep is starting.
pub struct Start<'a> {
    pub plan: &'a Plan,
    pub out: &'a Path,
    /// Points kept from an earlier run (`--resume`).
    pub kept: usize,
}

/// A point is running (about ten times a second).
pub struct Tick<'a> {
    /// Index of the point in the plan.
    pub index: usize,
    /// Number of points in the plan.
    pub total: usize,
    pub dir: &'a str,
    /// Seconds since the point started.
    pub elapsed_s: f64,
    /// Seconds the sweep has left, when they can be estimated.
    pub eta_s: Option<f64>,
    /// Points finished (ok or failed) before this one.
    pub done_before: usize,
}

/// A point has finished.
pub struct PointDone<'a> {
    pub index: usize,
    pub total: usize,
    pub dir: &'a str,
    /// Its result directory.
    pub pdir: &'a Path,
    pub status: PointStatus,
    /// What went wrong (not set for `ok`).
    pub error: Option<&'a str>,
    /// Seconds it ran.
    pub took_s: f64,
    /// Seconds the points still pending should take, once one point ran ok.
    pub eta_s: Option<f64>,
}

/// How the sweep ended.
#[derive(Debug, Clone)]
pub struct SweepOutcome {
    pub name: String,
    pub status: SweepStatus,
    pub ok: usize,
    pub failed: usize,
    pub total: usize,
    pub elapsed_s: f64,
    /// The sweep directory.
    pub out: PathBuf,
}

/// Receives the sweep's progress; the library itself prints nothing.
pub trait Progress {
    fn started(&mut self, _start: &Start<'_>) {}
    fn tick(&mut self, _tick: &Tick<'_>) {}
    fn point_done(&mut self, _done: &PointDone<'_>) {}
}

/// Reads and checks the sweep file; returns the plan and the file's text.
pub fn plan(opts: &SweepOptions) -> Result<(Plan, String), SweepError> {
    if opts.resume && opts.output.is_none() {
        return Err(SweepError::BadInput(
            "--resume needs --output DIR: the sweep directory to continue".into(),
        ));
    }
    let text = fs::read_to_string(&opts.file)
        .map_err(|e| SweepError::BadInput(format!("{}: {e}", opts.file.display())))?;
    let plan = Plan::parse(&opts.file, &text, &opts.cli)?;
    plan.check_args(&opts.file, &opts.cli)?;
    Ok((plan, text))
}

/// Runs the sweep: every point not yet ok, one child process each.
pub fn run(opts: &SweepOptions, progress: &mut dyn Progress) -> Result<SweepOutcome, SweepError> {
    let (plan, text) = plan(opts)?;
    let out = match &opts.output {
        Some(o) => o.clone(),
        None => opts.results_root.join(default_dir_name(&plan.name)),
    };
    check_output(&out, opts.resume)?;
    let mut started_at = now();
    if opts.resume {
        if let Some(s) = resumed_started_at(&out, &plan)? {
            started_at = s;
        }
    }
    let dir = ResultDir::create(&out)?;
    let _lock = Lock::take(&out)?;
    if !opts.resume {
        dir.write_file("sweep.toml", text.as_bytes())?;
    }
    let exe = match &opts.exe {
        Some(e) => e.clone(),
        None => std::env::current_exe().map_err(SweepError::io("locating the iolens binary"))?,
    };
    let states = plan
        .points
        .iter()
        .map(|p| PointState {
            status: match result_status(&out.join(&p.dir)) {
                Some((Status::Ok, _)) => PointStatus::Ok,
                _ => PointStatus::Pending,
            },
            ..PointState::default()
        })
        .collect();
    let sw = SweepDir {
        dir,
        plan: &plan,
        file: opts.file.clone(),
        started_at,
        states,
    };
    sw.write(SweepStatus::Running)?;
    let kept = sw.count(PointStatus::Ok);
    progress.started(&Start {
        plan: &plan,
        out: &out,
        kept,
    });
    let mut runner = Runner {
        out: &out,
        exe: &exe,
        sw,
        durations: Vec::new(),
    };
    let started = Instant::now();
    let interrupted = runner.run_points(progress)?;
    runner.finish(interrupted, started.elapsed().as_secs_f64())
}

/// The sweep directory must be new (or, with `resume`, hold a sweep).
fn check_output(out: &Path, resume: bool) -> Result<(), SweepError> {
    let existing = out.join("sweep.json");
    if existing.exists() && !resume {
        return Err(SweepError::BadInput(format!(
            "{} already holds a sweep; add --resume to continue it, or choose another --output",
            out.display()
        )));
    }
    if resume && !existing.exists() {
        return Err(SweepError::BadInput(format!(
            "{} holds no sweep to resume (no sweep.json); run without --resume to start one",
            out.display()
        )));
    }
    if !existing.exists()
        && out.is_dir()
        && fs::read_dir(out)
            .map(|mut d| d.next().is_some())
            .unwrap_or(false)
    {
        return Err(SweepError::BadInput(format!(
            "{} is not empty; choose a new --output for the sweep",
            out.display()
        )));
    }
    Ok(())
}

/// Checks that the sweep in `out` was started from the same plan; returns
/// when it started.
fn resumed_started_at(out: &Path, plan: &Plan) -> Result<Option<String>, SweepError> {
    let existing = out.join("sweep.json");
    let old: SweepDoc = serde_json::from_str(&fs::read_to_string(&existing)?)
        .map_err(|e| SweepError::BadInput(format!("{}: {e}", existing.display())))?;
    let same = old.points.len() == plan.points.len()
        && old
            .points
            .iter()
            .zip(&plan.points)
            .all(|(o, p)| o.dir == p.dir && o.args == p.argv);
    if !same {
        return Err(SweepError::BadInput(format!(
            "{} was started from a different plan (the sweep file changed); resume with the same file, or choose a new --output",
            out.display()
        )));
    }
    Ok((!old.started_at.is_empty()).then_some(old.started_at))
}

/// The state of a running sweep.
struct Runner<'a> {
    out: &'a Path,
    exe: &'a Path,
    sw: SweepDir<'a>,
    /// Seconds each point that ended ok ran.
    durations: Vec<f64>,
}

impl Runner<'_> {
    /// Runs every point not yet ok; returns whether a stop request ended the loop.
    fn run_points(&mut self, progress: &mut dyn Progress) -> Result<bool, SweepError> {
        let plan = self.sw.plan;
        let n = plan.points.len();
        for i in 0..n {
            if self.sw.states[i].status == PointStatus::Ok {
                continue;
            }
            if interrupt::requested() {
                return Ok(true);
            }
            let st = self.run_point(i, progress)?;
            if st == PointStatus::Interrupted && interrupt::requested() {
                return Ok(true);
            }
            if i + 1 < n && !plan.pause.is_zero() {
                let until = Instant::now() + plan.pause;
                while Instant::now() < until && !interrupt::requested() {
                    std::thread::sleep(Duration::from_millis(100));
                }
            }
        }
        Ok(false)
    }

    /// The mean seconds of the points that ran ok.
    fn mean_s(&self) -> Option<f64> {
        let d = &self.durations;
        (!d.is_empty()).then(|| d.iter().sum::<f64>() / d.len() as f64)
    }

    /// Estimate of what remains from point `i` on, this point included.
    fn estimate(&self, i: usize) -> Option<f64> {
        let plan = self.sw.plan;
        let avg = self.mean_s();
        plan.points[i..]
            .iter()
            .zip(&self.sw.states[i..])
            .filter(|(_, s)| s.status != PointStatus::Ok)
            .map(|(q, _)| {
                avg.or_else(|| plan.expected_s(q))
                    .map(|s| s + plan.pause.as_secs_f64())
            })
            .sum()
    }

    /// Runs point `i` and records how it ended.
    fn run_point(
        &mut self,
        i: usize,
        progress: &mut dyn Progress,
    ) -> Result<PointStatus, SweepError> {
        let plan = self.sw.plan;
        let (n, p) = (plan.points.len(), &plan.points[i]);
        move_aside(self.out, &p.dir)?;
        let pdir = self.out.join(&p.dir);
        fs::create_dir_all(&pdir).map_err(SweepError::io(pdir.display().to_string()))?;
        self.sw.states[i].status = PointStatus::Running;
        self.sw.write(SweepStatus::Running)?;
        let estimate = self.estimate(i);
        let done_before = self.sw.count(PointStatus::Ok) + self.sw.count(PointStatus::Failed);
        let name = format!("{}-{}", plan.name, p.dir);
        let (status, took) = run_child(self.exe, p, &pdir, &name, |el| {
            progress.tick(&Tick {
                index: i,
                total: n,
                dir: &p.dir,
                elapsed_s: el,
                eta_s: estimate.map(|e| e - el),
                done_before,
            })
        })?;
        let code = status.code();
        let (st, err) = judge(&pdir, code);
        self.sw.states[i] = PointState {
            status: st,
            exit_code: code,
            duration_s: Some(took),
            error: if st == PointStatus::Ok { None } else { err },
        };
        self.sw.write(SweepStatus::Running)?;
        if st == PointStatus::Ok {
            self.durations.push(took);
        }
        let left = self.sw.count(PointStatus::Pending);
        let eta_s = match self.mean_s() {
            Some(a) if left > 0 => Some(left as f64 * (a + plan.pause.as_secs_f64())),
            _ => None,
        };
        progress.point_done(&PointDone {
            index: i,
            total: n,
            dir: &p.dir,
            pdir: &pdir,
            status: st,
            error: self.sw.states[i].error.as_deref(),
            took_s: took,
            eta_s,
        });
        Ok(st)
    }

    /// Writes the final sweep.json and says how the sweep ended.
    fn finish(self, interrupted: bool, elapsed_s: f64) -> Result<SweepOutcome, SweepError> {
        let n = self.sw.plan.points.len();
        let ok = self.sw.count(PointStatus::Ok);
        let failed = self.sw.count(PointStatus::Failed);
        let status = if interrupted || interrupt::requested() && ok + failed < n {
            SweepStatus::Interrupted
        } else if failed > 0 {
            SweepStatus::Failed
        } else {
            SweepStatus::Ok
        };
        self.sw.write(status)?;
        Ok(SweepOutcome {
            name: self.sw.plan.name.clone(),
            status,
            ok,
            failed,
            total: n,
            elapsed_s,
            out: self.out.to_path_buf(),
        })
    }
}
