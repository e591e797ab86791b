//! The Markdown report (GitHub-flavoured tables). Charts are HTML-only: the Markdown says so
//! once, and keeps every figure the charts are drawn from in its tables.

use std::fmt::Write;

use crate::model::Report;
use crate::sections;
use crate::stage_tables;
use crate::stages::StagesView;
use crate::table::Table;
use crate::tables;

/// Escapes a table cell: pipes, and line breaks folded to spaces.
fn cell(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('|', "\\|")
        .replace(['\n', '\r'], " ")
}

fn table(out: &mut String, t: &Table) {
    if t.rows.is_empty() {
        out.push_str("(none)\n\n");
        return;
    }
    let line = |cells: &[String]| {
        let c: Vec<String> = cells.iter().map(|s| cell(s)).collect();
        format!("| {} |\n", c.join(" | "))
    };
    out.push_str(&line(&t.header));
    let sep: Vec<String> = t.header.iter().map(|_| "---".to_owned()).collect();
    let _ = writeln!(out, "|{}|", sep.join("|"));
    for r in &t.rows {
        out.push_str(&line(r));
    }
    out.push('\n');
}

fn pairs(out: &mut String, kv: &[(String, String)]) {
    for (k, v) in kv {
        let _ = writeln!(out, "- **{}**: {}", k, v.replace('\n', " "));
    }
    out.push('\n');
}

/// The report as Markdown.
pub fn render(r: &Report) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "# {}\n", r.title);
    pairs(&mut o, &tables::meta(r));
    if !r.meta.backends.is_empty() {
        o.push_str("### Impairment backends\n\n");
        table(&mut o, &tables::backends(&r.meta.backends));
    }
    if !r.settings.is_empty() {
        o.push_str("### Link settings\n\n");
        table(&mut o, &tables::settings(r));
    }
    o.push_str("## Summary\n\n");
    o.push_str(
        "Figures are means over the successful repetitions of each row. Goodput is what the \
         receivers got; link rates come from the sending and receiving ends' interface \
         counters. The charts are in the HTML report.\n\n",
    );
    for g in &r.groups {
        let _ = writeln!(o, "### {}\n", heading(&g.name, &g.title));
        table(&mut o, &tables::summary(g));
    }
    o.push_str("## Tests\n\n");
    for t in &r.tests {
        let _ = writeln!(o, "### {}\n", t.id);
        pairs(&mut o, &tables::test_overview(t));
        if !t.parameters.is_empty() {
            o.push_str("**Parameters**\n\n");
            table(&mut o, &tables::parameters(t));
        }
        let ends = tables::ends(t);
        if !ends.rows.is_empty() {
            o.push_str("**Results**\n\n");
            table(&mut o, &ends);
        }
        for s in sections::for_test(t) {
            let _ = writeln!(o, "**{}**\n", s.heading);
            if let Some(n) = &s.note {
                let _ = writeln!(o, "{n}\n");
            }
            table(&mut o, &s.table);
        }
        let cpu = tables::cpu_table(t);
        if !cpu.rows.is_empty() {
            o.push_str("**CPU**\n\n");
            table(&mut o, &cpu);
        }
        let traffic = tables::traffic(t);
        if !traffic.rows.is_empty() {
            o.push_str("**Interface traffic**\n\n");
            table(&mut o, &traffic);
        }
        if let Some(s) = &t.stage_stats {
            stage_stats(&mut o, s);
        }
    }
    o.push_str("## Appendix: outcomes\n\n");
    let _ = writeln!(
        o,
        "- **Total**: {}\n- **Succeeded**: {}\n- **Failed**: {}\n",
        r.totals.total, r.totals.succeeded, r.totals.failed
    );
    if r.totals.failed > 0 {
        o.push_str("### Failed tests\n\n");
        table(&mut o, &tables::failures(r));
    }
    o
}

fn stage_stats(o: &mut String, s: &StagesView) {
    o.push_str("**Impairment stages**");
    if let Some(scope) = &s.scope {
        let _ = write!(o, " ({scope})");
    }
    o.push_str("\n\n");
    for d in s.directions.iter().filter(|d| !d.stages.is_empty()) {
        let _ = writeln!(o, "*{}*\n", d.name);
        table(o, &stage_tables::stage_table(d));
    }
    let fwd = stage_tables::forwarder_table(s);
    if !fwd.rows.is_empty() {
        o.push_str("**Lab forwarder**\n\n");
        table(o, &fwd);
    }
    if let Some(u) = &s.unknown {
        let _ = writeln!(o, "Other counters:\n\n```json\n{u}\n```\n");
    }
}

/// `"tcp-cubic (TCP, cubic)"`, or just the title when it is the name.
pub fn heading(name: &str, title: &str) -> String {
    if name == title {
        name.to_owned()
    } else {
        format!("{name} ({title})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_are_escaped() {
        assert_eq!(cell("a|b\nc"), "a\\|b c");
        let mut s = String::new();
        table(
            &mut s,
            &Table {
                header: vec!["h".into()],
                rows: vec![],
            },
        );
        assert_eq!(s, "(none)\n\n");
    }
}
