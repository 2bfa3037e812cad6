//! A small hand-written SVG chart writer for the hit-ratio report: line
//! charts (axes, grid, one polyline per series and a legend) and grouped
//! bar charts (one group per category, one bar per series), with no
//! dependency.
//!
//! The output is plain SVG 1.1 text that browsers and GitHub render
//! directly. Series are sampled at a fixed x step (the simulator's window),
//! so a point is `(i + 1) * x_step`.

use std::fmt::Write as _;

/// One line of a chart.
#[derive(Clone, Debug, PartialEq)]
pub struct Series {
    /// Legend label.
    pub name: String,
    /// The y values, one per x step.
    pub values: Vec<f64>,
}

/// What to draw.
#[derive(Clone, Debug, PartialEq)]
pub struct LineChart {
    /// Title above the plot.
    pub title: String,
    /// Label of the x axis.
    pub x_label: String,
    /// Label of the y axis.
    pub y_label: String,
    /// x distance between consecutive values (requests per window).
    pub x_step: f64,
    /// Top of the y axis; the bottom is 0.
    pub y_max: f64,
    /// Multiply y values by this for tick labels (100 for percentages).
    pub y_tick_scale: f64,
    /// The lines.
    pub series: Vec<Series>,
}

const WIDTH: f64 = 760.0;
const HEIGHT: f64 = 420.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 170.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 56.0;
/// Colour-blind-safe palette (Okabe and Ito), then two of Tol's muted
/// colours so the nine patterns get distinct lines.
const PALETTE: [&str; 10] = [
    "#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442",
    "#882255", "#999999",
];

impl LineChart {
    /// Renders the chart as an SVG document.
    pub fn to_svg(&self) -> String {
        let plot_w = WIDTH - LEFT - RIGHT;
        let plot_h = HEIGHT - TOP - BOTTOM;
        let points = self
            .series
            .iter()
            .map(|s| s.values.len())
            .max()
            .unwrap_or(0);
        let x_max = (points as f64 * self.x_step).max(1.0);
        let y_max = if self.y_max > 0.0 { self.y_max } else { 1.0 };
        let x = |v: f64| LEFT + plot_w * v / x_max;
        let y = |v: f64| TOP + plot_h * (1.0 - v.clamp(0.0, y_max) / y_max);

        let mut out = String::new();
        open_svg(&mut out, &self.title, plot_w);
        for i in 0..=5 {
            let v = y_max * f64::from(i) / 5.0;
            let yy = y(v);
            y_gridline(&mut out, yy, plot_w, &trim(v * self.y_tick_scale));
            let xv = x_max * f64::from(i) / 5.0;
            let xx = x(xv);
            let _ = writeln!(
                out,
                r##"<line x1="{xx:.1}" y1="{TOP}" x2="{xx:.1}" y2="{:.1}" stroke="#eee"/><text x="{xx:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                TOP + plot_h,
                TOP + plot_h + 18.0,
                thousands(xv)
            );
        }
        let _ = writeln!(
            out,
            r##"<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#444"/>"##
        );
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            LEFT + plot_w / 2.0,
            HEIGHT - 14.0,
            escape(&self.x_label)
        );
        let _ = writeln!(
            out,
            r#"<text transform="translate(16 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
            TOP + plot_h / 2.0,
            escape(&self.y_label)
        );
        for (i, s) in self.series.iter().enumerate() {
            let colour = PALETTE[i % PALETTE.len()];
            let path: Vec<String> = s
                .values
                .iter()
                .enumerate()
                .map(|(j, &v)| format!("{:.1},{:.1}", x((j + 1) as f64 * self.x_step), y(v)))
                .collect();
            let _ = writeln!(
                out,
                r#"<polyline fill="none" stroke="{colour}" stroke-width="1.6" points="{}"/>"#,
                path.join(" ")
            );
            let ly = TOP + 10.0 + 20.0 * i as f64;
            let lx = LEFT + plot_w + 12.0;
            let _ = writeln!(
                out,
                r#"<line x1="{lx}" y1="{ly}" x2="{}" y2="{ly}" stroke="{colour}" stroke-width="3"/><text x="{}" y="{}">{}</text>"#,
                lx + 22.0,
                lx + 28.0,
                ly + 4.0,
                escape(&s.name)
            );
        }
        out.push_str("</svg>\n");
        out
    }
}

