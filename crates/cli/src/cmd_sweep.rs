//! `iolens sweep FILE.toml`: reads the arguments, hands them to the sweep
//! library (`iolens-sweep`, which runs one iolens process per point) and
//! prints its progress and outcome. The file format is documented in
//! docs/sweep.md.

use crate::output::ProgressGroup;
use anyhow::Result;
use clap::{Args, CommandFactory};
use iolens_core::sweep::{PointStatus, SweepStatus};
use iolens_report::fmt;
use iolens_sweep::{hms, shell_words, PointDone, Progress, Start, SweepOptions, Tick};
use std::path::{Path, PathBuf};

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

/// Progress on stderr: one line per point; on a terminal, a bar of the
/// points done (with the sweep's ETA) over a line for the point that runs.
struct Lines {
    quiet: bool,
    group: ProgressGroup,
    bar: crate::output::Progress,
    point: crate::output::Progress,
}

impl Lines {
    fn say(&self, line: &str) {
        if !self.quiet {
            self.bar.println(line);
        }
    }
}

impl Progress for Lines {
    fn started(&mut self, s: &Start<'_>) {
        self.bar.set_total(s.plan.points.len() as u64);
        self.say(&format!(
            "sweep '{}': {} points of `iolens {}` → {}{}",
            s.plan.name,
            s.plan.points.len(),
            s.plan.command.join(" "),
            s.out.display(),
            if s.kept > 0 {
                format!(" ({} kept from the earlier run)", s.kept)
            } else {
                String::new()
            }
        ));
    }

    fn tick(&mut self, t: &Tick<'_>) {
        let eta = t.eta_s.map_or("?".into(), hms);
        self.bar.set_total(t.total as u64);
        self.bar.set_position(t.done_before as u64);
        self.bar.line(&format!(
            "{}/{} points, sweep ETA {eta}",
            t.done_before, t.total
        ));
        self.point.line(&format!(
            "point {}/{} {}  {}",
            t.index + 1,
            t.total,
            t.dir,
            hms(t.elapsed_s)
        ));
    }

    fn point_done(&mut self, d: &PointDone<'_>) {
        let eta = d
            .eta_s
            .map_or(String::new(), |s| format!("; ETA {}", hms(s)));
        let what = match d.status {
            PointStatus::Ok => headline(d.pdir),
            PointStatus::Interrupted => "stopped before its end".to_string(),
            _ => d.error.unwrap_or_default().to_string(),
        };
        self.say(&format!(
            "[{}/{}] {}: {}, {what} ({}){eta}",
            d.index + 1,
            d.total,
            d.dir,
            d.status,
            hms(d.took_s)
        ));
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
    let opts = SweepOptions {
        file: a.file.clone(),
        output: a.output.clone(),
        results_root: PathBuf::from(crate::output::RESULTS_ROOT),
        resume: a.resume,
        cli: crate::args::Cli::command(),
        exe: None,
    };
    if a.dry_run {
        let (plan, _) = iolens_sweep::plan(&opts)?;
        for p in &plan.points {
            println!("{}: iolens {}", p.dir, shell_words(&p.argv));
        }
        println!("{} points", plan.points.len());
        return Ok(0);
    }
    let group = ProgressGroup::shown(crate::output::progress_shown(a.quiet));
    let mut lines = Lines {
        quiet: a.quiet,
        bar: group.counted(0),
        point: group.status(),
        group,
    };
    let o = iolens_sweep::run(&opts, &mut lines);
    lines.point.clear();
    lines.bar.clear();
    lines.group.clear();
    let o = o?;
    lines.say(&format!(
        "sweep '{}' {}: {} ok, {} failed, {} not run, of {} points in {} → {}",
        o.name,
        o.status,
        o.ok,
        o.failed,
        o.total - o.ok - o.failed,
        o.total,
        hms(o.elapsed_s),
        o.out.display()
    ));
    if !a.quiet {
        if o.status == SweepStatus::Interrupted {
            eprintln!(
                "continue with: iolens sweep {} --output {} --resume",
                a.file.display(),
                o.out.display()
            );
        }
        eprintln!("analyse with:  iolens report {}", o.out.display());
    }
    println!("{}", o.out.display());
    Ok(o.status.exit_code())
}

#[cfg(test)]
mod tests {
    use super::*;
    use iolens_sweep::Plan;

    /// The sweep checks its points against the real command line.
    #[test]
    fn plans_are_checked_against_the_real_command_line() {
        let cli = crate::args::Cli::command();
        let file = Path::new("s.toml");
        let p = Plan::parse(file, "command = \"run\"\n[axes]\nqdd = [1]", &cli).unwrap();
        let e = p.check_args(file, &cli).unwrap_err().to_string();
        assert!(e.contains("--qdd"), "{e}");
        let text = "command = \"run\"\n[options]\nengine = \"null\"\n[axes]\nqd = [1, 2]";
        Plan::parse(file, text, &cli)
            .unwrap()
            .check_args(file, &cli)
            .unwrap();
        let e = Plan::parse(file, "command = \"nosuch\"", &cli).unwrap_err();
        assert!(e.to_string().contains("not a measuring command"), "{e}");
        let db = Plan::parse(file, "command = \"db run\"\n[axes]\nsessions = [1]", &cli);
        db.unwrap().check_args(file, &cli).unwrap();
    }
}
