//! The report's line chart, drawn with plotters' SVG backend: linear, log10
//! or log2 axes (ticks at round values and powers), categorical x axes,
//! legends, reference lines, shaded ranges and annotations. The output is
//! plain SVG that browsers and resvg render alike (no CSS, no scripts, no
//! external fonts).

use plotters::coord::Shift;
use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Colours of series, in order (Tableau 10, readable by colour-blind people).
pub const PALETTE: [RGBColor; 10] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0xe1, 0x57, 0x59),
    RGBColor(0x76, 0xb7, 0xb2),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xed, 0xc9, 0x48),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0xff, 0x9d, 0xa7),
    RGBColor(0x9c, 0x75, 0x5f),
    RGBColor(0xba, 0xb0, 0xac),
];

/// Font family of every text (resvg maps it to DejaVu Sans).
const FONT: &str = "sans-serif";
const INK: RGBColor = RGBColor(0x22, 0x22, 0x22);
const MUTED: RGBColor = RGBColor(0x55, 0x55, 0x55);
const GRID: RGBColor = RGBColor(0xe2, 0xe2, 0xe2);
const FRAME: RGBColor = RGBColor(0x99, 0x99, 0x99);
const SHADE: RGBColor = RGBColor(0xe8, 0xe8, 0xe8);
const SLO: RGBColor = RGBColor(0xc0, 0x39, 0x2b);

/// How an axis maps values to positions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    /// Linear, starting at zero unless the data goes below.
    Linear,
    /// Logarithmic with decades (for latencies spanning orders of magnitude).
    Log10,
    /// Logarithmic with powers of two (for concurrency: 1, 2, 4, …).
    Log2,
}

/// An axis: its title, scale and how tick labels are written.
#[derive(Debug, Clone)]
pub struct Axis {
    /// Axis title (with unit).
    pub title: String,
    /// Scale.
    pub scale: Scale,
    /// Tick label formatter.
    pub format: fn(f64) -> String,
}

/// One line (series) of a chart.
#[derive(Debug, Clone)]
pub struct Line {
    /// Legend text.
    pub label: String,
    /// (x, y) in data units; for categorical charts x is the category index.
    pub points: Vec<(f64, f64)>,
    /// Index into [`PALETTE`].
    pub color: usize,
    /// Dashed stroke (e.g. p99 beside a solid mean).
    pub dashed: bool,
    /// Join the points (false: markers only).
    pub connect: bool,
}

/// A note pinned to a data point.
#[derive(Debug, Clone)]
pub struct Annotation {
    /// Position in data units.
    pub x: f64,
    /// Position in data units.
    pub y: f64,
    /// Text.
    pub text: String,
}

/// A horizontal reference line (an SLO).
#[derive(Debug, Clone)]
pub struct HLine {
    /// Value in y units.
    pub y: f64,
    /// Label at its right end.
    pub label: String,
}

/// A line chart.
#[derive(Debug, Clone)]
pub struct Chart {
    /// Title.
    pub title: String,
    /// Smaller line under the title.
    pub subtitle: String,
    /// Horizontal axis.
    pub x: Axis,
    /// Vertical axis.
    pub y: Axis,
    /// Category names, for a categorical x axis (x = index).
    pub categories: Option<Vec<String>>,
    /// The lines.
    pub lines: Vec<Line>,
    /// Reference lines.
    pub hlines: Vec<HLine>,
    /// Annotations.
    pub notes: Vec<Annotation>,
    /// A shaded x range with a label (e.g. the ramp).
    pub shade: Option<(f64, f64, String)>,
}

/// Escapes text for XML.
pub fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn trunc(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let t: String = s.chars().take(n.saturating_sub(1)).collect();
        format!("{t}…")
    }
}

