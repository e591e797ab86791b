//! `sonde report`: a lab results database or sonde JSON results in, `report.md` and
//! `report.html` (or JSON) out.

use super::exit;
use sonde_doc::{write_report, Format, Inputs};
use std::path::{Path, PathBuf};

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

/// Runs `sonde report RESULTS... -o DIR [--format F]`.
pub fn run(results: &[PathBuf], out: &Path, format: &[String]) -> i32 {
    let formats = match formats(format) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("sonde: usage error - {e}");
            return exit::USAGE;
        }
    };
    let inputs = match Inputs::from_paths(results) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("sonde: error - {e}");
            return exit::FAILED;
        }
    };
    write(&inputs, out, &formats)
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
