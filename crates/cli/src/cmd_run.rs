//! `iolens run`: options → validated job → `iolens_engine::command::run`
//! (targets, run, result directory), with live progress and the summary printed.

use crate::args::RunArgs;
use crate::errors::usage;
use crate::output::{print_result, progress_shown, Progress};
use anyhow::Result;
use iolens_core::interrupt::STOP;
use iolens_engine::command;
use iolens_engine::spec::JobSpec;
use iolens_engine::TimeRow;

/// Turns what the user typed into a validated job.
pub fn job_spec(a: &RunArgs) -> Result<JobSpec> {
    let spec = JobSpec {
        name: a.out.name.clone().unwrap_or_else(|| "run".into()),
        targets: a.targets.clone(),
        layout: a.layout.into(),
        stripe: a.stripe.0,
        rw: a.rw.into(),
        mix_read: a.mix_read,
        bs: a.bs.0,
        bs_split: a.bs_split.clone(),
        offset: a.offset.0,
        size: a.size.map(|s| s.0),
        engine: a.engine.into(),
        qd: a.qd,
        uring: (&a.uring).into(),
        threads: a.threads,
        direct: !a.buffered,
        runtime: a.runtime.0,
        ramp: a.ramp.0,
        seed: a.seed,
        distribution: a.distribution.clone(),
        rate_iops: a.rate_iops,
        fsync: a.fsync,
        fdatasync: a.fdatasync,
        verify: a.verify,
        allow_overwrite: a.allow_overwrite,
        allow_destroy: a.allow_destroy,
        fault: a.fault.options(a.engine.into()),
    };
    if let Err(e) = spec.validate() {
        return usage(e);
    }
    if matches!(a.size, Some(s) if s.0 == 0) {
        return usage("--size must be > 0");
    }
    Ok(spec)
}

pub fn run(a: RunArgs) -> Result<u8> {
    let spec = job_spec(&a)?;
    let total_s = (spec.ramp + spec.runtime).as_secs_f64();
    let progress = Progress::counted(progress_shown(a.out.quiet), (total_s * 1e3) as u64);
    let report = command::run(spec, &a.out.output("run"), &STOP, &mut |row| {
        progress.set_position(((row.sec as f64 + row.interval_s) * 1e3) as u64);
        progress.line(&progress_line(row));
    });
    progress.clear();
    let r = report?;
    print_result(&a.out, &r.doc, &r.text, r.dir.display(), r.exit_code())
}

/// The live progress line of one second.
fn progress_line(row: &TimeRow) -> String {
    format!(
        "{}read {:.0} IOPS {:.1} MB/s {:.1}us p99 {:.1}us | write {:.0} IOPS {:.1} MB/s {:.1}us",
        if row.ramp { "ramp " } else { "" },
        row.read.iops,
        row.read.mbps,
        row.read.lat_mean_us,
        row.read.lat_p99_us,
        row.write.iops,
        row.write.mbps,
        row.write.lat_mean_us
    )
}
