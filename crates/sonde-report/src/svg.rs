//! A small chart writer producing inline SVG.
//!
//! Why hand-written rather than `plotters`: the report needs one chart type (points, lines
//! and steps, a legend, linear axes with round ticks), the output must be byte-for-byte
//! deterministic and free of fonts or scripts, and a few hundred lines are quicker to build and
//! review than a plotting stack. Everything is drawn in a fixed 640 × H viewBox that scales to
//! the page width; colours are the Okabe-Ito palette (readable by colour-blind readers and in
//! grey print), and lines after the eighth are dashed so series stay distinguishable.
//!
//! A line is drawn only where the x axis is continuous ([`Style`]): measurements at discrete
//! settings (a loss sweep) are markers, never joined, so the chart does not suggest values
//! between settings that were never measured. Each series' group carries its style in a
//! `data-style` attribute, which the tests read back.

use std::fmt::Write;

use crate::fmt;

/// How a series is drawn.
#[derive(Debug, Clone, PartialEq)]
pub enum Style {
    /// Measurements at discrete x values (settings of a sweep): markers only, never joined.
    Markers,
    /// A series over a continuous x (consecutive intervals of one run): joined by a line,
    /// except before the points whose indices are in `breaks` (a gap: the run's intervals do
    /// not touch there). Markers too when there are few points, and always on a point that is
    /// a run of its own.
    Joined { breaks: Vec<usize> },
    /// An empirical distribution function: points are `(x, fraction at or below x)`, drawn as
    /// steps (flat until the next x, then up), which is what a CDF of binned samples is.
    Steps,
    /// A reference level (a mean over the whole test), dashed, without markers.
    Reference,
    /// A histogram: each point is a bin's lower edge and its count, drawn as a bar `width`
    /// wide (in x units) from zero.
    Bars { width: f64 },
}

impl Style {
    /// A joined series without gaps.
    pub fn joined() -> Style {
        Style::Joined { breaks: Vec::new() }
    }

    fn name(&self) -> &'static str {
        match self {
            Style::Markers => "markers",
            Style::Joined { .. } => "joined",
            Style::Steps => "steps",
            Style::Reference => "reference",
            Style::Bars { .. } => "bars",
        }
    }
}

/// One series of a chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub style: Style,
}

impl Line {
    /// The runs of points to join with a line, as screen coordinates (non-finite points are
    /// skipped and also break a run). Markers and references are never split.
    fn runs(&self, at: impl Fn((f64, f64)) -> (f64, f64)) -> Vec<Vec<(f64, f64)>> {
        let breaks: &[usize] = match &self.style {
            Style::Joined { breaks } => breaks,
            _ => &[],
        };
        let mut runs: Vec<Vec<(f64, f64)>> = vec![Vec::new()];
        for (i, &(x, y)) in self.points.iter().enumerate() {
            let finite = x.is_finite() && y.is_finite();
            let last_empty = runs.last().is_none_or(Vec::is_empty);
            if (!finite || breaks.contains(&i)) && !last_empty {
                runs.push(Vec::new());
            }
            if finite {
                if let Some(r) = runs.last_mut() {
                    r.push(at((x, y)));
                }
            }
        }
        runs.retain(|r| !r.is_empty());
        runs
    }
}

/// A line chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    pub title: String,
    pub x_label: String,
    /// Axis label without unit; `y_unit` is appended with its SI prefix.
    pub y_label: String,
    /// Unit of y (`"bit/s"`, `"%"`, `"ms"`); with `si` the values are scaled by a prefix.
    pub y_unit: String,
    pub si: bool,
    /// Fixed y range; otherwise 0 (or the minimum when negative) to a round maximum.
    pub y_range: Option<(f64, f64)>,
    pub lines: Vec<Line>,
}

const W: f64 = 640.0;
const PLOT_H: f64 = 240.0;
const LEFT: f64 = 64.0;
const RIGHT: f64 = 16.0;
/// Width of the plot area.
const PLOT_W: f64 = W - LEFT - RIGHT;
const TOP: f64 = 30.0;
/// Escapes text for XML/HTML content and attributes (the one escape of every page).
pub use sonde_stats::markup::escape as esc;