/// Tick values for a linear range: 1, 2 or 5 times a power of ten apart.
pub fn linear_ticks(lo: f64, hi: f64, target: usize) -> Vec<f64> {
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
        return vec![lo];
    }
    let raw = (hi - lo) / target.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let first = (lo / step).ceil() as i64;
    let last = (hi / step + 1e-9).floor() as i64;
    (first..=last).map(|i| i as f64 * step).collect()
}

/// Ticks of a log axis between `lo` and `hi` (both > 0).
pub fn log_ticks(lo: f64, hi: f64, base2: bool) -> Vec<f64> {
    let mut t = Vec::new();
    if base2 {
        let mut e = lo.log2().floor() as i32;
        let step = if (hi / lo).log2() > 12.0 { 2 } else { 1 };
        while 2f64.powi(e) <= hi * 1.0001 {
            let v = 2f64.powi(e);
            if v >= lo * 0.9999 {
                t.push(v);
            }
            e += step;
        }
    } else {
        let decades = (hi / lo).log10();
        let mults: &[f64] = if decades < 1.5 {
            &[1.0, 2.0, 5.0]
        } else if decades < 3.0 {
            &[1.0, 3.0]
        } else {
            &[1.0]
        };
        let mut e = lo.log10().floor() as i32;
        while 10f64.powi(e) <= hi {
            for m in mults {
                let v = m * 10f64.powi(e);
                if v >= lo * 0.9999 && v <= hi * 1.0001 {
                    t.push(v);
                }
            }
            e += 1;
        }
    }
    t
}

/// Bounds and ticks of an axis for the given data values.
fn domain(scale: Scale, vals: &[f64], categorical: Option<usize>) -> (f64, f64, Vec<f64>) {
    if let Some(n) = categorical {
        return (-0.5, n as f64 - 0.5, (0..n).map(|i| i as f64).collect());
    }
    let vals: Vec<f64> = vals
        .iter()
        .copied()
        .filter(|v| v.is_finite() && (scale == Scale::Linear || *v > 0.0))
        .collect();
    let (mut lo, mut hi) = vals
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), v| (a.min(*v), b.max(*v)));
    if vals.is_empty() {
        (lo, hi) = (0.0, 1.0);
    }
    match scale {
        Scale::Linear => {
            lo = lo.min(0.0);
            if hi <= lo {
                hi = lo + 1.0;
            }
            let t = linear_ticks(lo, hi * 1.05, 5);
            let step = if t.len() > 1 { t[1] - t[0] } else { hi };
            let top = (hi * 1.05 / step).ceil() * step;
            let ticks = linear_ticks(lo, top, 5);
            (lo, top, ticks)
        }
        Scale::Log10 | Scale::Log2 => {
            if hi <= lo {
                (lo, hi) = (lo / 2.0, hi * 2.0);
            }
            let base2 = scale == Scale::Log2;
            let (l, h) = if base2 {
                (2f64.powf(lo.log2().floor()), 2f64.powf(hi.log2().ceil()))
            } else {
                (
                    10f64.powf((lo.log10() * 3.0).floor() / 3.0) * 0.98,
                    10f64.powf((hi.log10() * 3.0).ceil() / 3.0) * 1.02,
                )
            };
            (l, h, log_ticks(l, h, base2))
        }
    }
}

fn tf(scale: Scale, v: f64) -> f64 {
    match scale {
        Scale::Linear => v,
        Scale::Log10 => v.max(1e-12).log10(),
        Scale::Log2 => v.max(1e-12).log2(),
    }
}

/// Picks Log10 when positive values span more than `ratio`, else Linear.
pub fn auto_scale(vals: &[f64], ratio: f64) -> Scale {
    let pos: Vec<f64> = vals.iter().copied().filter(|v| *v > 0.0).collect();
    let lo = pos.iter().copied().fold(f64::MAX, f64::min);
    let hi = pos.iter().copied().fold(f64::MIN, f64::max);
    if pos.len() > 1 && hi / lo > ratio {
        Scale::Log10
    } else {
        Scale::Linear
    }
}

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type Plot<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Cartesian2d<Ticked, Ticked>>;
type DrawResult = Result<(), String>;

