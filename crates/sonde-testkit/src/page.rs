//! Reading a rendered HTML report back: a chart by its title, its series, a series' markers
//! and the rows of a headed table. Plain string work on the page `sonde_report` renders, for the
//! report tests of `sonde-report` and of the binary (`tests/it/report_kinds.rs`).

/// The `<svg>` whose title starts with `title`.
pub fn chart<'a>(page: &'a str, title: &str) -> &'a str {
    let at = page
        .find(&format!("<title>{title}"))
        .unwrap_or_else(|| panic!("no chart titled {title:?}"));
    let start = page[..at].rfind("<svg").unwrap();
    let end = at + page[at..].find("</svg>").unwrap();
    &page[start..end]
}

/// A chart's series: (name, style, polylines, markers).
pub fn series(svg: &str) -> Vec<(String, String, usize, usize)> {
    svg.split("<g class=\"series\" ")
        .skip(1)
        .map(|g| {
            let g = &g[..g.find("</g>").unwrap()];
            let attr = |k: &str| {
                let from = g.find(&format!("{k}=\"")).unwrap() + k.len() + 2;
                g[from..from + g[from..].find('"').unwrap()].to_owned()
            };
            (
                attr("data-name"),
                attr("data-style"),
                g.matches("<polyline").count(),
                g.matches("<circle").count(),
            )
        })
        .collect()
}

/// The `(x, y)` plot coordinates of each marker of the series named `name`.
pub fn markers(svg: &str, name: &str) -> Vec<(f64, f64)> {
    let g = svg
        .split("<g class=\"series\" ")
        .find(|g| g.starts_with(&format!("data-name=\"{name}\"")))
        .unwrap_or_else(|| panic!("no series {name:?} in {svg}"));
    let g = &g[..g.find("</g>").unwrap()];
    g.split("<circle ")
        .skip(1)
        .map(|c| {
            let attr = |k: &str| -> f64 {
                let from = c.find(&format!("{k}=\"")).unwrap() + k.len() + 2;
                c[from..from + c[from..].find('"').unwrap()]
                    .parse()
                    .unwrap()
            };
            (attr("cx"), attr("cy"))
        })
        .collect()
}

/// The rows of the HTML table that follows the heading `<h4>{h4}</h4>`, as cells.
pub fn html_rows(page: &str, h4: &str) -> Vec<Vec<String>> {
    let at = page
        .find(&format!("<h4>{h4}</h4>"))
        .unwrap_or_else(|| panic!("no table {h4:?}"));
    let rest = &page[at..];
    let body = &rest[rest.find("<tbody>").unwrap()..rest.find("</tbody>").unwrap()];
    body.split("<tr>")
        .skip(1)
        .map(|r| {
            r.split("<td>")
                .skip(1)
                .map(|c| c[..c.find("</td>").unwrap()].to_owned())
                .collect()
        })
        .collect()
}

/// The second cell of the row whose first cell is `figure` (a figure/value table).
pub fn value<'a>(rows: &'a [Vec<String>], figure: &str) -> &'a str {
    &rows
        .iter()
        .find(|r| r[0] == figure)
        .unwrap_or_else(|| panic!("no {figure} in {rows:?}"))[1]
}
