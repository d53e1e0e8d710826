//! PNG: a chart rasterized with resvg (see [`crate::raster`]).

use super::Exporter;
use crate::charts::ChartFile;
use crate::raster::Rasterizer;
use crate::ReportError;

/// A chart as a PNG: summary charts at twice their size (sharp text),
/// per-point time series at their size.
#[derive(Default)]
pub struct PngExporter {
    raster: Rasterizer,
}

impl PngExporter {
    /// An exporter with the system's fonts loaded.
    pub fn new() -> PngExporter {
        PngExporter::default()
    }
}

impl Exporter<ChartFile> for PngExporter {
    fn serialize(&self, chart: &ChartFile) -> Result<Vec<u8>, ReportError> {
        let scale = if chart.point.is_some() { 1.0 } else { 2.0 };
        self.raster.png(&chart.svg, scale)
    }
}
