//! The HTML report: one self-contained file.
//!
//! Everything is inline: the stylesheet (with a print section), the SVG charts. There are no
//! scripts, no web fonts and no external references, so the file opens offline, passes any
//! content-security policy that allows inline styles, and prints as it shows. The page
//! declares that policy itself (`default-src 'none'`), so a fetch that ever slipped in would be
//! blocked and logged, which the headless-Chromium test catches. Layout is plain
//! flow with a readable measure on a laptop; wide tables scroll inside their own box.

use std::fmt::Write;

use crate::charts;
use crate::markdown::heading;
use crate::model::{Report, TestView};
use crate::sections;
use crate::stage_tables;
use crate::stages::StagesView;
use crate::svg::esc;
use crate::table::Table;
use crate::tables;

const CSS: &str = r#"
:root { --fg: #1b1f24; --muted: #57606a; --line: #d0d7de; --bg-alt: #f6f8fa; --ok: #1a7f37; --bad: #cf222e; }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1180px; padding: 24px 28px 64px; color: var(--fg); background: #fff;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
h1 { font-size: 1.7em; margin: 0 0 .6em; }
h2 { font-size: 1.35em; margin: 1.8em 0 .6em; padding-bottom: .2em; border-bottom: 1px solid var(--line); }
h3 { font-size: 1.1em; margin: 1.4em 0 .5em; }
h4 { font-size: .95em; margin: 1em 0 .4em; color: var(--muted); }
h5 { font-size: .9em; margin: .8em 0 .3em; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 0 0 1em; }
dl.meta dt { font-weight: 600; } dl.meta dd { margin: 0; }
.scroll { overflow-x: auto; margin: 0 0 1em; }
table { border-collapse: collapse; font-size: .88em; font-variant-numeric: tabular-nums; }
th, td { border: 1px solid var(--line); padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: var(--bg-alt); }
tbody tr:nth-child(even) td { background: #fbfcfd; }
.chart { display: block; width: 100%; max-width: 760px; height: auto; margin: .5em 0 1em; }
.chart .ct { font: 600 13px sans-serif; fill: #1b1f24; }
.chart .xl, .chart .xt { font: 11px sans-serif; fill: #57606a; text-anchor: middle; }
.chart .yl { font: 11px sans-serif; fill: #57606a; text-anchor: end; }
.chart .yt { font: 11px sans-serif; fill: #57606a; text-anchor: middle; }
.chart .lg { font: 11px sans-serif; fill: #1b1f24; }
.chart .grid { stroke: #e5e8eb; stroke-width: 1; }
.chart .tick { stroke: #8c959f; stroke-width: 1; }
.chart .frame { fill: none; stroke: #8c959f; stroke-width: 1; }
.status-ok { color: var(--ok); font-weight: 600; } .status-failed { color: var(--bad); font-weight: 600; }
section.test { border-top: 1px solid var(--line); margin-top: 1.6em; }
nav.toc { background: var(--bg-alt); padding: 8px 14px; border-radius: 6px; font-size: .9em; }
nav.toc ul { margin: .2em 0; padding-left: 1.2em; }
pre { background: var(--bg-alt); padding: 8px; overflow-x: auto; font-size: .8em; }
p.note { color: var(--muted); }
@media print {
  @page { margin: 14mm; }
  body { max-width: none; padding: 0; font-size: 10pt; }
  nav.toc { display: none; }
  .scroll { overflow: visible; }
  table { font-size: 8pt; }
  .chart { max-width: 170mm; break-inside: avoid; }
  section.test { break-inside: avoid-page; }
  h2, h3 { break-after: avoid; }
  a { color: inherit; text-decoration: none; }
}
"#;

fn table(o: &mut String, t: &Table) {
    if t.rows.is_empty() {
        o.push_str("<p class=\"note\">(none)</p>\n");
        return;
    }
    o.push_str("<div class=\"scroll\"><table><thead><tr>");
    for h in &t.header {
        let _ = write!(o, "<th>{}</th>", esc(h));
    }
    o.push_str("</tr></thead><tbody>\n");
    for r in &t.rows {
        o.push_str("<tr>");
        for c in r {
            let _ = write!(o, "<td>{}</td>", esc(c));
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</tbody></table></div>\n");
}

fn pairs(o: &mut String, kv: &[(String, String)]) {
    o.push_str("<dl class=\"meta\">");
    for (k, v) in kv {
        let class = match (k.as_str(), v.as_str()) {
            ("Status", "ok") => " class=\"status-ok\"",
            ("Status", "failed") => " class=\"status-failed\"",
            _ => "",
        };
        let _ = write!(o, "<dt>{}</dt><dd{class}>{}</dd>", esc(k), esc(v));
    }
    o.push_str("</dl>\n");
}

fn stage_stats(o: &mut String, s: &StagesView) {
    o.push_str("<h4>Impairment stages</h4>\n");
    if let Some(scope) = &s.scope {
        let _ = writeln!(o, "<p class=\"note\">Counters of {}.</p>", esc(scope));
    }
    for d in s.directions.iter().filter(|d| !d.stages.is_empty()) {
        let _ = writeln!(o, "<h5>{}</h5>", esc(&d.name));
        table(o, &stage_tables::stage_table(d));
    }
    let fwd = stage_tables::forwarder_table(s);
    if !fwd.rows.is_empty() {
        o.push_str("<h5>Lab forwarder</h5>\n");
        table(o, &fwd);
    }
    if let Some(u) = &s.unknown {
        let _ = writeln!(o, "<h5>Other counters</h5>\n<pre>{}</pre>", esc(u));
    }
}

/// The report as one HTML document.
pub fn render(r: &Report) -> String {
    let mut o = String::with_capacity(64 * 1024 + r.tests.len() * 12 * 1024);
    head(&mut o, r);
    pairs(&mut o, &tables::meta(r));
    contents(&mut o, r);
    lab_setup(&mut o, r);
    summary(&mut o, r);
    o.push_str("<h2 id=\"tests\">Tests</h2>\n");
    for (i, t) in r.tests.iter().enumerate() {
        test_section(&mut o, i, t);
    }
    appendix(&mut o, r);
    o.push_str("</body></html>\n");
    o
}

/// The document's head (its content-security policy, the stylesheet) and the page title.
fn head(o: &mut String, r: &Report) {
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <meta name=\"generator\" content=\"sonde-report\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; img-src data:\">\
         <title>{}</title><style>{CSS}</style></head>\n<body>\n<h1>{}</h1>\n",
        esc(&r.title),
        esc(&r.title)
    );
}

/// The table of contents: summary, tests (with their count) and appendix.
fn contents(o: &mut String, r: &Report) {
    o.push_str("<nav class=\"toc\"><strong>Contents</strong><ul>");
    o.push_str("<li><a href=\"#summary\">Summary</a></li><li><a href=\"#tests\">Tests</a> (");
    let _ = write!(o, "{})</li>", r.tests.len());
    o.push_str("<li><a href=\"#appendix\">Appendix: outcomes</a></li></ul></nav>\n");
}

/// The impairment backends and link settings the run used, each when there are any.
fn lab_setup(o: &mut String, r: &Report) {
    if !r.meta.backends.is_empty() {
        o.push_str("<h3>Impairment backends</h3>\n");
        table(o, &tables::backends(&r.meta.backends));
    }
    if !r.settings.is_empty() {
        o.push_str("<h3>Link settings</h3>\n");
        table(o, &tables::settings(r));
    }
}

/// The summary: the run-wide charts, why some tests have no RTT curve, one table per group.
fn summary(o: &mut String, r: &Report) {
    o.push_str(
        "<h2 id=\"summary\">Summary</h2>\n<p class=\"note\">Figures are means over the \
        successful repetitions of each row. Goodput is what the receivers got; link rates come \
        from the sending and receiving ends' interface counters.</p>\n",
    );
    if let Some(c) = charts::goodput_vs_loss(r) {
        o.push_str(&c.render());
        o.push('\n');
    }
    if let Some(c) = crate::serial_report::speed_against_block(r) {
        o.push_str(&c.render());
        o.push('\n');
    }
    if let Some(c) = charts::rtt_cdf(r) {
        o.push_str(&c.render());
        o.push('\n');
    }
    let no_samples = charts::tests_without_rtt_samples(r);
    if !no_samples.is_empty() {
        let _ = writeln!(
            o,
            "<p class=\"note\">No RTT distribution curve for {}: the latency results hold \
             quantiles only (in the tables), not their round trips, and a curve through a few \
             quantiles would invent the values between them.</p>",
            esc(&no_samples.join(", "))
        );
    }
    for g in &r.groups {
        let _ = writeln!(o, "<h3>{}</h3>", esc(&heading(&g.name, &g.title)));
        table(o, &tables::summary(g));
    }
}

/// One test's section: overview, charts, results, its own sections, then the tables that
/// only some tests have.
fn test_section(o: &mut String, i: usize, t: &TestView) {
    let _ = writeln!(
        o,
        "<section class=\"test\" id=\"test-{i}\"><h3>{}</h3>",
        esc(&t.id)
    );
    pairs(o, &tables::test_overview(t));
    for c in charts::for_test(t) {
        o.push_str(&c.render());
        o.push('\n');
    }
    titled_table(o, "Results", &tables::ends(t));
    for s in sections::for_test(t) {
        let _ = writeln!(o, "<h4>{}</h4>", esc(&s.heading));
        if let Some(n) = &s.note {
            let _ = writeln!(o, "<p class=\"note\">{}</p>", esc(n));
        }
        table(o, &s.table);
    }
    titled_table(o, "CPU", &tables::cpu_table(t));
    titled_table(o, "Interface traffic", &tables::traffic(t));
    if !t.parameters.is_empty() {
        o.push_str("<h4>Parameters</h4>\n");
        table(o, &tables::parameters(t));
    }
    if let Some(s) = &t.stage_stats {
        stage_stats(o, s);
    }
    o.push_str("</section>\n");
}

/// A table under its `h4` heading, both left out when the table has no rows.
fn titled_table(o: &mut String, title: &str, t: &Table) {
    if !t.rows.is_empty() {
        let _ = writeln!(o, "<h4>{title}</h4>");
        table(o, t);
    }
}

/// The appendix: how many tests ran, succeeded and failed, and the failed ones.
fn appendix(o: &mut String, r: &Report) {
    o.push_str("<h2 id=\"appendix\">Appendix: outcomes</h2>\n");
    pairs(
        o,
        &[
            ("Total".into(), r.totals.total.to_string()),
            ("Succeeded".into(), r.totals.succeeded.to_string()),
            ("Failed".into(), r.totals.failed.to_string()),
        ],
    );
    if r.totals.failed > 0 {
        o.push_str("<h3>Failed tests</h3>\n");
        table(o, &tables::failures(r));
    }
}
