//! `sonde report`: a lab results database or sonde JSON results in, `report.md` and
//! `report.html` (or JSON) out; `--run ID` picks a run of the database (the newest otherwise),
//! `--list-runs` lists them.

use super::exit;
use crate::flags::ReportArgs;
use crate::output::outln;
use sonde_report::{fmt, list_runs, write_report, Format, Inputs, RunId, RunLine};
use std::path::Path;

/// Parses `--format` values: `md`, `html`, `json`, comma-separated or repeated.
///
/// # Errors
/// A usage message naming the bad value.
pub fn formats(values: &[String]) -> Result<Vec<Format>, String> {
    if values.is_empty() {
        return Ok(vec![Format::Markdown, Format::Html]);
    }
    let mut out = Vec::new();
    for v in values.iter().flat_map(|v| v.split(',')) {
        let f = Format::parse(v.trim())
            .ok_or_else(|| format!("unknown report format \"{v}\": expected md, html or json"))?;
        if !out.contains(&f) {
            out.push(f);
        }
    }
    Ok(out)
}

/// Writes the report of `inputs` into `dir`, printing each path; exit code.
pub fn write(inputs: &Inputs, dir: &Path, formats: &[Format]) -> i32 {
    match write_report(inputs, dir, formats) {
        Ok(paths) => {
            for p in paths {
                crate::output::outln!("report written: {}", p.display());
            }
            exit::OK
        }
        Err(e) => {
            eprintln!("sonde: error - {e}");
            exit::FAILED
        }
    }
}

/// Runs `sonde report RESULTS... -o DIR [--format F] [--run ID | --list-runs]`.
pub fn run(a: &ReportArgs) -> i32 {
    if a.list_runs {
        return list(&a.results);
    }
    let formats = match formats(&a.format) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("sonde: usage error - {e}");
            return exit::USAGE;
        }
    };
    let inputs = match Inputs::from_paths_for_run(&a.results, a.run.map(RunId)) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("sonde: error - {e}");
            return exit::FAILED;
        }
    };
    if let Inputs::Run {
        path,
        run,
        all_runs,
        ..
    } = &inputs
    {
        if a.run.is_none() && all_runs.len() > 1 {
            eprintln!(
                "sonde: note - {path} holds {} runs; this report is of run {}, the newest \
                 (--run ID chooses another, --list-runs lists them)",
                all_runs.len(),
                run.run.id
            );
        }
    }
    write(&inputs, &a.out, &formats)
}

/// `--list-runs`: one line per run of the one database named; exit code.
fn list(results: &[std::path::PathBuf]) -> i32 {
    let [path] = results else {
        eprintln!("sonde: usage error - --list-runs takes one results database (or its directory)");
        return exit::USAGE;
    };
    match list_runs(path) {
        Ok((db, runs)) => {
            outln!("{}", runs_table(&db, &runs));
            exit::OK
        }
        Err(e) => {
            eprintln!("sonde: error - {e}");
            exit::FAILED
        }
    }
}

/// The `--list-runs` listing: a heading line, then an aligned table, newest last.
fn runs_table(db: &Path, runs: &[RunLine]) -> String {
    let mut rows: Vec<[String; 6]> = vec![[
        "run".into(),
        "scenario".into(),
        "status".into(),
        "started".into(),
        "tests".into(),
        "failed".into(),
    ]];
    for r in runs {
        rows.push([
            r.id.to_string(),
            r.scenario.clone(),
            r.status.clone(),
            fmt::date(r.started_unix),
            r.tests.to_string(),
            r.failed.to_string(),
        ]);
    }
    let mut widths = [0usize; 6];
    for row in &rows {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let newest = runs.last().map_or_else(String::new, |r| {
        format!("; `sonde report` takes the newest, run {}", r.id)
    });
    let mut out = format!("{}: {} run(s){newest}\n", db.display(), runs.len());
    for row in &rows {
        let cells: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(c, w)| format!("{c:<w$}"))
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out.pop();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_lists() {
        assert_eq!(formats(&[]).unwrap(), vec![Format::Markdown, Format::Html]);
        assert_eq!(
            formats(&["html,md".into(), "md".into()]).unwrap(),
            vec![Format::Html, Format::Markdown]
        );
        assert!(formats(&["pdf".into()])
            .unwrap_err()
            .contains("md, html or json"));
    }
}
