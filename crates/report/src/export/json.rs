//! JSON: `report.json` (schema `iolens.report/1`), pretty-printed with a
//! final line break.

use super::Exporter;
use crate::{Report, ReportError};

/// `report.json`.
#[derive(Debug, Clone, Copy, Default)]
pub struct JsonExporter;

impl Exporter<Report> for JsonExporter {
    fn serialize(&self, report: &Report) -> Result<Vec<u8>, ReportError> {
        let mut j = serde_json::to_vec_pretty(&report.json())
            .map_err(|e| ReportError::Render(e.to_string()))?;
        j.push(b'\n');
        Ok(j)
    }
}
