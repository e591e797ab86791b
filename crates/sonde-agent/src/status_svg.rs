//! A sparkline as inline SVG: a peer's recent headline figures (latency p50) at a glance,
//! drawn on the server so the status page needs no script. Time runs left to right (by when
//! each run ended, so a gap in the runs shows), the figure's own range bottom to top; a failed
//! run is a red mark on the baseline.

use crate::status::Point;
use std::fmt::Write;

/// The drawing's size in user units (the page scales it).
pub const WIDTH: f64 = 120.0;
pub const HEIGHT: f64 = 24.0;
/// Room kept at the edges so a stroke or mark is not cut.
const PAD: f64 = 2.0;

/// The sparkline of `points` (oldest first), titled `title` (already escaped for HTML).
pub fn sparkline(points: &[Point], title: &str) -> String {
    let mut out = format!(
        "<svg class=\"spark\" viewBox=\"0 0 {WIDTH} {HEIGHT}\" width=\"{WIDTH}\" height=\"{HEIGHT}\" role=\"img\"><title>{title}</title>"
    );
    let (t0, t1) = range(points.iter().map(|p| p.t));
    let (v0, v1) = range(points.iter().filter_map(|p| p.v));
    let x = |t: f64| scale(t, t0, t1, PAD, WIDTH - PAD);
    let y = |v: f64| scale(v, v0, v1, HEIGHT - PAD, PAD);
    let line: Vec<String> = points
        .iter()
        .filter_map(|p| p.v.map(|v| format!("{:.1},{:.1}", x(p.t), y(v))))
        .collect();
    match line.len() {
        0 => {}
        1 => {
            let (cx, cy) = line[0].split_once(',').unwrap_or(("0", "0"));
            let _ = write!(
                out,
                "<circle class=\"pt\" cx=\"{cx}\" cy=\"{cy}\" r=\"1.5\"/>"
            );
        }
        _ => {
            let _ = write!(
                out,
                "<polyline class=\"line\" fill=\"none\" points=\"{}\"/>",
                line.join(" ")
            );
        }
    }
    for p in points.iter().filter(|p| p.v.is_none()) {
        let _ = write!(
            out,
            "<rect class=\"fail\" x=\"{:.1}\" y=\"{:.1}\" width=\"2\" height=\"{PAD}\"/>",
            x(p.t) - 1.0,
            HEIGHT - PAD
        );
    }
    out.push_str("</svg>");
    out
}

/// The smallest and largest of `values` (0, 0 when there are none).
fn range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    values
        .filter(|v| v.is_finite())
        .fold(None, |acc: Option<(f64, f64)>, v| {
            Some(acc.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v))))
        })
        .unwrap_or((0.0, 0.0))
}

/// `v` from `lo..hi` onto `a..b`; the middle when the range is empty.
fn scale(v: f64, lo: f64, hi: f64, a: f64, b: f64) -> f64 {
    if hi - lo <= f64::EPSILON || !v.is_finite() {
        return (a + b) / 2.0;
    }
    a + (v - lo) / (hi - lo) * (b - a)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every x,y pair of the drawing's `points="..."` and circles.
    fn coords(svg: &str) -> Vec<(f64, f64)> {
        let mut out = Vec::new();
        if let Some(p) = svg.split("points=\"").nth(1) {
            for pair in p.split('"').next().unwrap().split(' ') {
                let (x, y) = pair.split_once(',').unwrap();
                out.push((x.parse().unwrap(), y.parse().unwrap()));
            }
        }
        if let Some(c) = svg.split("cx=\"").nth(1) {
            let x = c.split('"').next().unwrap().parse().unwrap();
            let y = svg
                .split("cy=\"")
                .nth(1)
                .unwrap()
                .split('"')
                .next()
                .unwrap();
            out.push((x, y.parse().unwrap()));
        }
        out
    }

    fn pt(t: f64, v: Option<f64>) -> Point {
        Point { t, v }
    }

    #[test]
    fn points_scale_into_the_view_box() {
        let pts: Vec<Point> = (0..30)
            .map(|i| {
                pt(
                    1e9 + f64::from(i) * 10.0,
                    Some(0.05 + f64::from(i % 7) * 100.0),
                )
            })
            .collect();
        let svg = sparkline(&pts, "b");
        let c = coords(&svg);
        assert_eq!(c.len(), 30);
        for (x, y) in &c {
            assert!((PAD..=WIDTH - PAD).contains(x), "{x} in {svg}");
            assert!((PAD..=HEIGHT - PAD).contains(y), "{y} in {svg}");
        }
        // Oldest at the left edge, newest at the right; the largest figure at the top.
        assert_eq!(c[0].0, PAD);
        assert_eq!(c[29].0, WIDTH - PAD);
        assert_eq!(c[6].1, PAD);
        assert_eq!(c[0].1, HEIGHT - PAD);
    }

    #[test]
    fn a_single_point_none_and_failures() {
        let one = sparkline(&[pt(5.0, Some(3.0))], "x");
        assert_eq!(coords(&one), [(WIDTH / 2.0, HEIGHT / 2.0)]);
        let none = sparkline(&[], "x");
        assert!(
            none.starts_with("<svg") && none.ends_with("</svg>"),
            "{none}"
        );
        assert!(coords(&none).is_empty());
        let failed = sparkline(&[pt(1.0, None), pt(2.0, Some(1.0)), pt(3.0, None)], "x");
        assert_eq!(failed.matches("class=\"fail\"").count(), 2, "{failed}");
        assert_eq!(failed.matches("<circle").count(), 1, "{failed}");
    }
}
