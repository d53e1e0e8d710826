//! `report.html`: one self-contained page (charts inline as SVG, styles
//! inline, nothing fetched from the network) with the knees, the charts, the
//! table of points and the warnings.
//!
//! A short inline script records on `<html>` whether the page's visible
//! charts rendered (`data-charts-visible`, `data-charts-rendered`) and how
//! many script errors occurred (`data-errors`); the page reads the same
//! without scripts.

use crate::analysis::Analysis;
use crate::charts::ChartFile;
use crate::report::Table;
use crate::svg::esc;

const STYLE: &str = r#"
body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; margin: 24px; color: #222; max-width: 1400px; }
h1 { font-size: 22px; margin-bottom: 4px; }
h2 { font-size: 17px; margin-top: 28px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
p.meta { color: #555; margin-top: 0; }
ul.knees li { margin: 4px 0; }
figure { margin: 12px 0; }
figure svg { max-width: 100%; height: auto; border: 1px solid #eee; }
div.table { overflow-x: auto; }
table { border-collapse: collapse; font-size: 12px; }
th, td { border: 1px solid #ddd; padding: 3px 6px; white-space: nowrap; }
th { background: #f3f3f3; position: sticky; top: 0; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
tr.bad td { color: #a33; }
details { margin: 8px 0; }
summary { cursor: pointer; }
"#;

const SELF_CHECK: &str = r#"
(function () {
  var errors = 0;
  window.addEventListener('error', function () {
    errors++;
    document.documentElement.setAttribute('data-errors', String(errors));
  });
  window.addEventListener('load', function () {
    var svgs = Array.prototype.slice.call(document.querySelectorAll('svg.chart'));
    var visible = svgs.filter(function (s) { return !s.closest('details:not([open])'); });
    var rendered = visible.filter(function (s) {
      var r = s.getBoundingClientRect();
      if (r.width <= 0 || r.height <= 0) { return false; }
      var marks = s.querySelectorAll('polyline, circle');
      for (var i = 0; i < marks.length; i++) {
        var b = marks[i].getBBox();
        if (b.width + b.height > 0) { return true; }
      }
      return false;
    });
    var h = document.documentElement;
    h.setAttribute('data-charts-visible', String(visible.length));
    h.setAttribute('data-charts-rendered', String(rendered.length));
    h.setAttribute('data-errors', String(errors));
  });
})();
"#;

/// Time-series charts are shown open up to this many points.
const OPEN_TIMESERIES: usize = 12;

/// The page.
pub fn page(
    title: &str,
    meta: &str,
    analysis: &Analysis,
    charts: &[ChartFile],
    table: &Table,
    warnings: &[(String, String)],
) -> String {
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    h.push_str(&format!("<title>{}</title>\n", esc(title)));
    h.push_str(&format!("<style>{STYLE}</style>\n"));
    h.push_str(&format!("<script>{SELF_CHECK}</script>\n</head>\n<body>\n"));
    h.push_str(&format!(
        "<h1>{}</h1>\n<p class=\"meta\">{}</p>\n",
        esc(title),
        esc(meta)
    ));

    h.push_str("<h2>Knees</h2>\n<ul class=\"knees\">\n");
    let lines = analysis.knee_lines();
    if lines.is_empty() {
        h.push_str("<li>no finished point with figures</li>\n");
    }
    for l in lines {
        h.push_str(&format!("<li>{}</li>\n", esc(&l)));
    }
    h.push_str("</ul>\n");

    let summary: Vec<&ChartFile> = charts.iter().filter(|c| c.point.is_none()).collect();
    if !summary.is_empty() {
        h.push_str("<h2>Charts</h2>\n");
        for c in summary {
            h.push_str(&format!(
                "<figure id=\"{}\">\n{}</figure>\n",
                esc(c.stem.trim_start_matches("charts/")),
                strip_decl(&c.svg)
            ));
        }
    }

    points_table(&mut h, table);

    if !warnings.is_empty() {
        h.push_str("<h2>Warnings</h2>\n<ul>\n");
        for (id, w) in warnings {
            h.push_str(&format!("<li><b>{}</b>: {}</li>\n", esc(id), esc(w)));
        }
        h.push_str("</ul>\n");
    }

    let ts: Vec<&ChartFile> = charts.iter().filter(|c| c.point.is_some()).collect();
    if !ts.is_empty() {
        h.push_str("<h2>Per-second time series</h2>\n");
        let open = ts.len() <= OPEN_TIMESERIES;
        for c in ts {
            h.push_str(&format!(
                "<details{}><summary>{}</summary>\n<figure>\n{}</figure>\n</details>\n",
                if open { " open" } else { "" },
                esc(&c.title),
                strip_decl(&c.svg)
            ));
        }
    }
    h.push_str("</body>\n</html>\n");
    h
}

/// The "Points" section: one row per point, failed ones marked.
fn points_table(h: &mut String, table: &Table) {
    h.push_str("<h2>Points</h2>\n<div class=\"table\"><table>\n<thead><tr>");
    for c in &table.header_labels {
        h.push_str(&format!("<th>{}</th>", esc(c)));
    }
    h.push_str("</tr></thead>\n<tbody>\n");
    for (row, status) in table.display_rows.iter().zip(&table.statuses) {
        let class = if status == "ok" { "" } else { " class=\"bad\"" };
        h.push_str(&format!("<tr{class}>"));
        for (i, cell) in row.iter().enumerate() {
            let numeric = i >= table.first_figure;
            h.push_str(&format!(
                "<td{}>{}</td>",
                if numeric { " class=\"n\"" } else { "" },
                esc(cell)
            ));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</tbody></table></div>\n");
}

fn strip_decl(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    }
}