const LEGEND_ROW: f64 = 18.0;
const COLORS: [&str; 8] = [
    "#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000", "#999933",
];

/// A round step near `range / target` (1, 2 or 5 times a power of ten).
fn nice_step(range: f64, target: f64) -> f64 {
    if range.is_nan() || range <= 0.0 || !range.is_finite() {
        return 1.0;
    }
    let raw = range / target;
    let mag = 10f64.powf(raw.log10().floor());
    let n = raw / mag;
    let m = if n <= 1.0 {
        1.0
    } else if n <= 2.0 {
        2.0
    } else if n <= 5.0 {
        5.0
    } else {
        10.0
    };
    m * mag
}

/// Ticks from `lo` to at least `hi`, and the decimals their labels need.
fn ticks(lo: f64, hi: f64, target: f64) -> (Vec<f64>, usize) {
    let step = nice_step(hi - lo, target);
    let start = (lo / step).floor() * step;
    let mut t = Vec::new();
    let mut i = 0.0;
    loop {
        let v = start + i * step;
        t.push(v);
        if v >= hi - step * 1e-9 || t.len() > 50 {
            break;
        }
        i += 1.0;
    }
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10().floor()) as usize
    };
    (t, decimals)
}

fn bounds(vals: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    vals.filter(|v| v.is_finite())
        .fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
}

/// A chart's axes: their ticks, the y axis' SI scale, and the data-to-screen mapping.
struct Axes {
    x_ticks: Vec<f64>,
    x_dec: usize,
    y_ticks: Vec<f64>,
    y_dec: usize,
    /// The first and last tick of each axis: the plot's data range.
    x: (f64, f64),
    y: (f64, f64),
    /// y values are divided by `div` and shown with `prefix` on their unit.
    div: f64,
    prefix: &'static str,
}

impl Axes {
    /// Screen x of data x.
    fn sx(&self, x: f64) -> f64 {
        let (x0, x1) = self.x;
        LEFT + (x - x0) / (x1 - x0).max(1e-12) * PLOT_W
    }

    /// Screen y of a (scaled) y value.
    fn sy(&self, y: f64) -> f64 {
        let (y0, y1) = self.y;
        TOP + PLOT_H - (y - y0) / (y1 - y0).max(1e-12) * PLOT_H
    }

    /// Screen coordinates of a data point (y divided by the prefix's scale).
    fn at(&self, (x, y): (f64, f64)) -> (f64, f64) {
        (self.sx(x), self.sy(y / self.div))
    }

    /// The grid lines and labels of the y ticks, then the ticks and labels of the x axis.
    fn grid(&self, s: &mut String) {
        for &y in &self.y_ticks {
            let py = self.sy(y);
            let _ = write!(
                s,
                "<line x1=\"{LEFT:.1}\" y1=\"{py:.1}\" x2=\"{:.1}\" y2=\"{py:.1}\" class=\"grid\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\" class=\"yl\">{}</text>",
                W - RIGHT,
                LEFT - 6.0,
                py + 4.0,
                fmt::num(y, self.y_dec)
            );
        }
        for &x in &self.x_ticks {
            let px = self.sx(x);
            let _ = write!(
                s,
                "<line x1=\"{px:.1}\" y1=\"{:.1}\" x2=\"{px:.1}\" y2=\"{:.1}\" class=\"tick\"/>\
                 <text x=\"{px:.1}\" y=\"{:.1}\" class=\"xl\">{}</text>",
                TOP + PLOT_H,
                TOP + PLOT_H + 5.0,
                TOP + PLOT_H + 18.0,
                fmt::num(x, self.x_dec)
            );
        }
    }
}

impl Chart {
    /// True when there is at least one finite point to draw.
    pub fn has_data(&self) -> bool {
        self.lines
            .iter()
            .any(|l| l.points.iter().any(|(x, y)| x.is_finite() && y.is_finite()))
    }