/// Grouped bars: one group per category (a pattern), one bar per series
/// (a policy), `values[i]` of a series belonging to `categories[i]`.
#[derive(Clone, Debug, PartialEq)]
pub struct BarChart {
    /// Title above the plot.
    pub title: String,
    /// Label of the y axis.
    pub y_label: String,
    /// Names under each group.
    pub categories: Vec<String>,
    /// Top of the y axis; the bottom is 0.
    pub y_max: f64,
    /// Multiply y values by this for tick labels (100 for percentages).
    pub y_tick_scale: f64,
    /// One bar per category in each series; `NaN` leaves a gap.
    pub series: Vec<Series>,
}

impl BarChart {
    /// Renders the chart as an SVG document.
    pub fn to_svg(&self) -> String {
        let plot_w = WIDTH - LEFT - RIGHT;
        let plot_h = HEIGHT - TOP - BOTTOM;
        let y_max = if self.y_max > 0.0 { self.y_max } else { 1.0 };
        let y = |v: f64| TOP + plot_h * (1.0 - v.clamp(0.0, y_max) / y_max);
        let groups = self.categories.len().max(1) as f64;
        let group_w = plot_w / groups;
        let bar_w = group_w * 0.8 / self.series.len().max(1) as f64;
        let mut out = String::new();
        open_svg(&mut out, &self.title, plot_w);
        for i in 0..=5 {
            let v = y_max * f64::from(i) / 5.0;
            let yy = y(v);
            y_gridline(&mut out, yy, plot_w, &trim(v * self.y_tick_scale));
        }
        for (g, name) in self.categories.iter().enumerate() {
            let _ = writeln!(
                out,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                LEFT + group_w * (g as f64 + 0.5),
                TOP + plot_h + 18.0,
                escape(name)
            );
        }
        for (i, s) in self.series.iter().enumerate() {
            let colour = PALETTE[i % PALETTE.len()];
            for (g, &v) in s.values.iter().enumerate().take(self.categories.len()) {
                if v.is_nan() {
                    continue;
                }
                let x = LEFT + group_w * (g as f64 + 0.1) + bar_w * i as f64;
                let _ = writeln!(
                    out,
                    r#"<rect x="{x:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{colour}"><title>{} {}: {}</title></rect>"#,
                    y(v),
                    bar_w * 0.9,
                    TOP + plot_h - y(v),
                    escape(&s.name),
                    escape(&self.categories[g]),
                    trim(v * self.y_tick_scale)
                );
            }
            let ly = TOP + 10.0 + 20.0 * i as f64;
            let lx = LEFT + plot_w + 12.0;
            let _ = writeln!(
                out,
                r#"<rect x="{lx}" y="{}" width="22" height="10" fill="{colour}"/><text x="{}" y="{}">{}</text>"#,
                ly - 5.0,
                lx + 28.0,
                ly + 4.0,
                escape(&s.name)
            );
        }
        let _ = writeln!(
            out,
            r##"<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#444"/>"##
        );
        let _ = writeln!(
            out,
            r#"<text transform="translate(16 {:.1}) rotate(-90)" text-anchor="middle">{}</text>"#,
            TOP + plot_h / 2.0,
            escape(&self.y_label)
        );
        out.push_str("</svg>\n");
        out
    }
}

/// A horizontal bar per labelled row, signed around a zero line: how far
/// each cell is from a reference (AHE against the best known algorithm,
/// per trace and size). Bars right of zero are green, left of it red; the
/// chart is as tall as its rows need.
#[derive(Clone, Debug, PartialEq)]
pub struct GapChart {
    /// Title above the plot.
    pub title: String,
    /// Label of the x axis.
    pub x_label: String,
    /// One bar per row, top to bottom.
    pub rows: Vec<(String, f64)>,
}

