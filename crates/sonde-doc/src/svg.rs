//! A small line-chart writer producing inline SVG.
//!
//! Why hand-written rather than `plotters`: the report needs one chart type (lines with
//! markers, a legend, linear axes with round ticks), the output must be byte-for-byte
//! deterministic and free of fonts or scripts, and a few hundred lines are quicker to build and
//! review than a plotting stack. Everything is drawn in a fixed 640 × H viewBox that scales to
//! the page width; colours are the Okabe-Ito palette (readable by colour-blind readers and in
//! grey print), and lines after the eighth are dashed so series stay distinguishable.

use std::fmt::Write;

use crate::fmt;

/// One line of a chart.
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub name: String,
    pub points: Vec<(f64, f64)>,
    pub dashed: bool,
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
const TOP: f64 = 30.0;
const LEGEND_ROW: f64 = 18.0;
const COLORS: [&str; 8] = [
    "#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#000000", "#999933",
];

/// Escapes text for XML/HTML content and attributes.
pub fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

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

impl Chart {
    /// True when there is at least one finite point to draw.
    pub fn has_data(&self) -> bool {
        self.lines
            .iter()
            .any(|l| l.points.iter().any(|(x, y)| x.is_finite() && y.is_finite()))
    }

    /// The chart as an `<svg>` element.
    pub fn render(&self) -> String {
        let pts = || {
            self.lines
                .iter()
                .flat_map(|l| l.points.iter().copied())
                .filter(|(x, y)| x.is_finite() && y.is_finite())
        };
        let (x_lo, x_hi) = bounds(pts().map(|p| p.0)).unwrap_or((0.0, 1.0));
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
        let (x0, x1) = (x_ticks[0], x_ticks[x_ticks.len() - 1]);
        let (y0, y1) = (y_ticks[0], y_ticks[y_ticks.len() - 1]);
        let pw = W - LEFT - RIGHT;
        let sx = |x: f64| LEFT + (x - x0) / (x1 - x0).max(1e-12) * pw;
        let sy = |y: f64| TOP + PLOT_H - (y - y0) / (y1 - y0).max(1e-12) * PLOT_H;

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
        for &y in &y_ticks {
            let py = sy(y);
            let _ = write!(
                s,
                "<line x1=\"{LEFT:.1}\" y1=\"{py:.1}\" x2=\"{:.1}\" y2=\"{py:.1}\" class=\"grid\"/>\
                 <text x=\"{:.1}\" y=\"{:.1}\" class=\"yl\">{}</text>",
                W - RIGHT,
                LEFT - 6.0,
                py + 4.0,
                fmt::num(y, y_dec)
            );
        }
        for &x in &x_ticks {
            let px = sx(x);
            let _ = write!(
                s,
                "<line x1=\"{px:.1}\" y1=\"{:.1}\" x2=\"{px:.1}\" y2=\"{:.1}\" class=\"tick\"/>\
                 <text x=\"{px:.1}\" y=\"{:.1}\" class=\"xl\">{}</text>",
                TOP + PLOT_H,
                TOP + PLOT_H + 5.0,
                TOP + PLOT_H + 18.0,
                fmt::num(x, x_dec)
            );
        }
        let _ = write!(
            s,
            "<rect x=\"{LEFT:.1}\" y=\"{TOP:.1}\" width=\"{pw:.1}\" height=\"{PLOT_H:.1}\" class=\"frame\"/>\
             <text x=\"{:.1}\" y=\"{:.1}\" class=\"xt\">{}</text>\
             <text transform=\"translate(14 {:.1}) rotate(-90)\" class=\"yt\">{}</text>",
            LEFT + pw / 2.0,
            TOP + PLOT_H + 34.0,
            esc(&self.x_label),
            TOP + PLOT_H / 2.0,
            esc(&if self.y_unit.is_empty() && prefix.is_empty() {
                self.y_label.clone()
            } else {
                format!("{} ({prefix}{})", self.y_label, self.y_unit)
            }),
        );
        for (i, l) in self.lines.iter().enumerate() {
            let color = COLORS[i % COLORS.len()];
            let dashed = l.dashed || i >= COLORS.len();
            let p: Vec<(f64, f64)> = l
                .points
                .iter()
                .copied()
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .map(|(x, y)| (sx(x), sy(y / div)))
                .collect();
            let _ = write!(s, "<g class=\"series\" data-name=\"{}\">", esc(&l.name));
            if p.len() > 1 {
                let _ = write!(
                    s,
                    "<polyline fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"{} points=\"",
                    if dashed {
                        " stroke-dasharray=\"6 4\""
                    } else {
                        ""
                    }
                );
                for (j, (x, y)) in p.iter().enumerate() {
                    let _ = write!(s, "{}{x:.1},{y:.1}", if j == 0 { "" } else { " " });
                }
                s.push_str("\"/>");
            }
            if p.len() <= 40 {
                for (x, y) in &p {
                    let _ = write!(
                        s,
                        "<circle cx=\"{x:.1}\" cy=\"{y:.1}\" r=\"3\" fill=\"{color}\"/>"
                    );
                }
            }
            s.push_str("</g>");
        }
        let ly = TOP + PLOT_H + 50.0;
        for (i, (x, row)) in legend_rows.iter().enumerate() {
            let l = &self.lines[i];
            let color = COLORS[i % COLORS.len()];
            let dash = if l.dashed || i >= COLORS.len() {
                " stroke-dasharray=\"6 4\""
            } else {
                ""
            };
            let y = ly + (*row as f64 - 1.0) * LEGEND_ROW;
            let _ = write!(
                s,
                "<line x1=\"{x:.1}\" y1=\"{y:.1}\" x2=\"{:.1}\" y2=\"{y:.1}\" stroke=\"{color}\" \
                 stroke-width=\"2\"{dash}/><text x=\"{:.1}\" y=\"{:.1}\" class=\"lg\">{}</text>",
                x + 18.0,
                x + 22.0,
                y + 4.0,
                esc(&l.name)
            );
        }
        s.push_str("</svg>");
        s
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
                dashed: false,
            },
            Line {
                name: "received".into(),
                points: vec![(1.0, 8.0e7), (2.0, 9.0e7)],
                dashed: true,
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
            dashed: false,
        }]);
        let s = one.render();
        assert!(s.contains("<circle"));
        assert!(!s.contains("NaN") && !s.contains("inf"));
        assert!(!chart(vec![]).has_data());
    }
}
