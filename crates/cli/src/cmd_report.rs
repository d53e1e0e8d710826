//! `iolens report DIR...`: reads result directories of any kind (sweeps and
//! trees of them too) and writes report.csv, report.json, report.html and the
//! charts; prints the points and the knees.

use crate::errors::usage;
use anyhow::Result;
use clap::Args;
use iolens_core::result::default_dir_name;
use iolens_core::DurationArg;
use iolens_report::{report, Options, Report};
use std::path::PathBuf;
use std::time::SystemTime;

/// `iolens report`.
#[derive(Args, Debug, Clone)]
pub struct ReportArgs {
    /// Result directories: single results, sweep directories, or any folder holding them.
    #[arg(value_name = "DIR", required = true)]
    pub dirs: Vec<PathBuf>,
    /// Where to write the report (default: DIR/report for one DIR, else iolens-results/<UTC timestamp>-report).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Latency objective for the knee: the highest IOPS whose mean and p99 latency stay within it.
    #[arg(long, default_value = "1ms", value_name = "DURATION")]
    pub latency_slo: DurationArg,
    /// Title of report.html.
    #[arg(long)]
    pub title: Option<String>,
    /// Write SVG charts only (no PNG).
    #[arg(long)]
    pub no_png: bool,
    /// Print report.json to stdout instead of the tables.
    #[arg(long)]
    pub json: bool,
}

/// The report options for these arguments.
pub fn options(slo: DurationArg, title: Option<String>, png: bool) -> Result<Options> {
    let slo_us = slo.0.as_secs_f64() * 1e6;
    if slo_us <= 0.0 {
        return usage("--latency-slo must be > 0, e.g. 1ms or 500us");
    }
    Ok(Options {
        latency_slo_us: slo_us,
        title,
        png,
        tool_version: env!("CARGO_PKG_VERSION").into(),
        generated_at: humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
    })
}

pub fn run(a: ReportArgs) -> Result<u8> {
    let opts = options(a.latency_slo, a.title.clone(), !a.no_png)?;
    let rep = Report::build(&a.dirs, opts)?;
    let out = match &a.out {
        Some(o) => o.clone(),
        None if a.dirs.len() == 1 => a.dirs[0].join("report"),
        None => PathBuf::from(crate::output::RESULTS_ROOT).join(default_dir_name("report")),
    };
    if !a.no_png && !report::fonts_available() {
        eprintln!("iolens: warning: no system font found; PNG charts will have no text (install fonts-dejavu-core), SVG and HTML are unaffected");
    }
    rep.write(&out)?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&rep.json())?);
        return Ok(0);
    }
    print!("{}", rep.terminal_table());
    println!();
    let knees = rep.analysis.knee_lines();
    if !knees.is_empty() {
        println!(
            "knees (latency SLO {}):",
            iolens_report::fmt::latency_us(rep.options.latency_slo_us)
        );
        for k in knees {
            println!("  {k}");
        }
        println!();
    }
    println!(
        "report: {} ({} points, {} charts; open report.html)",
        out.display(),
        rep.points.len(),
        rep.charts.len()
    );
    Ok(0)
}
