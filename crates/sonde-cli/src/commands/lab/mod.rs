//! `sonde lab run|clean|list|show`: flags in, [`sonde_labrun`] does the work, the progress
//! display and the report come out here, and the exit code is picked here.
//!
//! Exit codes: 0 when every test of the matrix is recorded and succeeded, 1 when any failed,
//! the run was interrupted (Ctrl-C or SIGTERM at any phase, the report included) or could not
//! run (not root, a lab that cannot be built), 2 for an unknown scenario or settings name or a
//! scenario file that does not parse or validate.

mod mesh;
mod progress;

use super::exit;
use crate::flags::{LabCommand, LabRunArgs};
use sonde_labrun::{Loaded, RunError, RunOptions, RunSummary};
use sonde_report::{Format, Inputs};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

pub use progress::Progress;

/// Runs a `sonde lab` subcommand; the exit code.
pub fn run(cmd: LabCommand, interrupt: &AtomicBool) -> i32 {
    match cmd {
        LabCommand::Run(a) => run_matrix(&a, interrupt),
        LabCommand::Clean => clean(),
        LabCommand::List => {
            for (name, description) in sonde_labrun::builtins() {
                crate::output::outln!("{name:<12} {description}");
            }
            if let Ok(m) = sonde_mesh::MeshSpec::builtin() {
                crate::output::outln!("{:<12} {}", m.name, m.description);
            }
            exit::OK
        }
        LabCommand::Show { name } => match sonde_scenario::builtin_text(&name).or_else(|| {
            (name == sonde_mesh::spec::BUILTIN_NAME).then_some(sonde_mesh::spec::BUILTIN_TEXT)
        }) {
            Some(text) => {
                crate::output::outln!("{}", text.trim_end_matches('\n'));
                exit::OK
            }
            None => {
                eprintln!(
                    "sonde: usage error - no built-in scenario {name:?} (see `sonde lab list`)"
                );
                exit::USAGE
            }
        },
    }
}

fn clean() -> i32 {
    match sonde_labrun::clean() {
        Ok(r) => {
            let c = &r.cleaned;
            if r.killed.is_empty()
                && c.namespaces.is_empty()
                && c.interfaces.is_empty()
                && c.files.is_empty()
            {
                crate::output::outln!("nothing to clean: no sonde- namespace or interface left");
            }
            for (pid, ns) in &r.killed {
                crate::output::outln!("killed process {pid} in namespace {ns}");
            }
            for ns in &c.namespaces {
                crate::output::outln!("removed namespace {ns}");
            }
            for i in &c.interfaces {
                crate::output::outln!("removed interface {i}");
            }
            for f in &c.files {
                crate::output::outln!("removed {f}");
            }
            exit::OK
        }
        Err(e) => {
            eprintln!("sonde: error - {e}");
            exit::FAILED
        }
    }
}

/// The options every lab run shares: this executable as the tests' sonde.
///
/// # Errors
/// When the path of the running executable is unknown.
pub fn options(out: &Path, resume: bool, settings: Vec<String>) -> anyhow::Result<RunOptions> {
    let exe = std::env::current_exe()
        .map_err(|e| anyhow::anyhow!("cannot find sonde's own executable: {e}"))?;
    Ok(RunOptions {
        out_dir: out.to_path_buf(),
        resume,
        settings,
        sonde_exe: exe,
        sonde_version: format!("sonde {}", env!("CARGO_PKG_VERSION")),
        store: None,
    })
}

fn run_matrix(a: &LabRunArgs, interrupt: &AtomicBool) -> i32 {
    if let Some((text, origin)) = mesh::description(&a.scenario) {
        if let Err(e) = check_out_dir(a) {
            eprintln!("sonde: usage error - {e}");
            return exit::USAGE;
        }
        return mesh::run(a, &text, &origin, interrupt);
    }
    if a.mesh.any() {
        eprintln!(
            "sonde: usage error - --nodes and -t are for a mesh (sonde lab run mesh); {} is a matrix scenario",
            a.scenario
        );
        return exit::USAGE;
    }
    let loaded = match sonde_labrun::load(&a.scenario) {
        Ok(l) => l,
        Err(e @ RunError::UnknownScenario { .. }) => {
            eprintln!("sonde: usage error - {e}; or the mesh: sonde lab run mesh");
            return exit::USAGE;
        }
        Err(e @ RunError::Scenario { .. }) => {
            eprintln!("sonde: usage error - {e}");
            return exit::USAGE;
        }
        Err(e) => {
            eprintln!("sonde: error - {e}");
            return exit::FAILED;
        }
    };
    if let Err(e) = check_out_dir(a).and_then(|_| check_sonde_tests(&loaded.scenario)) {
        eprintln!("sonde: usage error - {e}");
        return exit::USAGE;
    }
    let opts = match options(&a.out, a.resume, a.settings.clone()) {
        Ok(o) => RunOptions {
            store: Some(a.store.store.clone()).filter(|s| s != "sqlite"),
            ..o
        },
        Err(e) => {
            eprintln!("sonde: error - {e:#}");
            return exit::FAILED;
        }
    };
    match execute(&loaded, &opts, interrupt) {
        Ok(summary) => {
            let code = finish(&opts, &summary, &a.scenario);
            if summary.interrupted || !interrupt.load(Ordering::Relaxed) {
                return code;
            }
            // Ctrl-C after the last test, while the report was written: the report is
            // finished (it takes milliseconds) but the run still ends as interrupted.
            crate::output::outln!(
                "interrupted while the report was written: every test is recorded and the \
                 report is complete; `--resume` has nothing left to run and writes it again"
            );
            exit::FAILED
        }
        Err(e @ RunError::UnknownSettings { .. }) => {
            eprintln!("sonde: usage error - {e}");
            exit::USAGE
        }
        Err(e) => {
            eprintln!("sonde: error - {e}");
            exit::FAILED
        }
    }
}