impl GapChart {
    const ROW: f64 = 16.0;
    const LABEL_W: f64 = 170.0;

    /// Renders the chart as an SVG document.
    pub fn to_svg(&self) -> String {
        let plot_w = WIDTH - Self::LABEL_W - 40.0;
        let plot_h = Self::ROW * self.rows.len().max(1) as f64;
        let height = TOP + plot_h + BOTTOM;
        // A symmetric axis in whole steps, so zero sits where it reads.
        let reach = self
            .rows
            .iter()
            .map(|(_, v)| v.abs())
            .filter(|v| v.is_finite())
            .fold(1.0_f64, f64::max)
            .ceil();
        let x = |v: f64| Self::LABEL_W + plot_w * (v.clamp(-reach, reach) + reach) / (2.0 * reach);
        let mut out = String::new();
        open_svg_sized(
            &mut out,
            &self.title,
            Self::LABEL_W + plot_w / 2.0,
            height,
            11,
        );
        let ticks = 4;
        for i in -ticks..=ticks {
            let v = reach * f64::from(i) / f64::from(ticks);
            let xx = x(v);
            let stroke = if i == 0 { "#444" } else { "#ddd" };
            let _ = writeln!(
                out,
                r#"<line x1="{xx:.1}" y1="{TOP}" x2="{xx:.1}" y2="{:.1}" stroke="{stroke}"/><text x="{xx:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                TOP + plot_h,
                TOP + plot_h + 16.0,
                trim(v)
            );
        }
        for (i, (label, v)) in self.rows.iter().enumerate() {
            let top = TOP + Self::ROW * i as f64;
            let _ = writeln!(
                out,
                r#"<text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"#,
                Self::LABEL_W - 6.0,
                top + Self::ROW * 0.7,
                escape(label)
            );
            if !v.is_finite() {
                continue;
            }
            let (from, to) = (x(v.min(0.0)), x(v.max(0.0)));
            let colour = if *v >= 0.0 { "#009E73" } else { "#D55E00" };
            let _ = writeln!(
                out,
                r#"<rect x="{from:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{colour}"><title>{}: {v:+.2}</title></rect>"#,
                top + 2.0,
                (to - from).max(0.5),
                Self::ROW - 4.0,
                escape(label)
            );
        }
        let _ = writeln!(
            out,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
            Self::LABEL_W + plot_w / 2.0,
            height - 14.0,
            escape(&self.x_label)
        );
        out.push_str("</svg>\n");
        out
    }
}

/// A tick label without trailing zeros: `0`, `0.2`, `40`.
/// The `<svg>` element, a white background and the centred title: what
/// every chart starts with.
fn open_svg(out: &mut String, title: &str, plot_w: f64) {
    open_svg_sized(out, title, LEFT + plot_w / 2.0, HEIGHT, 12);
}

/// [`open_svg`] for a chart `height` tall, its title centred on `title_x`.
fn open_svg_sized(out: &mut String, title: &str, title_x: f64, height: f64, font_size: u32) {
    let _ = writeln!(
        out,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="{font_size}">"#
    );
    let _ = writeln!(out, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        out,
        r#"<text x="{title_x}" y="22" text-anchor="middle" font-size="15">{}</text>"#,
        escape(title)
    );
}

/// A horizontal gridline at `yy` with its value `label` on the left axis.
fn y_gridline(out: &mut String, yy: f64, plot_w: f64, label: &str) {
    let _ = writeln!(
        out,
        r##"<line x1="{LEFT}" y1="{yy:.1}" x2="{:.1}" y2="{yy:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{label}</text>"##,
        LEFT + plot_w,
        LEFT - 6.0,
        yy + 4.0,
    );
}

fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// `0`, `200k`, `1.2M`.
fn thousands(v: f64) -> String {
    if v >= 1e6 {
        format!("{}M", trim(v / 1e6))
    } else if v >= 1e3 {
        format!("{}k", trim(v / 1e3))
    } else {
        trim(v)
    }
}

/// Escapes the characters XML text cannot hold.
fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart() -> LineChart {
        LineChart {
            title: "hit ratio <shift>".to_owned(),
            x_label: "requests".to_owned(),
            y_label: "%".to_owned(),
            x_step: 10_000.0,
            y_max: 1.0,
            y_tick_scale: 100.0,
            series: vec![
                Series {
                    name: "lru".to_owned(),
                    values: vec![0.0, 0.5, 1.0],
                },
                Series {
                    name: "a&b".to_owned(),
                    values: vec![0.25],
                },
            ],
        }
    }

    #[test]
    fn draws_one_polyline_per_series_with_scaled_points() {
        let svg = chart().to_svg();
        assert!(svg.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        assert!(svg.ends_with("</svg>\n"));
        assert_eq!(svg.matches("<polyline").count(), 2);
        // x: 30 000 requests span the 526-pixel plot from x = 64; y: 0.0 is
        // the bottom (364), 1.0 the top (40).
        assert!(
            svg.contains(r#"points="239.3,364.0 414.7,202.0 590.0,40.0""#),
            "{svg}"
        );
        assert!(svg.contains("hit ratio &lt;shift&gt;"));
        assert!(svg.contains(">a&amp;b<"));
        assert!(svg.contains(">30k<") && svg.contains(">100<") && svg.contains(">0<"));
    }

    #[test]
    fn tick_labels_are_short() {
        assert_eq!(trim(40.0), "40");
        assert_eq!(trim(0.2), "0.2");
        assert_eq!(thousands(1_200_000.0), "1.2M");
        assert_eq!(thousands(200_000.0), "200k");
        assert_eq!(thousands(0.0), "0");
    }

    #[test]
    fn bar_chart_draws_a_bar_per_value_and_skips_gaps() {
        let chart = BarChart {
            title: "hit ratio".to_owned(),
            y_label: "%".to_owned(),
            categories: vec!["zipf".to_owned(), "scan".to_owned()],
            y_max: 1.0,
            y_tick_scale: 100.0,
            series: vec![
                Series {
                    name: "lru".to_owned(),
                    values: vec![0.5, 0.0],
                },
                Series {
                    name: "ahe".to_owned(),
                    values: vec![0.75, f64::NAN],
                },
            ],
        };
        let svg = chart.to_svg();
        assert!(svg.ends_with("</svg>\n"));
        assert_eq!(svg.matches("<title>").count(), 3);
        assert!(svg.contains("<title>ahe zipf: 75</title>"), "{svg}");
        assert!(svg.contains(">scan</text>"), "{svg}");
    }

    #[test]
    fn gap_chart_draws_signed_bars_around_zero() {
        let chart = GapChart {
            title: "AHE - best".to_owned(),
            x_label: "pp".to_owned(),
            rows: vec![
                ("a @100".to_owned(), 1.5),
                ("b @100".to_owned(), -3.2),
                ("c @100".to_owned(), f64::NAN),
            ],
        };
        let svg = chart.to_svg();
        assert!(svg.ends_with("</svg>\n"));
        // Three labels, two bars (NaN has none); the axis reaches +-4.
        assert_eq!(svg.matches("<rect x=").count(), 2, "{svg}");
        assert!(svg.contains("a @100: +1.50") && svg.contains("b @100: -3.20"));
        assert!(svg.contains(">-4<") && svg.contains(">4<") && svg.contains(">0<"));
        // Zero is the middle of the plot: 170 + 550 / 2.
        assert!(svg.contains(r##"x1="445.0" y1="40" x2="445.0""##), "{svg}");
        assert!(svg.contains("#009E73") && svg.contains("#D55E00"));
    }
}