    /// The chart as an `<svg>` element.
    pub fn render(&self) -> String {
        let axes = self.axes();
        let legend_rows = self.legend_layout();
        let rows = legend_rows.iter().map(|r| r.1).fold(0, usize::max);
        let h = TOP + PLOT_H + 44.0 + (rows as f64) * LEGEND_ROW;
        let mut s = String::new();
        let _ = write!(
            s,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" viewBox=\"0 0 {W:.0} {h:.0}\" \
             role=\"img\" aria-label=\"{t}\"><title>{t}</title>\
             <rect x=\"0\" y=\"0\" width=\"{W:.0}\" height=\"{h:.0}\" fill=\"#fff\"/>\
             <text x=\"{LEFT:.0}\" y=\"18\" class=\"ct\">{t}</text>",
            t = esc(&self.title)
        );
        axes.grid(&mut s);
        self.axis_titles(&mut s, &axes);
        for (i, l) in self.lines.iter().enumerate() {
            series(&mut s, i, l, &axes);
        }
        for (i, &(x, row)) in legend_rows.iter().enumerate() {
            legend_entry(&mut s, i, &self.lines[i], x, row);
        }
        s.push_str("</svg>");
        s
    }

    /// The axes that fit every finite point (and each bar's upper edge), y scaled by an SI
    /// prefix when `si`.
    fn axes(&self) -> Axes {
        let pts = || {
            self.lines
                .iter()
                .flat_map(|l| l.points.iter().copied())
                .filter(|(x, y)| x.is_finite() && y.is_finite())
        };
        // A bar reaches its bin's upper edge.
        let bar_ends = self.lines.iter().flat_map(|l| {
            let w = match l.style {
                Style::Bars { width } if width.is_finite() => width,
                _ => 0.0,
            };
            l.points
                .iter()
                .filter(move |_| w > 0.0)
                .map(move |p| p.0 + w)
        });
        let (x_lo, x_hi) = bounds(pts().map(|p| p.0).chain(bar_ends)).unwrap_or((0.0, 1.0));
        let (y_min, y_max) = bounds(pts().map(|p| p.1)).unwrap_or((0.0, 1.0));
        let (div, prefix) = if self.si {
            fmt::prefix_for(y_max.abs().max(y_min.abs()))
        } else {
            (1.0, "")
        };
        let (x_ticks, x_dec) = if x_hi > x_lo {
            ticks(x_lo, x_hi, 6.0)
        } else {
            ticks(x_lo - 1.0, x_lo + 1.0, 4.0)
        };
        let (y_lo, y_hi) = self
            .y_range
            .unwrap_or((y_min.min(0.0) / div, (y_max / div).max(1e-9)));
        let (y_ticks, y_dec) = ticks(y_lo, y_hi, 5.0);
        Axes {
            x: (x_ticks[0], x_ticks[x_ticks.len() - 1]),
            y: (y_ticks[0], y_ticks[y_ticks.len() - 1]),
            x_ticks,
            x_dec,
            y_ticks,
            y_dec,
            div,
            prefix,
        }
    }

    /// The plot's frame and the titles of both axes (y with its prefixed unit).
    fn axis_titles(&self, s: &mut String, axes: &Axes) {
        let _ = write!(
            s,
            "<rect x=\"{LEFT:.1}\" y=\"{TOP:.1}\" width=\"{PLOT_W:.1}\" height=\"{PLOT_H:.1}\" class=\"frame\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" class=\"xt\">{}</text>\
             <text transform=\"translate(14 {:.1}) rotate(-90)\" class=\"yt\">{}</text>",
            LEFT + PLOT_W / 2.0,
            TOP + PLOT_H + 34.0,
            esc(&self.x_label),
            TOP + PLOT_H / 2.0,
            esc(&if self.y_unit.is_empty() && axes.prefix.is_empty() {
                self.y_label.clone()
            } else {
                format!("{} ({}{})", self.y_label, axes.prefix, self.y_unit)
            }),
        );
    }

    /// For each line, its legend x and row (1-based), flowing left to right.
    fn legend_layout(&self) -> Vec<(f64, usize)> {
        let mut out = Vec::new();
        let (mut x, mut row) = (LEFT, 1);
        for l in &self.lines {
            // ~6.5 px per character at 11 px: a fixed estimate keeps the layout deterministic.
            let w = 30.0 + 6.5 * l.name.chars().count() as f64;
            if x + w > W - RIGHT && x > LEFT {
                x = LEFT;
                row += 1;
            }
            out.push((x, row));
            x += w;
        }
        out
    }
}

