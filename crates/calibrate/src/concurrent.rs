//! Several jobs at once on one set of targets: ORION's small and large
//! streams within one point, or a single job with a progress tick.
//!
//! [`run_job`] is re-entrant: each call owns its workers, channels, start
//! barrier and stop flag, and only reads the shared [`TargetSet`] (file
//! descriptors and the address map). Each job runs on its own scoped thread;
//! one stop flag ends them all when the user interrupts or when one of them
//! fails, so a failing stream never leaves the other running alone.

use iolens_engine::{run_job, JobError, JobOutcome, JobSpec, TargetSet, TimeRow};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What one job of a group measured, with its per-second rows.
#[derive(Debug)]
pub struct JobRun {
    pub outcome: JobOutcome,
    pub rows: Vec<TimeRow>,
}

/// Runs every spec at once on `targets` and waits for all of them. `tick`
/// is called about every 50 ms while they run (for progress displays).
/// Setting `interrupt` stops them all; so does an error in any one of them.
pub fn run_together(
    specs: &[Arc<JobSpec>],
    targets: &Arc<TargetSet>,
    interrupt: &AtomicBool,
    mut tick: impl FnMut(),
) -> Result<Vec<JobRun>, JobError> {
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let handles: Vec<_> = specs
            .iter()
            .map(|spec| {
                let (spec, targets, stop) = (spec.clone(), targets.clone(), &stop);
                std::thread::Builder::new()
                    .name(format!("iolens-{}", spec.name))
                    .spawn_scoped(s, move || {
                        let mut rows = Vec::new();
                        let r = run_job(spec, targets, stop, |row| rows.push(row.clone()));
                        if !matches!(&r, Ok(o) if o.error.is_none()) {
                            stop.store(true, Ordering::Relaxed);
                        }
                        r.map(|outcome| JobRun { outcome, rows })
                    })
                    .map_err(|e| JobError(format!("cannot start a job thread: {e}")))
            })
            .collect();
        if handles.iter().any(|h| h.is_err()) {
            stop.store(true, Ordering::Relaxed);
        }
        while !handles
            .iter()
            .all(|h| h.as_ref().map_or(true, |h| h.is_finished()))
        {
            if interrupt.load(Ordering::Relaxed) {
                stop.store(true, Ordering::Relaxed);
            }
            tick();
            std::thread::sleep(Duration::from_millis(50));
        }
        let mut runs = Vec::with_capacity(handles.len());
        let mut first_err = None;
        for h in handles {
            let r = match h {
                Ok(h) => h
                    .join()
                    .unwrap_or_else(|_| Err(JobError("a job thread panicked".into()))),
                Err(e) => Err(e),
            };
            match r {
                Ok(run) => runs.push(run),
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(runs),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolens_engine::EngineKind;

    fn null_spec(name: &str, qd: u32) -> Arc<JobSpec> {
        Arc::new(JobSpec {
            name: name.into(),
            engine: EngineKind::Null,
            qd,
            runtime: Duration::from_millis(300),
            ..Default::default()
        })
    }

    #[test]
    fn jobs_run_side_by_side_and_each_reports_its_own_figures() {
        let targets = Arc::new(TargetSet::none(1 << 30));
        let stop = AtomicBool::new(false);
        let mut ticks = 0;
        let runs = run_together(
            &[null_spec("a", 1), null_spec("b", 4)],
            &targets,
            &stop,
            || ticks += 1,
        )
        .unwrap();
        assert_eq!(runs.len(), 2);
        for r in &runs {
            assert!(r.outcome.read.ops > 0);
            assert!(r.outcome.measured_s > 0.2);
            assert!(!r.outcome.interrupted);
        }
        assert!(ticks > 0);
    }

    #[test]
    fn an_interrupt_stops_every_job() {
        let targets = Arc::new(TargetSet::none(1 << 30));
        let stop = AtomicBool::new(true);
        let long = |n: &str| {
            Arc::new(JobSpec {
                runtime: Duration::from_secs(30),
                ..(*null_spec(n, 1)).clone()
            })
        };
        let runs = run_together(&[long("a"), long("b")], &targets, &stop, || {}).unwrap();
        assert!(runs.iter().all(|r| r.outcome.interrupted));
    }
}
