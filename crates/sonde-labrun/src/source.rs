//! Where a scenario comes from: a built-in name or a TOML file.
//!
//! `sonde lab run NAME|FILE` takes either; a built-in name wins over a file of the same name in
//! the working directory only when no such file exists, so `./quick` still means the file.

use std::path::Path;

use sonde_scenario::{builtin_text, Scenario, BUILTIN_NAMES};

use crate::error::RunError;

/// A scenario and the text it was read from (stored verbatim with the run).
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The parsed, validated scenario.
    pub scenario: Scenario,
    /// Its TOML text.
    pub toml: String,
    /// `built-in NAME` or the file's path, for messages.
    pub origin: String,
}

/// Loads `name_or_file`: a path to an existing file, else a built-in scenario's name.
///
/// # Errors
/// [`RunError::Io`] when the file cannot be read, [`RunError::Scenario`] when it is not a
/// valid scenario, [`RunError::UnknownScenario`] when it is neither a file nor a built-in.
pub fn load(name_or_file: &str) -> Result<Loaded, RunError> {
    let path = Path::new(name_or_file);
    let (toml, origin) = if path.is_file() {
        let text = std::fs::read_to_string(path).map_err(|source| RunError::Io {
            what: format!("reading scenario file {name_or_file}"),
            source,
        })?;
        (text, name_or_file.to_owned())
    } else if let Some(text) = builtin_text(name_or_file) {
        (text.to_owned(), format!("built-in {name_or_file}"))
    } else {
        return Err(RunError::UnknownScenario {
            name: name_or_file.to_owned(),
            builtins: BUILTIN_NAMES.join(", "),
        });
    };
    let scenario = Scenario::from_toml(&toml).map_err(|e| RunError::Scenario {
        origin: origin.clone(),
        reason: e.to_string(),
    })?;
    Ok(Loaded {
        scenario,
        toml,
        origin,
    })
}

/// Each built-in scenario's name and one-line description.
pub fn builtins() -> Vec<(&'static str, String)> {
    BUILTIN_NAMES
        .iter()
        .map(|n| {
            let d = sonde_scenario::builtin(n)
                .map(|s| s.description)
                .unwrap_or_default();
            (*n, d)
        })
        .collect()
}

/// Rewrites every sonde test's `-t SECS` to `secs` (and adds it where a test names none),
/// marking the text so the stored scenario says it was shortened. For `sonde demo`, which
/// runs the `quick` scenario in well under its usual time.
pub fn with_test_duration(mut loaded: Loaded, secs: f64) -> Loaded {
    let value = format!("{secs}");
    for t in &mut loaded.scenario.tests {
        let Some(args) = t.sonde.as_mut() else {
            continue;
        };
        let mut i = 0;
        let mut found = false;
        while i < args.len() {
            if args[i] == "-t" || args[i] == "--time" {
                if let Some(v) = args.get_mut(i + 1) {
                    v.clone_from(&value);
                    found = true;
                }
                i += 1;
            }
            i += 1;
        }
        if !found {
            args.extend(["-t".to_owned(), value.clone()]);
        }
    }
    loaded.toml = format!(
        "# every sonde test's duration set to {secs} s for this run\n{}",
        loaded.toml
    );
    loaded
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_builtins_and_rejects_unknown() {
        let q = load("quick").expect("quick is built in");
        assert_eq!(q.scenario.name, "quick");
        assert!(matches!(
            load("no-such-scenario"),
            Err(RunError::UnknownScenario { .. })
        ));
        assert_eq!(builtins().len(), BUILTIN_NAMES.len());
        assert!(builtins().iter().all(|(_, d)| !d.is_empty()));
    }

    #[test]
    fn shortens_tests() {
        let q = with_test_duration(load("quick").expect("quick"), 1.5);
        for t in &q.scenario.tests {
            let args = t.sonde.clone().unwrap_or_default();
            assert_eq!(crate::args::duration_secs(&args), Some(1.5), "{args:?}");
        }
        assert!(q.toml.starts_with("# every sonde test"));
    }
}
