//! `iolens run`: options → validated job → targets → run → result directory.

use crate::args::RunArgs;
use crate::errors::{usage, UsageError};
use crate::output::{progress_shown, result_dir, Progress};
use anyhow::Result;
use iolens_core::result::run::RunResult;
use iolens_core::result::TargetInfo;
use iolens_core::Status;
use iolens_engine::report;
use iolens_engine::spec::JobSpec;
use iolens_engine::target::TargetKind;
use iolens_engine::{run_job, TargetSet, TimeRow};
use std::io::Write;
use std::sync::Arc;
use std::time::Instant;

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

/// Opens the job's targets (none for the null engine without targets).
pub fn open_targets(spec: &JobSpec) -> Result<TargetSet> {
    if spec.targets.is_empty() {
        return Ok(TargetSet::none(spec.size.unwrap_or(1 << 30)));
    }
    Ok(TargetSet::open(spec)?)
}

/// Describes the opened targets for result.json.
pub fn target_infos(t: &TargetSet) -> Vec<TargetInfo> {
    t.targets
        .iter()
        .map(|t| TargetInfo {
            path: t.path.display().to_string(),
            kind: match t.kind {
                TargetKind::File => "file".into(),
                TargetKind::BlockDevice => "blockdev".into(),
            },
            size_bytes: t.total_size,
            device: t.device.as_ref().map(|d| d.name.clone()),
        })
        .collect()
}

pub fn run(a: RunArgs) -> Result<u8> {
    let spec = Arc::new(job_spec(&a)?);
    let targets = Arc::new(open_targets(&spec)?);
    let dir = result_dir(&a.out, &spec.name)?;
    let mut doc = RunResult::new("run", &spec.name);
    doc.targets = target_infos(&targets);
    doc.config = serde_json::to_value(&*spec)?;
    dir.write_result(&doc)?;

    let mut ts = dir.append("timeseries.csv")?;
    writeln!(ts, "{}", TimeRow::CSV_HEADER)?;
    let total_s = (spec.ramp + spec.runtime).as_secs_f64();
    let progress = Progress::counted(progress_shown(a.out.quiet), (total_s * 1e3) as u64);
    let started = Instant::now();
    let outcome = run_job(spec.clone(), targets.clone(), &iolens_core::interrupt::STOP, |row| {
        let _ = writeln!(ts, "{}", row.csv());
        let _ = ts.flush();
        progress.set_position(((row.sec as f64 + row.interval_s) * 1e3) as u64);
        progress.line(&format!(
            "{}read {:.0} IOPS {:.1} MB/s {:.1}us p99 {:.1}us | write {:.0} IOPS {:.1} MB/s {:.1}us",
            if row.ramp { "ramp " } else { "" },
            row.read.iops,
            row.read.mbps,
            row.read.lat_mean_us,
            row.read.lat_p99_us,
            row.write.iops,
            row.write.mbps,
            row.write.lat_mean_us
        ));
    })
    .map_err(|e| UsageError(e.0))?;
    progress.clear();

    doc.duration_s = started.elapsed().as_secs_f64();
    doc.status = Status::ended(outcome.error.is_some(), outcome.interrupted);
    doc.error = outcome.error.clone();
    doc.summary = Some(report::summary(&outcome));
    let warnings = report::warnings(&spec, &outcome);
    doc.extra.warnings = Some(warnings.clone());
    dir.write_result(&doc)?;
    let status = serde_json::to_value(doc.status)?;
    let text = report::summary_text(
        &spec.name,
        status.as_str().unwrap_or(""),
        &spec,
        &outcome,
        &warnings,
    );
    dir.write_file("summary.txt", text.as_bytes())?;
    if a.out.json {
        println!("{}", serde_json::to_string_pretty(&doc)?);
    } else {
        print!("{text}");
        println!("result: {}", dir.path().display());
    }
    Ok(doc.status.exit_code() as u8)
}