fn font(size: f64, color: RGBColor) -> TextStyle<'static> {
    // plotters writes font-size as size / 1.24
    (FONT, size * 1.24).into_font().color(&color)
}

fn bold(size: f64, color: RGBColor) -> TextStyle<'static> {
    (FONT, size * 1.24, FontStyle::Bold)
        .into_font()
        .color(&color)
}

fn failed<E: std::fmt::Debug>(e: E) -> String {
    format!("{e:?}")
}

/// An axis in transformed units (log10 or log2 of the value for log
/// scales) whose ticks are the round values and powers [`domain`] chose,
/// not plotters' own.
#[derive(Debug, Clone)]
struct Ticked {
    scale: Scale,
    lo: f64,
    hi: f64,
    /// Tick values, in data units.
    ticks: Vec<f64>,
}

impl Ticked {
    fn new(scale: Scale, (lo, hi, ticks): (f64, f64, Vec<f64>)) -> Ticked {
        Ticked {
            scale,
            lo: tf(scale, lo),
            hi: tf(scale, hi),
            ticks,
        }
    }

    /// The tick at transformed position `v`, in data units (labels show the
    /// exact tick, not a value rounded through the logarithm).
    fn tick_at(&self, v: f64) -> f64 {
        let off = |t: &f64| (tf(self.scale, *t) - v).abs();
        self.ticks
            .iter()
            .copied()
            .min_by(|a, b| off(a).total_cmp(&off(b)))
            .unwrap_or(v)
    }
}

