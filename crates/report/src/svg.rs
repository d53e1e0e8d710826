//! A small, dependency-free SVG line chart: linear, log10 or log2 axes,
//! categorical x axes, legends, reference lines, shaded ranges and
//! annotations. The output is plain SVG 1.1 that browsers and resvg render
//! alike (no CSS, no scripts, no external fonts).

use std::fmt::Write;

/// Colours of series, in order (Tableau 10, readable by colour-blind people).
pub const PALETTE: [&str; 10] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

/// Font stack written into every chart.
pub const FONT: &str = "DejaVu Sans, Helvetica, Arial, sans-serif";

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
    /// Unique among the charts of one page (used for clip path ids).
    pub id: String,
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

impl Chart {
    /// A chart with the given axes and nothing on it.
    pub fn new(id: &str, title: &str, x: Axis, y: Axis) -> Chart {
        Chart {
            id: id.to_string(),
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
    pub fn to_svg(&self, w: f64, h: f64) -> String {
        let mut s = svg_open(w, h, &self.title);
        self.render(&mut s, 0.0, 0.0, w, h);
        s.push_str("</svg>\n");
        s
    }

    /// Draws the chart into the box (`x0`, `y0`, `w`, `h`) of an open SVG.
    pub fn render(&self, s: &mut String, x0: f64, y0: f64, w: f64, h: f64) {
        let legend = self.lines.iter().any(|l| !l.label.is_empty());
        let legend_w = if legend { 190.0 } else { 0.0 };
        let rotate_x = self
            .categories
            .as_ref()
            .is_some_and(|c| c.iter().map(|c| c.chars().count()).sum::<usize>() * 7 > 600);
        let top = y0 + if self.subtitle.is_empty() { 34.0 } else { 50.0 };
        let bottom_pad = if rotate_x { 110.0 } else { 50.0 };
        let left = x0 + 74.0;
        let right = x0 + w - 16.0 - legend_w;
        let bottom = y0 + h - bottom_pad;
        let (pw, ph) = ((right - left).max(10.0), (bottom - top).max(10.0));

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
        let (xlo, xhi, xticks) =
            domain(self.x.scale, &xs, self.categories.as_ref().map(|c| c.len()));
        let (ylo, yhi, yticks) = domain(self.y.scale, &ys, None);
        let (txlo, txhi) = (tf(self.x.scale, xlo), tf(self.x.scale, xhi));
        let (tylo, tyhi) = (tf(self.y.scale, ylo), tf(self.y.scale, yhi));
        let px = |v: f64| left + (tf(self.x.scale, v) - txlo) / (txhi - txlo).max(1e-12) * pw;
        let py = |v: f64| bottom - (tf(self.y.scale, v) - tylo) / (tyhi - tylo).max(1e-12) * ph;

        // title
        let _ = write!(
            s,
            r##"<text x="{:.1}" y="{:.1}" font-size="15" font-weight="bold" fill="#222">{}</text>"##,
            x0 + 12.0,
            y0 + 22.0,
            esc(&self.title)
        );
        if !self.subtitle.is_empty() {
            let _ = write!(
                s,
                r##"<text x="{:.1}" y="{:.1}" fill="#555">{}</text>"##,
                x0 + 12.0,
                y0 + 40.0,
                esc(&trunc(&self.subtitle, 110))
            );
        }
        // plot frame, shade and grid
        let _ = write!(
            s,
            r##"<rect x="{left:.1}" y="{top:.1}" width="{pw:.1}" height="{ph:.1}" fill="#fbfbfb" stroke="#999"/>"##
        );
        if let Some((a, b, label)) = &self.shade {
            let (xa, xb) = (px(*a).clamp(left, right), px(*b).clamp(left, right));
            if xb > xa {
                let _ = write!(
                    s,
                    r##"<rect x="{xa:.1}" y="{top:.1}" width="{:.1}" height="{ph:.1}" fill="#e8e8e8"/><text x="{:.1}" y="{:.1}" font-size="11" fill="#777">{}</text>"##,
                    xb - xa,
                    xa + 4.0,
                    top + 14.0,
                    esc(label)
                );
            }
        }
        for t in &yticks {
            let y = py(*t);
            if y < top - 0.5 || y > bottom + 0.5 {
                continue;
            }
            let _ = write!(
                s,
                r##"<line x1="{left:.1}" y1="{y:.1}" x2="{right:.1}" y2="{y:.1}" stroke="#e2e2e2"/><text x="{:.1}" y="{:.1}" text-anchor="end" fill="#333">{}</text>"##,
                left - 6.0,
                y + 4.0,
                esc(&(self.y.format)(*t))
            );
        }
        for t in &xticks {
            let x = px(*t);
            if x < left - 0.5 || x > right + 0.5 {
                continue;
            }
            let label = match &self.categories {
                Some(c) => trunc(&c[*t as usize], 22),
                None => (self.x.format)(*t),
            };
            let _ = write!(
                s,
                r##"<line x1="{x:.1}" y1="{top:.1}" x2="{x:.1}" y2="{bottom:.1}" stroke="#eeeeee"/>"##
            );
            if rotate_x {
                let _ = write!(
                    s,
                    r##"<text x="{x:.1}" y="{:.1}" text-anchor="end" font-size="11" fill="#333" transform="rotate(-40 {x:.1} {:.1})">{}</text>"##,
                    bottom + 14.0,
                    bottom + 14.0,
                    esc(&label)
                );
            } else {
                let _ = write!(
                    s,
                    r##"<text x="{x:.1}" y="{:.1}" text-anchor="middle" fill="#333">{}</text>"##,
                    bottom + 17.0,
                    esc(&label)
                );
            }
        }
        // axis titles
        let _ = write!(
            s,
            r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" fill="#222">{}</text>"##,
            left + pw / 2.0,
            y0 + h - 10.0,
            esc(&self.x.title)
        );
        let (ax, ay) = (x0 + 16.0, top + ph / 2.0);
        let _ = write!(
            s,
            r##"<text x="{ax:.1}" y="{ay:.1}" text-anchor="middle" fill="#222" transform="rotate(-90 {ax:.1} {ay:.1})">{}</text>"##,
            esc(&self.y.title)
        );
        // clip to the plot area
        let clip = format!("clip-{}", self.id);
        let _ = write!(
            s,
            r#"<clipPath id="{clip}"><rect x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}"/></clipPath><g clip-path="url(#{clip})">"#,
            left - 4.0,
            top - 4.0,
            pw + 8.0,
            ph + 8.0
        );
        for hl in &hlines {
            let y = py(hl.y);
            let _ = write!(
                s,
                r##"<line x1="{left:.1}" y1="{y:.1}" x2="{right:.1}" y2="{y:.1}" stroke="#c0392b" stroke-width="1.2" stroke-dasharray="6 4"/><text x="{:.1}" y="{:.1}" text-anchor="end" font-size="11" fill="#c0392b">{}</text>"##,
                right - 4.0,
                y - 4.0,
                esc(&hl.label)
            );
        }
        for l in &self.lines {
            let color = PALETTE[l.color % PALETTE.len()];
            let pts: Vec<(f64, f64)> = l
                .points
                .iter()
                .filter(|(x, y)| {
                    x.is_finite()
                        && y.is_finite()
                        && (self.y.scale == Scale::Linear || *y > 0.0)
                        && (self.x.scale == Scale::Linear || *x > 0.0)
                })
                .map(|(x, y)| (px(*x), py(*y)))
                .collect();
            if l.connect && pts.len() > 1 {
                let d: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
                let _ = write!(
                    s,
                    r#"<polyline class="series" fill="none" stroke="{color}" stroke-width="2"{} points="{}"/>"#,
                    if l.dashed {
                        r#" stroke-dasharray="5 4""#
                    } else {
                        ""
                    },
                    d.join(" ")
                );
            }
            if pts.len() <= 120 {
                for (x, y) in &pts {
                    let _ = write!(
                        s,
                        r#"<circle cx="{x:.1}" cy="{y:.1}" r="{}" fill="{}" stroke="{color}" stroke-width="1.5"/>"#,
                        if l.dashed { 2.5 } else { 3.5 },
                        if l.dashed { "white" } else { color }
                    );
                }
            }
        }
        s.push_str("</g>");
        for n in &self.notes {
            let (x, y) = (px(n.x), py(n.y));
            let anchor = if x > left + pw * 0.6 { "end" } else { "start" };
            let tx = if anchor == "end" { x - 8.0 } else { x + 8.0 };
            let ty = (y - 10.0).max(top + 12.0);
            let _ = write!(
                s,
                r##"<circle cx="{x:.1}" cy="{y:.1}" r="6" fill="none" stroke="#222" stroke-width="1.5"/><text x="{tx:.1}" y="{ty:.1}" text-anchor="{anchor}" font-weight="bold" stroke="white" stroke-width="4" stroke-linejoin="round">{t}</text><text class="note" x="{tx:.1}" y="{ty:.1}" text-anchor="{anchor}" font-weight="bold" fill="#222">{t}</text>"##,
                t = esc(&n.text)
            );
        }
        if legend {
            let lx = right + 14.0;
            let shown: Vec<&Line> = self.lines.iter().filter(|l| !l.label.is_empty()).collect();
            for (i, l) in shown.iter().enumerate().take(24) {
                let ly = top + 8.0 + i as f64 * 18.0;
                let color = PALETTE[l.color % PALETTE.len()];
                let _ = write!(
                    s,
                    r##"<line x1="{lx:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{color}" stroke-width="2.5"{}/><text x="{:.1}" y="{:.1}" font-size="11" fill="#222">{}</text>"##,
                    lx + 22.0,
                    if l.dashed {
                        r#" stroke-dasharray="5 4""#
                    } else {
                        ""
                    },
                    lx + 28.0,
                    ly + 4.0,
                    esc(&trunc(&l.label, 26))
                );
            }
            if shown.len() > 24 {
                let _ = write!(
                    s,
                    r##"<text x="{lx:.1}" y="{:.1}" font-size="11" fill="#555">… {} more</text>"##,
                    top + 8.0 + 24.0 * 18.0,
                    shown.len() - 24
                );
            }
        }
    }
}

/// Opens an SVG document with a white background.
pub fn svg_open(w: f64, h: f64, title: &str) -> String {
    format!(
        r#"<svg xmlns="http://www.w3.org/2000/svg" class="chart" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="{FONT}" font-size="12"><title>{}</title><rect width="{w}" height="{h}" fill="white"/>"#,
        esc(title)
    )
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
            "t",
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
        let svg = c.to_svg(800.0, 450.0);
        assert!(svg.starts_with("<svg"));
        assert!(svg.ends_with("</svg>\n"));
        assert!(svg.contains("A &amp; B"));
        assert!(svg.contains("s&lt;1&gt;"));
        assert!(svg.contains("<polyline"));
        assert!(svg.contains("max 25 IOPS at qd=4"));
        assert_eq!(svg.matches("<svg").count(), svg.matches("</svg>").count());
    }
}
