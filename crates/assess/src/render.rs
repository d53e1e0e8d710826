//! summary.txt of an assessment: the raw figures, the database points, the
//! side-by-side table, the explanation and the warnings.

use iolens_core::result::assess::{AssessSummary, DbPoint, RawFigures};
use std::fmt::Write as _;
use std::path::Path;

/// `v` with `d` decimals, `-` when there is none.
fn num(v: Option<f64>, d: usize) -> String {
    v.map_or("-".to_string(), |x| format!("{x:.d$}"))
}

/// The text of an assessment that took `elapsed` seconds into `out`.
pub fn render(s: &AssessSummary, warnings: &[String], out: &Path, elapsed: f64) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "iolens assess ({elapsed:.0} s)");
    raw_line(&mut t, &s.raw);
    db_table(&mut t, &s.db.backend, &s.db.points);
    side_by_side(&mut t, s);
    let _ = writeln!(t, "why: {}", s.explanation);
    for w in warnings {
        let _ = writeln!(t, "warning: {w}");
    }
    let _ = writeln!(t, "results: {}", out.display());
    t
}

/// The calibration's figures on one line.
fn raw_line(t: &mut String, raw: &RawFigures) {
    let _ = writeln!(
        t,
        "raw:  max_iops = {}  latency = {} ms  max_mbps = {}   (QD1: {} IOPS at {} us)",
        num(raw.max_iops, 0),
        num(raw.latency_ms, 3),
        num(raw.max_mbps, 0),
        num(raw.qd1_iops, 0),
        num(raw.qd1_lat_us, 1)
    );
}

/// One row per database point.
fn db_table(t: &mut String, backend: &str, points: &[DbPoint]) {
    let _ = writeln!(t, "database ({backend}):");
    let _ = writeln!(
        t,
        "  {:>8} {:>7} {:>12} {:>12} {:>12} {:>11} {:>14} {:>10}",
        "sessions",
        "upd %",
        "phys rd/s",
        "device rd/s",
        "read lat us",
        "write/s",
        "rd per DBcpu",
        "OS cache %"
    );
    for p in points {
        let _ = writeln!(
            t,
            "  {:>8} {:>7} {:>12} {:>12} {:>12} {:>11} {:>14} {:>10}",
            p.sessions.to_string(),
            p.update_pct.to_string(),
            num(p.physical_read_iops, 0),
            num(p.device_read_iops, 0),
            num(p.read_lat_us, 1),
            num(p.physical_write_iops, 0),
            num(p.reads_per_db_cpu_s, 0),
            num(p.os_cache_hit_pct, 1)
        );
    }
}

/// The raw and the database figures in two columns.
fn side_by_side(t: &mut String, s: &AssessSummary) {
    let raw = &s.raw;
    let b = s.best_db.as_ref();
    let single =
        s.db.points
            .iter()
            .find(|p| p.sessions == 1 && p.update_pct == 0);
    let _ = writeln!(t, "side by side:");
    let rows = [
        ("", "raw".to_string(), "database".to_string()),
        (
            "read IOPS (best)",
            num(raw.max_iops, 0),
            num(b.and_then(|b| b.physical_read_iops), 0),
        ),
        (
            "single-block read latency (us)",
            num(raw.qd1_lat_us, 1),
            num(single.and_then(|p| p.read_lat_us), 1),
        ),
        (
            "reads per DB CPU second",
            String::new(),
            num(b.and_then(|b| b.reads_per_db_cpu_s), 0),
        ),
        (
            "share served by the OS cache (%)",
            "0 (direct)".to_string(),
            num(b.and_then(|b| b.os_cache_hit_pct), 1),
        ),
    ];
    for (what, raw, db) in rows {
        let _ = writeln!(t, "  {what:<34} {raw:>14} {db:>14}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_assessment_without_figures_still_reads() {
        let s = AssessSummary {
            explanation: "not enough figures".into(),
            ..AssessSummary::default()
        };
        let t = render(&s, &["w".into()], Path::new("/r"), 31.2);
        assert!(t.starts_with("iolens assess (31 s)\nraw:  max_iops = -  latency = - ms"));
        assert!(t.contains(&format!("  {:<34} {:>14} {:>14}\n", "", "raw", "database")));
        let row = format!(
            "  {:<34} {:>14} {:>14}\n",
            "share served by the OS cache (%)", "0 (direct)", "-"
        );
        assert!(t.contains(&row), "{t}");
        assert!(
            t.ends_with("why: not enough figures\nwarning: w\nresults: /r\n"),
            "{t}"
        );
    }
}