impl Ranged for Ticked {
    type FormatOption = plotters::coord::ranged1d::DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let f = (value - self.lo) / (self.hi - self.lo).max(1e-12);
        limit.0 + (f * (limit.1 - limit.0) as f64).round() as i32
    }

    fn key_points<Hint: plotters::coord::ranged1d::KeyPointHint>(&self, _: Hint) -> Vec<f64> {
        self.ticks.iter().map(|t| tf(self.scale, *t)).collect()
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

impl Chart {
    /// A chart with the given axes and nothing on it.
    pub fn new(title: &str, x: Axis, y: Axis) -> Chart {
        Chart {
            title: title.to_string(),
            subtitle: String::new(),
            x,
            y,
            categories: None,
            lines: Vec::new(),
            hlines: Vec::new(),
            notes: Vec::new(),
            shade: None,
        }
    }

    /// A standalone SVG document of `w` × `h` pixels.
    pub fn to_svg(&self, w: u32, h: u32) -> String {
        document(w, h, &self.title, &[(self, 1.0)])
    }

    /// Whether category names are too long to sit side by side.
    fn rotate_x(&self) -> bool {
        self.categories
            .as_ref()
            .is_some_and(|c| c.iter().map(|c| c.chars().count()).sum::<usize>() * 7 > 600)
    }

    /// The reference lines worth showing (not far above the data) and the
    /// two axes, fitted to the data, the notes and those lines.
    fn frame(&self) -> (Vec<&HLine>, Ticked, Ticked) {
        let xs: Vec<f64> = self
            .lines
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.0))
            .chain(self.notes.iter().map(|n| n.x))
            .collect();
        let mut ys: Vec<f64> = self
            .lines
            .iter()
            .flat_map(|l| l.points.iter().map(|p| p.1))
            .collect();
        let data_max = ys.iter().copied().fold(0.0, f64::max);
        let hlines: Vec<&HLine> = self
            .hlines
            .iter()
            .filter(|hl| hl.y <= data_max * 2.0 || data_max == 0.0)
            .collect();
        ys.extend(hlines.iter().map(|hl| hl.y));
        let categories = self.categories.as_ref().map(|c| c.len());
        let x = Ticked::new(self.x.scale, domain(self.x.scale, &xs, categories));
        let y = Ticked::new(self.y.scale, domain(self.y.scale, &ys, None));
        (hlines, x, y)
    }

    /// Draws the chart into `area`: title, plot on the left, legend on the right.
    fn draw(&self, area: &Area) -> DrawResult {
        let (w, _) = area.dim_in_pixel();
        let legend: Vec<&Line> = self.lines.iter().filter(|l| !l.label.is_empty()).collect();
        let legend_w = if legend.is_empty() { 0 } else { 190 };
        let (plot, key) = area.split_horizontally(w.saturating_sub(legend_w));
        let title = Text::new(self.title.clone(), (12, 8), bold(15.0, INK));
        plot.draw(&title).map_err(failed)?;
        let top = if self.subtitle.is_empty() {
            34
        } else {
            let sub = trunc(&self.subtitle, 110);
            plot.draw(&Text::new(sub, (12, 28), font(12.0, MUTED)))
                .map_err(failed)?;
            50
        };
        self.draw_plot(&plot, top)?;
        draw_legend(&key, &legend, top as i32)
    }

    /// The axes, grid and everything drawn in data coordinates.
    fn draw_plot(&self, plot: &Area, top: u32) -> DrawResult {
        let (hlines, x, y) = self.frame();
        let rotate_x = self.rotate_x();
        let mut chart = ChartBuilder::on(plot)
            .margin_top(top)
            .margin_left(12)
            .margin_right(16)
            .margin_bottom(6)
            .x_label_area_size(if rotate_x { 150 } else { 40 })
            .y_label_area_size(62)
            .build_cartesian_2d(x, y)
            .map_err(failed)?;
        chart
            .plotting_area()
            .fill(&RGBColor(0xfb, 0xfb, 0xfb))
            .map_err(failed)?;
        self.draw_shade(&mut chart)?;
        self.draw_mesh(&mut chart, rotate_x)?;
        for hl in hlines {
            draw_hline(&mut chart, hl)?;
        }
        for l in &self.lines {
            draw_line(&mut chart, l)?;
        }
        for n in &self.notes {
            draw_note(&mut chart, n)?;
        }
        Ok(())
    }

    /// The shaded x range (the ramp) with its label in the top left corner.
    fn draw_shade(&self, chart: &mut Plot) -> DrawResult {
        let Some((a, b, label)) = &self.shade else {
            return Ok(());
        };
        let (x, y) = (chart.x_range(), chart.y_range());
        let a = tf(self.x.scale, *a).max(x.start);
        let b = tf(self.x.scale, *b).min(x.end);
        if b <= a {
            return Ok(());
        }
        let band = Rectangle::new([(a, y.start), (b, y.end)], SHADE.filled());
        chart.draw_series([band]).map_err(failed)?;
        let text = Text::new(label.clone(), (4, 6), font(11.0, MUTED));
        chart
            .draw_series([EmptyElement::at((a, y.end)) + text])
            .map_err(failed)?;
        Ok(())
    }

    /// Grid, axes, tick labels and axis titles. Long category names are
    /// written downwards under their tick here, not by the mesh (which
    /// centres them on the tick).
    fn draw_mesh(&self, chart: &mut Plot, rotate_x: bool) -> DrawResult {
        let x_axis = &chart.as_coord_spec().x_spec().clone();
        let y_axis = &chart.as_coord_spec().y_spec().clone();
        let x_label = |v: &f64| match &self.categories {
            Some(_) if rotate_x => String::new(),
            Some(c) => c
                .get(v.round().max(0.0) as usize)
                .map(|s| trunc(s, 22))
                .unwrap_or_default(),
            None => (self.x.format)(x_axis.tick_at(*v)),
        };
        let y_label = |v: &f64| (self.y.format)(y_axis.tick_at(*v));
        chart
            .configure_mesh()
            .x_desc(self.x.title.clone())
            .y_desc(self.y.title.clone())
            .x_label_formatter(&x_label)
            .y_label_formatter(&y_label)
            .label_style(font(12.0, INK))
            .axis_desc_style(font(12.0, INK))
            .bold_line_style(GRID)
            .light_line_style(TRANSPARENT)
            .axis_style(FRAME)
            .draw()
            .map_err(failed)?;
        let Some(c) = self.categories.as_ref().filter(|_| rotate_x) else {
            return Ok(());
        };
        let bottom = chart.y_range().start;
        let style = font(11.0, INK)
            .transform(FontTransform::Rotate90)
            .pos(Pos::new(HPos::Left, VPos::Center));
        chart
            .draw_series(c.iter().enumerate().map(|(i, name)| {
                EmptyElement::at((i as f64, bottom))
                    + Text::new(trunc(name, 22), (0, 8), style.clone())
            }))
            .map_err(failed)?;
        Ok(())
    }
}

