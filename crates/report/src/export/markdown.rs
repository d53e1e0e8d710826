//! The comparison as a GitHub-flavoured Markdown table.

use super::Exporter;
use crate::compare::Comparison;
use crate::ReportError;

/// A Markdown table: the first column left-aligned, the others right-aligned.
#[derive(Debug, Clone, Copy, Default)]
pub struct MarkdownExporter;

impl Exporter<Comparison> for MarkdownExporter {
    fn serialize(&self, c: &Comparison) -> Result<Vec<u8>, ReportError> {
        let rows = c.display_rows();
        let esc = |c: &str| c.replace('|', "\\|");
        let mut s = String::new();
        for (i, r) in rows.iter().enumerate() {
            s.push_str("| ");
            s.push_str(&r.iter().map(|c| esc(c)).collect::<Vec<_>>().join(" | "));
            s.push_str(" |\n");
            if i == 0 {
                s.push('|');
                for j in 0..r.len() {
                    s.push_str(if j > 0 { " ---: |" } else { " --- |" });
                }
                s.push('\n');
            }
        }
        Ok(s.into_bytes())
    }
}
