//! The sweep directory: `sweep.json`, `sweep.lock` and `.attempts/`.

use crate::{Plan, SweepError};
use iolens_core::result::ResultDir;
use iolens_core::sweep::{PointStatus, SweepDoc, SweepPoint, SweepStatus, SweepTool, SWEEP_SCHEMA};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The state of one point, as recorded in sweep.json.
#[derive(Debug, Clone, Default)]
pub(crate) struct PointState {
    pub status: PointStatus,
    pub exit_code: Option<i32>,
    pub duration_s: Option<f64>,
    pub error: Option<String>,
}

/// The sweep directory being written.
pub(crate) struct SweepDir<'a> {
    pub dir: ResultDir,
    pub plan: &'a Plan,
    pub file: PathBuf,
    pub started_at: String,
    pub states: Vec<PointState>,
}

impl SweepDir<'_> {
    /// How many points stand at `status`.
    pub fn count(&self, status: PointStatus) -> usize {
        self.states.iter().filter(|s| s.status == status).count()
    }

    /// Rewrites sweep.json (atomically) with the sweep at `status`.
    pub fn write(&self, status: SweepStatus) -> Result<(), SweepError> {
        let points = self
            .plan
            .points
            .iter()
            .zip(&self.states)
            .map(|(p, s)| SweepPoint {
                dir: p.dir.clone(),
                params: p.params_json(),
                args: p.argv.clone(),
                status: s.status,
                exit_code: s.exit_code,
                duration_s: s.duration_s.map(|d| (d * 1000.0).round() / 1000.0),
                error: s.error.clone(),
            })
            .collect();
        let doc = SweepDoc {
            schema: SWEEP_SCHEMA.into(),
            tool: SweepTool {
                name: "iolens".into(),
                version: env!("CARGO_PKG_VERSION").into(),
            },
            name: self.plan.name.clone(),
            command: self.plan.command.join(" "),
            file: self.file.display().to_string(),
            status,
            started_at: self.started_at.clone(),
            updated_at: now(),
            param_order: self.plan.param_order.clone(),
            points,
        };
        self.dir
            .write_file("sweep.json", doc.to_text()?.as_bytes())?;
        Ok(())
    }
}

/// The time now, RFC 3339 with milliseconds.
pub(crate) fn now() -> String {
    humantime::format_rfc3339_millis(SystemTime::now()).to_string()
}

/// Holds `sweep.lock` (our pid) while the sweep runs.
pub(crate) struct Lock(PathBuf);

impl Lock {
    /// Takes the lock of `dir`; a lock left by a dead process is taken over.
    pub fn take(dir: &Path) -> Result<Lock, SweepError> {
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
                        return Err(SweepError::BadInput(format!(
                            "{} is in use by a running sweep (pid {pid}); wait for it or stop it",
                            dir.display()
                        )));
                    }
                    let _ = fs::remove_file(&p);
                }
                Err(e) => return Err(SweepError::io(p.display().to_string())(e)),
            }
        }
        Err(SweepError::BadInput(format!(
            "{}: cannot take sweep.lock",
            dir.display()
        )))
    }
}

impl Drop for Lock {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.0);
    }
}

/// Moves an unfinished attempt aside (`.attempts/<dir>-<n>`): nothing is deleted.
pub(crate) fn move_aside(sweep: &Path, dir: &str) -> Result<(), SweepError> {
    let src = sweep.join(dir);
    if !src.exists() {
        return Ok(());
    }
    let attempts = sweep.join(".attempts");
    fs::create_dir_all(&attempts).map_err(SweepError::io(attempts.display().to_string()))?;
    let mut n = 1;
    while attempts.join(format!("{dir}-{n}")).exists() {
        n += 1;
    }
    fs::rename(&src, attempts.join(format!("{dir}-{n}")))
        .map_err(SweepError::io(format!("moving {} aside", src.display())))
}
