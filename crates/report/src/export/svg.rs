//! SVG: a chart as it is drawn.

use super::Exporter;
use crate::charts::ChartFile;
use crate::ReportError;

/// A chart as an SVG document.
#[derive(Debug, Clone, Copy, Default)]
pub struct SvgExporter;

impl Exporter<ChartFile> for SvgExporter {
    fn serialize(&self, chart: &ChartFile) -> Result<Vec<u8>, ReportError> {
        Ok(chart.svg.clone().into_bytes())
    }
}
