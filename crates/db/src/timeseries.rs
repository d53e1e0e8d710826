//! The per-second outputs of a run: `timeseries.csv` rows and the live
//! progress line.

use crate::run::SecondRow;

/// Columns of `timeseries.csv` for kind `db`.
pub const TS_HEADER: &str = "sec,phase,interval_s,select_per_s,update_per_s,scan_per_s,\
select_lat_mean_us,update_lat_mean_us,logical_reads_per_s,physical_reads_per_s,read_lat_us,\
physical_writes_per_s,wal_bytes_per_s,dev_read_iops,dev_write_iops,dev_read_mbps,dev_write_mbps,\
dev_read_await_ms,db_cpu,aas,aas_cpu,aas_data_file_read,aas_other_io,aas_other";

/// One row of `timeseries.csv` (one second).
pub fn ts_fields(r: &SecondRow) -> Vec<String> {
    let dt = r.interval_s.max(1e-9);
    let d = r.device.as_ref();
    let fg = |f: &dyn Fn(&str) -> bool| -> f64 {
        r.aas
            .iter()
            .filter(|(k, _)| !k.starts_with("bg:") && f(k))
            .map(|(_, v)| v)
            // An empty sum is -0.0, which would print as "-0.00".
            .fold(0.0, |a, v| a + v)
    };
    let aas = fg(&|_| true);
    let cpu = fg(&|k| k == "CPU");
    let dfr = fg(&|k| k == "IO:DataFileRead");
    let io = fg(&|k| k.starts_with("IO:") && k != "IO:DataFileRead");
    let opt = |v: Option<f64>| v.map(|x| format!("{x:.2}")).unwrap_or_default();
    vec![
        r.sec.to_string(),
        r.phase.to_string(),
        format!("{:.3}", r.interval_s),
        format!("{:.1}", r.ops_per_s[0]),
        format!("{:.1}", r.ops_per_s[1]),
        format!("{:.1}", r.ops_per_s[2]),
        format!("{:.1}", r.lat_mean_us[0]),
        format!("{:.1}", r.lat_mean_us[1]),
        format!("{:.1}", r.db.logical_reads as f64 / dt),
        format!("{:.1}", r.db.physical_reads as f64 / dt),
        opt(r
            .db
            .read_time_ms
            .filter(|_| r.db.physical_reads > 0)
            .map(|t| t * 1e3 / r.db.physical_reads as f64)),
        opt(r.db.physical_writes.map(|w| w as f64 / dt)),
        opt(r.db.wal_bytes.map(|w| w as f64 / dt)),
        opt(d.map(|d| d.read_ios as f64 / d.interval_s)),
        opt(d.map(|d| d.write_ios as f64 / d.interval_s)),
        opt(d.map(|d| d.read_bytes as f64 / 1e6 / d.interval_s)),
        opt(d.map(|d| d.write_bytes as f64 / 1e6 / d.interval_s)),
        opt(d.map(|d| d.read_await_ms)),
        opt(r.server_cpu),
        format!("{aas:.2}"),
        format!("{cpu:.2}"),
        format!("{dfr:.2}"),
        format!("{io:.2}"),
        format!("{:.2}", aas - cpu - dfr - io),
    ]
}

/// The live progress line of one second (the run lasts `total_s`).
pub fn progress_line(row: &SecondRow, total_s: f64) -> String {
    let aas: f64 = row
        .aas
        .iter()
        .filter(|(k, _)| !k.starts_with("bg:"))
        .map(|(_, v)| v)
        .fold(0.0, |a, v| a + v);
    format!(
        "[{:>4}/{:.0}s]{} {:.0} exec/s | db reads {:.0}/s {} | device reads {:.0}/s | AAS {:.1}",
        row.sec + 1,
        total_s,
        if row.phase == "warmup" { " warmup" } else { "" },
        row.ops_per_s.iter().sum::<f64>(),
        row.db.physical_reads as f64 / row.interval_s,
        row.db
            .read_time_ms
            .filter(|_| row.db.physical_reads > 0)
            .map(|t| format!("{:.1}us", t * 1e3 / row.db.physical_reads as f64))
            .unwrap_or_default(),
        row.device
            .as_ref()
            .map_or(0.0, |d| d.read_ios as f64 / d.interval_s),
        aas
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeseries_rows_have_the_header_s_columns() {
        let r = SecondRow {
            phase: "run",
            interval_s: 1.0,
            ..Default::default()
        };
        assert_eq!(ts_fields(&r).len(), TS_HEADER.split(',').count());
        assert_eq!(
            ts_fields(&r).join(","),
            "0,run,1.000,0.0,0.0,0.0,0.0,0.0,0.0,0.0,,,,,,,,,,0.00,0.00,0.00,0.00,0.00"
        );
    }
}