/// A legend entry per labelled line (a stroke in its colour and dash, and
/// the label), at most 24 of them.
fn draw_legend(key: &Area, legend: &[&Line], top: i32) -> DrawResult {
    for (i, l) in legend.iter().enumerate().take(24) {
        let y = top + 8 + i as i32 * 18;
        let style = PALETTE[l.color % PALETTE.len()].stroke_width(3);
        let stroke = vec![(0, y), (22, y)];
        if l.dashed {
            key.draw(&DashedPathElement::new(stroke, 5, 4, style))
        } else {
            key.draw(&PathElement::new(stroke, style))
        }
        .map_err(failed)?;
        let label_style = font(11.0, INK).pos(Pos::new(HPos::Left, VPos::Center));
        key.draw(&Text::new(trunc(&l.label, 26), (28, y), label_style))
            .map_err(failed)?;
    }
    if legend.len() > 24 {
        let more = format!("… {} more", legend.len() - 24);
        key.draw(&Text::new(more, (0, top + 8 + 24 * 18), font(11.0, MUTED)))
            .map_err(failed)?;
    }
    Ok(())
}

/// A dashed horizontal reference line across the plot, labelled at its right end.
fn draw_hline(chart: &mut Plot, hl: &HLine) -> DrawResult {
    let x = chart.x_range();
    let y = tf(chart.as_coord_spec().y_spec().scale, hl.y);
    let line = DashedLineSeries::new([(x.start, y), (x.end, y)], 6, 4, SLO.stroke_width(1));
    chart.draw_series(line).map_err(failed)?;
    let style = font(11.0, SLO).pos(Pos::new(HPos::Right, VPos::Bottom));
    chart
        .draw_series([Text::new(hl.label.clone(), (x.end, y), style)])
        .map_err(failed)?;
    Ok(())
}

/// A line: the stroke (solid or dashed) and, up to 120 points, its markers
/// (filled for solid lines, hollow for dashed ones).
fn draw_line(chart: &mut Plot, l: &Line) -> DrawResult {
    let (xs, ys) = (
        chart.as_coord_spec().x_spec().scale,
        chart.as_coord_spec().y_spec().scale,
    );
    let color = PALETTE[l.color % PALETTE.len()];
    let pts: Vec<(f64, f64)> = l
        .points
        .iter()
        .filter(|(x, y)| {
            x.is_finite()
                && y.is_finite()
                && (ys == Scale::Linear || *y > 0.0)
                && (xs == Scale::Linear || *x > 0.0)
        })
        .map(|(x, y)| (tf(xs, *x), tf(ys, *y)))
        .collect();
    if l.connect && pts.len() > 1 {
        let style = color.stroke_width(2);
        if l.dashed {
            chart.draw_series(DashedLineSeries::new(pts.clone(), 5, 4, style))
        } else {
            chart.draw_series(LineSeries::new(pts.clone(), style))
        }
        .map_err(failed)?;
    }
    if pts.len() > 120 {
        return Ok(());
    }
    let (r, fill) = if l.dashed { (3, WHITE) } else { (4, color) };
    chart
        .draw_series(pts.iter().map(|p| {
            EmptyElement::at(*p)
                + Circle::new((0, 0), r, fill.filled())
                + Circle::new((0, 0), r, color.stroke_width(if l.dashed { 2 } else { 1 }))
        }))
        .map_err(failed)?;
    Ok(())
}

