//! SVG → PNG with resvg (pure Rust), using the system's fonts.

use crate::ReportError;
use resvg::{tiny_skia, usvg};

/// Renders SVG documents to PNG. Loads the system fonts once.
pub struct Rasterizer {
    opt: usvg::Options<'static>,
    fonts: usize,
}

impl Default for Rasterizer {
    fn default() -> Self {
        Rasterizer::new()
    }
}

impl Rasterizer {
    /// A rasterizer with the system's fonts (DejaVu Sans preferred).
    pub fn new() -> Rasterizer {
        let mut opt = usvg::Options::default();
        let db = opt.fontdb_mut();
        db.load_system_fonts();
        let fonts = db.len();
        db.set_sans_serif_family("DejaVu Sans");
        opt.font_family = "DejaVu Sans".into();
        Rasterizer { opt, fonts }
    }

    /// Whether any font was found (without one, PNG charts have no text).
    pub fn has_fonts(&self) -> bool {
        self.fonts > 0
    }

    /// The PNG of `svg` at `scale` times its size (2.0 for sharp text).
    pub fn png(&self, svg: &str, scale: f32) -> Result<Vec<u8>, ReportError> {
        let tree =
            usvg::Tree::from_str(svg, &self.opt).map_err(|e| ReportError::Render(e.to_string()))?;
        let size = tree
            .size()
            .to_int_size()
            .scale_by(scale)
            .ok_or_else(|| ReportError::Render("chart size out of range".into()))?;
        let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height())
            .ok_or_else(|| ReportError::Render("chart size out of range".into()))?;
        resvg::render(
            &tree,
            tiny_skia::Transform::from_scale(scale, scale),
            &mut pixmap.as_mut(),
        );
        pixmap
            .encode_png()
            .map_err(|e| ReportError::Render(e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn svg_becomes_a_png_with_pixels_drawn() {
        let r = Rasterizer::new();
        let svg = r##"<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"><rect width="40" height="20" fill="white"/><line x1="0" y1="10" x2="40" y2="10" stroke="#ff0000" stroke-width="4"/></svg>"##;
        let png = r.png(svg, 1.0).unwrap();
        assert_eq!(&png[1..4], b"PNG");
        let pm = tiny_skia::Pixmap::decode_png(&png).unwrap();
        assert_eq!((pm.width(), pm.height()), (40, 20));
        let px = pm.pixel(20, 10).unwrap();
        assert_eq!((px.red(), px.green(), px.blue()), (255, 0, 0));
        let bg = pm.pixel(20, 1).unwrap();
        assert_eq!((bg.red(), bg.green(), bg.blue()), (255, 255, 255));
    }

    #[test]
    fn broken_svg_is_an_error_not_a_panic() {
        assert!(Rasterizer::new().png("<svg", 1.0).is_err());
    }
}