/// Line `i` of a chart as a `<g>` group: its bars or polylines, then its markers.
fn series(s: &mut String, i: usize, l: &Line, axes: &Axes) {
    let color = COLORS[i % COLORS.len()];
    let dashed = l.style == Style::Reference || i >= COLORS.len();
    let runs = l.runs(|p| axes.at(p));
    let n: usize = runs.iter().map(Vec::len).sum();
    let _ = write!(
        s,
        "<g class=\"series\" data-name=\"{}\" data-style=\"{}\">",
        esc(&l.name),
        l.style.name()
    );
    if let Style::Bars { width } = l.style {
        bars(
            s,
            color,
            l,
            width,
            |p| axes.at(p),
            axes.sy(axes.y.0.max(0.0)),
        );
    } else if l.style != Style::Markers {
        for run in runs.iter().filter(|r| r.len() > 1) {
            polyline(s, color, dashed, &l.style, run);
        }
    }
    for run in &runs {
        let markers = match l.style {
            Style::Markers => true,
            Style::Joined { .. } => n <= 40 || run.len() == 1,
            Style::Steps | Style::Reference | Style::Bars { .. } => false,
        };
        if markers {
            for (x, y) in run {
                let _ = write!(
                    s,
                    "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"3\" fill=\"{color}\"/>"
                );
            }
        }
    }
    s.push_str("</g>");
}

/// The legend entry of line `i` at legend x `x` and row `row` (1-based): its swatch (a bar, a
/// marker or a line segment) and its name.
fn legend_entry(s: &mut String, i: usize, l: &Line, x: f64, row: usize) {
    let color = COLORS[i % COLORS.len()];
    let dash = if l.style == Style::Reference || i >= COLORS.len() {
        " stroke-dasharray=\"6 4\""
    } else {
        ""
    };
    let y = TOP + PLOT_H + 50.0 + (row as f64 - 1.0) * LEGEND_ROW;
    if let Style::Bars { .. } = l.style {
        let _ = write!(
            s,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"12\" height=\"8\" fill=\"{color}\" \
             fill-opacity=\"0.6\"/>",
            x + 3.0,
            y - 4.0
        );
    } else if l.style == Style::Markers {
        let _ = write!(
            s,
            "<circle cx=\"{:.1}\" cy=\"{y:.1}\" r=\"3\" fill=\"{color}\"/>",
            x + 9.0
        );
    } else {
        let _ = write!(
            s,
            "<line x1=\"{x:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" \
             stroke=\"{color}\" stroke-width=\"2\"{dash}/>",
            x + 18.0,
        );
    }
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" class=\"lg\">{}</text>",
        x + 22.0,
        y + 4.0,
        esc(&l.name)
    );
}

/// The bars of a histogram line: one rectangle per finite point, from the zero line (`base`,
/// screen y) to the count, `width` x units wide.
fn bars(
    s: &mut String,
    color: &str,
    l: &Line,
    width: f64,
    at: impl Fn((f64, f64)) -> (f64, f64),
    base: f64,
) {
    for &(x, y) in l
        .points
        .iter()
        .filter(|(x, y)| x.is_finite() && y.is_finite())
    {
        let (x0, top) = at((x, y));
        let (x1, _) = at((x + width, y));
        let _ = write!(
            s,
            "<rect x=\"{x0:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{color}\" \
             fill-opacity=\"0.6\" stroke=\"{color}\"/>",
            top.min(base),
            (x1 - x0).max(0.0),
            (base - top).abs()
        );
    }
}