/// A directory that already holds a run is continued or added to only when asked: a plain
/// `sonde lab run` into it would otherwise mix a new run into an old report by accident.
fn check_out_dir(a: &LabRunArgs) -> Result<(), String> {
    let db = a.out.join("results.db");
    if db.exists() && !a.resume && !a.new {
        return Err(format!(
            "{} already holds a run ({}): add --resume to continue it, or --new to start another run beside it",
            a.out.display(),
            db.display()
        ));
    }
    Ok(())
}

/// Checks every `sonde = [...]` test's flags before any namespace is built, as the test's
/// sonde will parse them (addresses stand in for `{server}` and the like).
fn check_sonde_tests(scenario: &sonde_scenario::Scenario) -> Result<(), String> {
    for t in &scenario.tests {
        let Some(args) = &t.sonde else { continue };
        let mut argv = vec!["sonde".to_string()];
        argv.extend(args.iter().map(|a| stand_in(a)));
        if let Err(e) = crate::parse(argv) {
            let first = e.to_string();
            let first = first
                .lines()
                .next()
                .unwrap_or("")
                .trim_start_matches("error: ");
            return Err(format!(
                "test \"{}\" (sonde {}): {first}",
                t.name,
                args.join(" ")
            ));
        }
    }
    Ok(())
}

/// `{server6}`-style placeholders replaced by addresses of their family, for parsing only.
fn stand_in(arg: &str) -> String {
    arg.replace("{server6}", "2001:db8::1")
        .replace("{client6}", "2001:db8::2")
        .replace("{server4}", "192.0.2.1")
        .replace("{client4}", "192.0.2.2")
        .replace("{server}", "192.0.2.1")
        .replace("{client}", "192.0.2.2")
}

/// Runs the matrix with the progress display.
///
/// # Errors
/// What stopped the run as a whole (see [`sonde_labrun::run`]).
pub fn execute(
    loaded: &Loaded,
    opts: &RunOptions,
    interrupt: &AtomicBool,
) -> Result<RunSummary, RunError> {
    crate::output::outln!(
        "sonde lab: scenario {} ({}), results in {}",
        loaded.scenario.name,
        loaded.origin,
        opts.out_dir.display()
    );
    let mut progress = Progress::new();
    let result = sonde_labrun::run(loaded, opts, &mut progress, interrupt);
    progress.finish();
    result
}

/// Prints the summary, writes the report; the exit code.
pub fn finish(opts: &RunOptions, s: &RunSummary, arg: &str) -> i32 {
    crate::output::outln!(
        "\n{} tests: {} ok, {} failed now{}{}",
        s.total,
        s.ok,
        s.failed,
        if s.skipped > 0 {
            format!(", {} recorded earlier", s.skipped)
        } else {
            String::new()
        },
        if s.failed_before > 0 {
            format!(" ({} of them failed)", s.failed_before)
        } else {
            String::new()
        }
    );
    if s.interrupted {
        crate::output::outln!(
            "interrupted: the lab is torn down and finished tests are kept; continue with\n  \
             sonde lab run {arg} --out {} --resume",
            opts.out_dir.display()
        );
    }
    crate::output::outln!("results database: {}", s.database.display());
    if let Some(remote) = &s.remote {
        crate::output::outln!("{remote}");
    }
    report_and_exit(&s.database, s.run, &opts.out_dir, s.all_ok())
}

/// Writes the report of `run` of `database` into `out`; the exit code: OK only when the run
/// was `all_ok` and the report was written.
fn report_and_exit(database: &Path, run: sonde_store::RunId, out: &Path, all_ok: bool) -> i32 {
    let report = match Inputs::from_database(database, Some(run)) {
        Ok(inputs) => super::report::write(&inputs, out, &[Format::Markdown, Format::Html]),
        Err(e) => {
            eprintln!("sonde: error - cannot read the run back for its report: {e}");
            exit::FAILED
        }
    };
    if all_ok && report == exit::OK {
        exit::OK
    } else {
        exit::FAILED
    }
}