/// A ringed point with bold text beside it, on the side with more room.
fn draw_note(chart: &mut Plot, n: &Annotation) -> DrawResult {
    let spec = chart.as_coord_spec();
    let (x, y) = (spec.x_spec(), spec.y_spec());
    let p = (tf(x.scale, n.x), tf(y.scale, n.y));
    let (dx, h) = if p.0 > x.lo + (x.hi - x.lo) * 0.6 {
        (-8, HPos::Right)
    } else {
        (8, HPos::Left)
    };
    let style = bold(12.0, INK).pos(Pos::new(h, VPos::Bottom));
    chart
        .draw_series([EmptyElement::at(p)
            + Circle::new((0, 0), 6, INK.stroke_width(2))
            + Text::new(n.text.clone(), (dx, -10), style)])
        .map_err(failed)?;
    Ok(())
}

/// An SVG document of `w` × `h` pixels holding `panels` stacked from the top,
/// each with its share of the height. The root element has `class="chart"`
/// and a `<title>` (the report page finds its charts by them).
pub fn document(w: u32, h: u32, title: &str, panels: &[(&Chart, f64)]) -> String {
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, (w, h)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let mut y = 0u32;
        for (chart, share) in panels {
            let ph = ((h as f64 * share).round() as u32).min(h - y);
            let area = root.clone().shrink((0, y), (w, ph));
            if let Err(e) = chart.draw(&area) {
                let _ = area.draw(&Text::new(
                    format!("chart could not be drawn: {e}"),
                    (12, 12),
                    font(12.0, SLO),
                ));
            }
            y += ph;
        }
        let _ = root.present();
    }
    if let Some(end) = s.find('>') {
        s.insert_str(end + 1, &format!("<title>{}</title>", esc(title)));
        s.insert_str("<svg".len(), " class=\"chart\"");
    }
    if !s.ends_with('\n') {
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(v: f64) -> String {
        format!("{v}")
    }

    #[test]
    fn linear_ticks_are_round() {
        assert_eq!(
            linear_ticks(0.0, 100.0, 5),
            vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
        );
        assert_eq!(linear_ticks(0.0, 1.0, 4), vec![0.0, 0.25, 0.5, 0.75, 1.0]);
    }

    #[test]
    fn log_ticks_are_powers() {
        assert_eq!(log_ticks(1.0, 256.0, true).len(), 9);
        assert_eq!(
            log_ticks(10.0, 10000.0, false),
            vec![10.0, 100.0, 1000.0, 10000.0]
        );
    }

    #[test]
    fn charts_are_well_formed_svg() {
        let mut c = Chart::new(
            "A & B",
            Axis {
                title: "x".into(),
                scale: Scale::Log2,
                format: plain,
            },
            Axis {
                title: "y".into(),
                scale: Scale::Linear,
                format: plain,
            },
        );
        c.lines.push(Line {
            label: "s<1>".into(),
            points: vec![(1.0, 10.0), (2.0, 20.0), (4.0, 25.0)],
            color: 0,
            dashed: false,
            connect: true,
        });
        c.notes.push(Annotation {
            x: 4.0,
            y: 25.0,
            text: "max 25 IOPS at qd=4".into(),
        });
        c.hlines.push(HLine {
            y: 22.0,
            label: "SLO".into(),
        });
        let svg = c.to_svg(800, 450);
        assert!(svg.starts_with("<svg"));
        assert!(svg.ends_with("</svg>\n"));
        assert!(svg.contains("A &amp; B"));
        assert!(svg.contains("s&lt;1&gt;"));
        assert!(svg.contains("<polyline"));
        assert!(svg.contains("max 25 IOPS at qd=4"));
        assert_eq!(svg.matches("<svg").count(), svg.matches("</svg>").count());
    }
}