/// One polyline through `run` (screen coordinates); steps go flat, then up.
fn polyline(s: &mut String, color: &str, dashed: bool, style: &Style, run: &[(f64, f64)]) {
    let _ = write!(
        s,
        "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"{} points=\"",
        if dashed {
            " stroke-dasharray=\"6 4\""
        } else {
            ""
        }
    );
    for (j, &(x, y)) in run.iter().enumerate() {
        if j > 0 && *style == Style::Steps {
            let _ = write!(s, " {x:.1},{:.1}", run[j - 1].1);
        }
        let _ = write!(s, "{}{x:.1},{y:.1}", if j == 0 { "" } else { " " });
    }
    s.push_str("\"/>");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chart(lines: Vec<Line>) -> Chart {
        Chart {
            title: "T <&>".into(),
            x_label: "time (s)".into(),
            y_label: "Throughput".into(),
            y_unit: "bit/s".into(),
            si: true,
            y_range: None,
            lines,
        }
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(nice_step(10.0, 5.0), 2.0);
        assert_eq!(nice_step(0.9, 5.0), 0.2);
        let (t, d) = ticks(0.0, 94.3, 5.0);
        assert_eq!(t, vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
        assert_eq!(d, 0);
        let (t, d) = ticks(0.0, 1.0, 5.0);
        assert_eq!(t.len(), 6);
        assert_eq!(d, 1);
    }

    #[test]
    fn renders_lines_legend_and_escapes() {
        let c = chart(vec![
            Line {
                name: "sent".into(),
                points: vec![(1.0, 9.0e7), (2.0, 9.4e7), (3.0, f64::NAN)],
                style: Style::joined(),
            },
            Line {
                name: "received".into(),
                points: vec![(1.0, 8.0e7), (2.0, 9.0e7)],
                style: Style::Reference,
            },
        ]);
        assert!(c.has_data());
        let s = c.render();
        assert!(s.starts_with("<svg"));
        assert!(s.ends_with("</svg>"));
        assert_eq!(s.matches("<polyline").count(), 2);
        assert!(s.contains("T &lt;&amp;&gt;"));
        assert!(s.contains("Throughput (Mbit/s)"));
        assert!(!s.contains("NaN"));
        assert_eq!(s, c.render());
    }

    #[test]
    fn degenerate_data_still_renders() {
        let one = chart(vec![Line {
            name: "x".into(),
            points: vec![(5.0, 0.0)],
            style: Style::joined(),
        }]);
        let s = one.render();
        assert!(s.contains("<circle"));
        assert!(!s.contains("NaN") && !s.contains("inf"));
        assert!(!chart(vec![]).has_data());
    }

    #[test]
    fn markers_are_never_joined() {
        let c = chart(vec![Line {
            name: "sweep".into(),
            points: vec![(0.0, 9.0e7), (1.0, 8.0e7), (5.0, 3.0e7)],
            style: Style::Markers,
        }]);
        let s = c.render();
        assert!(!s.contains("<polyline"), "{s}");
        assert!(s.contains("data-style=\"markers\""));
        // Three markers in the plot, one in the legend.
        assert_eq!(s.matches("<circle").count(), 4);
    }

    #[test]
    fn a_gap_in_the_intervals_breaks_the_line() {
        let c = chart(vec![Line {
            name: "intervals".into(),
            points: vec![(0.5, 1.0), (1.5, 2.0), (4.5, 2.0), (5.5, 1.0), (8.5, 1.0)],
            style: Style::Joined { breaks: vec![2, 4] },
        }]);
        let s = c.render();
        // Two joined runs of two points; the lone last point is a marker of its own.
        assert_eq!(s.matches("<polyline").count(), 2, "{s}");
        assert_eq!(s.matches("<circle").count(), 5);
    }

    #[test]
    fn steps_go_flat_then_up() {
        let mut c = chart(vec![Line {
            name: "cdf".into(),
            points: vec![(1.0, 0.5), (2.0, 1.0)],
            style: Style::Steps,
        }]);
        c.si = false;
        c.y_range = Some((0.0, 1.0));
        let s = c.render();
        let pts = s
            .split("points=\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .unwrap();
        // Three vertices: (1, 0.5), (2, 0.5), (2, 1): the flat part keeps the lower y.
        let v: Vec<&str> = pts.split(' ').collect();
        assert_eq!(v.len(), 3, "{pts}");
        assert_eq!(v[0].split(',').nth(1), v[1].split(',').nth(1));
        assert_eq!(v[1].split(',').next(), v[2].split(',').next());
        assert!(!s.contains("<circle"));
    }
}
