//! CSV: `report.csv` (one row per point, plain numbers) and the CSV form of
//! `iolens compare`.

use super::{csv_bytes, Exporter};
use crate::compare::{Cell, Comparison};
use crate::{fmt, Report, ReportError};

/// CSV with plain numbers, for spreadsheets and scripts.
#[derive(Debug, Clone, Copy, Default)]
pub struct CsvExporter;

impl Exporter<Report> for CsvExporter {
    fn serialize(&self, report: &Report) -> Result<Vec<u8>, ReportError> {
        let t = &report.table;
        csv_bytes(std::iter::once(&t.header).chain(&t.rows))
    }
}

impl Exporter<Comparison> for CsvExporter {
    fn serialize(&self, c: &Comparison) -> Result<Vec<u8>, ReportError> {
        let mut header = vec!["figure".to_string()];
        for (j, l) in c.labels.iter().enumerate() {
            header.push(l.clone());
            if j > 0 {
                header.push(format!("{l}/{}", c.labels[0]));
            }
        }
        let rows = c.rows.iter().map(|r| {
            let mut cells = vec![r.key.to_string()];
            for (j, v) in r.values.iter().enumerate() {
                cells.push(match v {
                    Cell::Empty => String::new(),
                    Cell::Num(v) => fmt::csv_number(*v),
                    Cell::Text(t) => t.clone(),
                });
                if j > 0 {
                    cells.push(r.ratio(j).map(|v| fmt::sig_n(v, 4)).unwrap_or_default());
                }
            }
            cells
        });
        csv_bytes(std::iter::once(header).chain(rows))
    }
}
