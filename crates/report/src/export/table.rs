//! The comparison as aligned columns for the terminal.

use super::Exporter;
use crate::compare::Comparison;
use crate::report::align;
use crate::ReportError;

/// Aligned columns with a rule under the header.
#[derive(Debug, Clone, Copy, Default)]
pub struct TableExporter;

impl Exporter<Comparison> for TableExporter {
    fn serialize(&self, c: &Comparison) -> Result<Vec<u8>, ReportError> {
        let rows = c.display_rows();
        let right: Vec<bool> = (0..rows[0].len()).map(|i| i > 0).collect();
        let mut s = align(&rows, &right);
        let width = s.lines().map(|l| l.chars().count()).max().unwrap_or(0);
        s.insert_str(
            s.find('\n').map_or(0, |i| i + 1),
            &format!("{}\n", "-".repeat(width)),
        );
        Ok(s.into_bytes())
    }
}
