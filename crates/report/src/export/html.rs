//! HTML: the self-contained `report.html` (see [`crate::html`]).

use super::Exporter;
use crate::{fmt, html, Report, ReportError};

/// `report.html`.
#[derive(Debug, Clone, Copy, Default)]
pub struct HtmlExporter;

impl Exporter<Report> for HtmlExporter {
    fn serialize(&self, r: &Report) -> Result<Vec<u8>, ReportError> {
        let title = r
            .options
            .title
            .clone()
            .unwrap_or_else(|| format!("iolens report: {}", r.inputs.join(", ")));
        let ok = r.points.iter().filter(|p| p.usable()).count();
        let meta = format!(
            "{} points ({} finished with figures) from {}; latency SLO {}; generated {} by iolens {}",
            r.points.len(),
            ok,
            r.inputs.join(", "),
            fmt::latency_us(r.options.latency_slo_us),
            r.options.generated_at,
            r.options.tool_version
        );
        let page = html::page(
            &title,
            &meta,
            &r.analysis,
            &r.charts,
            &r.table,
            &r.warnings(),
        );
        Ok(page.into_bytes())
    }
}
