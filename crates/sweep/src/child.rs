//! One point as a child process of the iolens binary (see the crate doc for
//! why each point is its own process).

use crate::{PlannedPoint, SweepError};
use iolens_core::interrupt;
use iolens_core::sweep::PointStatus;
use iolens_core::{ResultDoc, Status};
use std::fs::{self, File};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// A stopped child gets this long to write its result before it is killed.
const STOP_GRACE: Duration = Duration::from_secs(60);

/// Runs one child and waits for it, forwarding a stop request; `tick` gets
/// the seconds elapsed ten times a second. Returns its exit status and the
/// seconds it ran.
pub(crate) fn run_child(
    exe: &Path,
    p: &PlannedPoint,
    pdir: &Path,
    name: &str,
    mut tick: impl FnMut(f64),
) -> Result<(ExitStatus, f64), SweepError> {
    let log = File::create(pdir.join("sweep.log"))
        .map_err(SweepError::io(pdir.join("sweep.log").display().to_string()))?;
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
        .map_err(SweepError::io(format!("starting {}", exe.display())))?;
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
                Some(t) if t.elapsed() > STOP_GRACE => {
                    let _ = child.kill();
                }
                _ => {}
            }
        }
        tick(started.elapsed().as_secs_f64());
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The status and error recorded in a point's result.json, if it has one.
pub(crate) fn result_status(dir: &Path) -> Option<(Status, Option<String>)> {
    let doc = ResultDoc::load(&dir.join("result.json")).ok()?;
    Some((doc.status, doc.error))
}

/// How a finished child's point stands, and what went wrong.
pub(crate) fn judge(pdir: &Path, code: Option<i32>) -> (PointStatus, Option<String>) {
    let log_line = || last_line(&pdir.join("sweep.log"));
    match result_status(pdir) {
        Some((Status::Ok, e)) => (PointStatus::Ok, e),
        _ if interrupt::requested() || code == Some(130) => {
            (PointStatus::Interrupted, Some("interrupted".into()))
        }
        Some((_, e)) => (PointStatus::Failed, e.or_else(log_line)),
        None => (
            PointStatus::Failed,
            log_line().or_else(|| {
                Some(match code {
                    Some(c) => format!("exited with code {c}"),
                    None => "killed by a signal".into(),
                })
            }),
        ),
    }
}

/// The last non-empty line of a child's log, without the `iolens: ` prefix.
fn last_line(log: &Path) -> Option<String> {
    let text = fs::read_to_string(log).ok()?;
    text.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| l.trim_start_matches("iolens: ").to_string())
}
