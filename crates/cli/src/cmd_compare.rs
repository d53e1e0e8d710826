//! `iolens compare DIR...`: systems or configurations side by side, one
//! column per directory, with ratio columns against the first.

use crate::errors::usage;
use anyhow::Result;
use clap::{Args, ValueEnum};
use iolens_core::DurationArg;
use iolens_report::compare::{compare, default_label, Format, Group};
use std::path::{Path, PathBuf};

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormatArg {
    Table,
    Markdown,
    Csv,
}

/// `iolens compare`.
#[derive(Args, Debug, Clone)]
pub struct CompareArgs {
    /// Result directories to compare (a result, a sweep, or a folder of them), the baseline first.
    #[arg(value_name = "DIR", required = true)]
    pub dirs: Vec<PathBuf>,
    /// Column title for each DIR, in order (default: the host, else the sweep's or result's name).
    #[arg(long = "label", value_name = "NAME")]
    pub labels: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "table")]
    pub format: FormatArg,
    /// Add a row with the highest IOPS whose mean and p99 latency stay within this.
    #[arg(long, value_name = "DURATION")]
    pub latency_slo: Option<DurationArg>,
}

fn dir_name(p: &Path) -> String {
    p.canonicalize()
        .ok()
        .and_then(|c| c.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| p.display().to_string())
}

pub fn run(a: CompareArgs) -> Result<u8> {
    if a.labels.len() > a.dirs.len() {
        return usage(format!(
            "{} --label given for {} directories: give at most one per DIR, in order",
            a.labels.len(),
            a.dirs.len()
        ));
    }
    let slo_us = match a.latency_slo {
        Some(d) if d.0.is_zero() => return usage("--latency-slo must be > 0, e.g. 1ms"),
        Some(d) => Some(d.0.as_secs_f64() * 1e6),
        None => None,
    };
    let mut loaded = Vec::new();
    for d in &a.dirs {
        let pts = iolens_report::load(std::slice::from_ref(d))?;
        loaded.push(pts);
    }
    let hosts: Vec<Option<String>> = loaded
        .iter()
        .map(|pts| {
            let mut h: Vec<&str> = pts.iter().map(|p| p.host.as_str()).collect();
            h.sort();
            h.dedup();
            (h.len() == 1 && !h[0].is_empty()).then(|| h[0].to_string())
        })
        .collect();
    let hosts_differ = hosts.iter().all(Option::is_some) && {
        let mut hs: Vec<&String> = hosts.iter().flatten().collect();
        hs.sort();
        hs.dedup();
        hs.len() == hosts.len()
    };
    let mut groups: Vec<Group> = Vec::new();
    for (i, (d, pts)) in a.dirs.iter().zip(loaded).enumerate() {
        let label = a
            .labels
            .get(i)
            .cloned()
            .unwrap_or_else(|| default_label(&dir_name(d), &pts, hosts_differ));
        groups.push(Group { label, points: pts });
    }
    // Equal titles would make the table ambiguous: number them.
    let dup: Vec<bool> = groups
        .iter()
        .map(|g| groups.iter().filter(|o| o.label == g.label).count() > 1)
        .collect();
    for (i, g) in groups.iter_mut().enumerate() {
        if dup[i] {
            g.label = format!("{} ({})", g.label, i + 1);
        }
    }
    let table = compare(&groups, slo_us);
    let format = match a.format {
        FormatArg::Table => Format::Table,
        FormatArg::Markdown => Format::Markdown,
        FormatArg::Csv => Format::Csv,
    };
    print!("{}", table.render(format));
    Ok(0)
}
