//! The picture of an assessment: the raw figures next to the database's,
//! their ratios, and one sentence on where the gap comes from.

use crate::options::Backend;
use iolens_core::result::assess::{AssessDb, AssessSummary, DbPoint, DbVsRaw, RawFigures};
use iolens_core::result::calibrate::{CalibrateResult, IoKind};

/// Mean latency and IOPS of the first (one outstanding I/O) small-read step of a calibration.
fn qd1(cal: &CalibrateResult) -> (Option<f64>, Option<f64>) {
    let p = cal
        .extra
        .ladder
        .iter()
        .flatten()
        .find(|p| p.io == IoKind::Small && p.outstanding == 1);
    p.map_or((None, None), |p| (Some(p.lat_us.mean), Some(p.iops)))
}

/// The parts that produced no figure, named (None: each did).
pub fn missing(s: &AssessSummary) -> Option<String> {
    let missing: Vec<&str> = [
        ("raw calibration", s.raw.max_iops.is_some()),
        ("database runs", s.best_db.is_some()),
    ]
    .iter()
    .filter(|(_, ok)| !ok)
    .map(|(what, _)| *what)
    .collect();
    (!missing.is_empty()).then(|| missing.join(", "))
}

/// The picture of the parts: the raw figures, the database points, the
/// best of them, the ratios and the explanation of the gap.
pub fn picture(
    cal: Option<&CalibrateResult>,
    db_points: Vec<DbPoint>,
    backend: Backend,
) -> AssessSummary {
    let cs = cal.and_then(|c| c.summary.as_ref());
    let (qd1_lat, qd1_iops) = cal.map_or((None, None), qd1);
    let raw = RawFigures {
        max_iops: cs.and_then(|s| s.max_iops),
        max_mbps: cs.and_then(|s| s.max_mbps),
        latency_ms: cs.and_then(|s| s.latency_ms),
        qd1_lat_us: qd1_lat,
        qd1_iops,
    };
    let best = db_points
        .iter()
        .filter(|p| p.update_pct == 0 && p.physical_read_iops.unwrap_or(0.0) > 0.0)
        .max_by(|a, b| {
            a.physical_read_iops
                .unwrap_or(0.0)
                .total_cmp(&b.physical_read_iops.unwrap_or(0.0))
        })
        .cloned();
    let single = db_points
        .iter()
        .find(|p| p.sessions == 1 && p.update_pct == 0 && p.read_lat_us.is_some());
    let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    };
    let best_iops = best.as_ref().and_then(|b| b.physical_read_iops);
    let db_lat = single.and_then(|b| b.read_lat_us);
    let iops_ratio = ratio(best_iops, raw.max_iops);
    let lat_ratio = ratio(db_lat, qd1_lat);
    let upd = best.as_ref().and_then(|b| {
        db_points
            .iter()
            .find(|p| p.update_pct == 20 && p.sessions == b.sessions)
    });
    let why = explain(
        iops_ratio,
        lat_ratio,
        best.as_ref(),
        upd,
        best.as_ref().map_or(1, |b| b.sessions as u64),
    );
    AssessSummary {
        raw,
        db: AssessDb {
            backend: backend.as_str().to_string(),
            points: db_points,
        },
        best_db: best,
        db_vs_raw: DbVsRaw {
            iops_ratio,
            latency_ratio: lat_ratio,
        },
        explanation: why,
    }
}

/// One sentence (or a few, joined) on where the gap between the database
/// and the raw figures comes from.
fn explain(
    iops_ratio: Option<f64>,
    lat_ratio: Option<f64>,
    best: Option<&DbPoint>,
    upd: Option<&DbPoint>,
    sessions: u64,
) -> String {
    let mut parts = Vec::new();
    let cached = best.and_then(|b| b.os_cache_hit_pct).unwrap_or(0.0);
    if cached > 10.0 {
        parts.push(format!(
            "{cached:.0} % of the database's reads were served by the OS page cache, not the storage: its figures describe memory (use a data set larger than RAM, --os-cache-limit as root, or direct I/O)"
        ));
    } else if let Some(r) = iops_ratio {
        parts.push(format!(
            "the database reached {:.0} % of the raw maximum because each session waits for one synchronous single-block read at a time ({sessions} session(s) ≈ {sessions} outstanding I/O(s)), while calibrate keeps many asynchronous reads in flight",
            r * 100.0
        ));
    }
    if let Some(l) = lat_ratio.filter(|_| cached <= 10.0) {
        if l > 1.2 {
            parts.push(format!(
                "a database read costs {l:.1}× the raw QD1 latency: buffer-cache management, locking and executor CPU sit on every read path"
            ));
        }
    }
    if let (Some(b), Some(u)) = (best, upd) {
        if let (Some(r0), Some(r1)) = (b.physical_read_iops, u.physical_read_iops) {
            if r1 < r0 * 0.9 {
                parts.push(format!(
                    "with 20 % updates reads fall to {:.0} % as commits wait for WAL syncs and dirty pages are written back",
                    r1 / r0 * 100.0
                ));
            }
        }
    }
    if parts.is_empty() {
        "not enough figures to explain the gap (see the warnings)".into()
    } else {
        let mut t = parts.join("; ");
        t.push('.');
        let mut c = t.chars();
        c.next()
            .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
            .unwrap_or(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(sessions: u32, update_pct: u32, iops: f64) -> DbPoint {
        DbPoint {
            sessions,
            update_pct,
            physical_read_iops: Some(iops),
            read_lat_us: Some(200.0),
            os_cache_hit_pct: Some(0.0),
            ..DbPoint::default()
        }
    }

    #[test]
    fn the_best_read_only_point_is_compared_with_its_updating_twin() {
        let points = vec![
            point(1, 0, 1000.0),
            point(4, 0, 3000.0),
            point(1, 20, 900.0),
            point(4, 20, 2000.0),
        ];
        let s = picture(None, points, Backend::Sqlite);
        let best = s.best_db.as_ref().unwrap();
        assert_eq!((best.sessions, best.update_pct), (4, 0));
        assert_eq!(s.db.backend, "sqlite");
        assert_eq!(s.db_vs_raw.iops_ratio, None);
        assert!(
            s.explanation
                .starts_with("With 20 % updates reads fall to 67 %"),
            "{}",
            s.explanation
        );
        assert_eq!(missing(&s).as_deref(), Some("raw calibration"));
    }
}
