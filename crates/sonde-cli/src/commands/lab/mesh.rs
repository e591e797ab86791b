//! `sonde lab run mesh` (or a mesh description file): flags in, [`sonde_mesh::run`] does the
//! work, its summary is printed here and the exit code picked here.
//!
//! Exit codes: 0 when every ordered pair measured, every agent stopped cleanly and every
//! metrics endpoint answered; 1 otherwise (also when interrupted or the lab could not be
//! built); 2 for a bad description or flag.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use sonde_mesh::plan::MeshPlan;
use sonde_mesh::{MeshError, MeshObserver, MeshOptions, MeshSpec};

use super::super::exit;
use crate::flags::LabRunArgs;

/// The mesh description `arg` names: a file holding one, or the built-in `mesh`; `None`
/// when it names neither (a matrix scenario).
pub fn description(arg: &str) -> Option<(String, String)> {
    let path = Path::new(arg);
    if path.is_file() {
        let text = std::fs::read_to_string(path).ok()?;
        return sonde_mesh::spec::is_mesh(&text).then(|| (text, arg.to_owned()));
    }
    (arg == sonde_mesh::spec::BUILTIN_NAME).then(|| {
        (
            sonde_mesh::spec::BUILTIN_TEXT.to_owned(),
            format!("built-in {arg}"),
        )
    })
}

struct Lines;

impl MeshObserver for Lines {
    fn lab_up(&mut self, prefix: &str, plan: &MeshPlan) {
        crate::output::outln!(
            "lab up: {} nodes around a router (namespaces {prefix}-*), {} peers per agent",
            plan.nodes.len(),
            plan.peers_of(0).len()
        );
        for l in &plan.spec.links {
            crate::output::outln!("impaired: {}", sonde_mesh::render::link_line(l));
        }
        for o in &plan.spec.outages {
            crate::output::outln!(
                "outage planned: {}",
                sonde_mesh::render::planned_outage_line(o)
            );
        }
    }
    fn agents_ready(&mut self, ready: usize, of: usize) {
        crate::output::outln!("agents: {ready} of {of} metrics endpoints answer");
    }
    fn tick(&mut self, elapsed: Duration, total: Duration) {
        let (e, t) = (elapsed.as_secs(), total.as_secs());
        if e > 0 && (e % 10 == 0 || e + 1 >= t) {
            crate::output::outln!("running: {e} of {t} s");
        }
    }
    fn stopping(&mut self) {
        crate::output::outln!("stopping the agents (SIGTERM), collecting their results");
    }
}

/// Runs a mesh; the exit code.
pub fn run(a: &LabRunArgs, text: &str, origin: &str, interrupt: &AtomicBool) -> i32 {
    if a.resume {
        eprintln!("sonde: usage error - a mesh run cannot be resumed: start another with --new");
        return exit::USAGE;
    }
    if !a.settings.is_empty() {
        eprintln!("sonde: usage error - a mesh has no link settings to pick (--settings)");
        return exit::USAGE;
    }
    let spec = match MeshSpec::parse_with(text, a.mesh.nodes, a.mesh.time) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("sonde: usage error - {origin}: {e}");
            return exit::USAGE;
        }
    };
    let opts = match super::options(&a.out, false, Vec::new()) {
        Ok(o) => MeshOptions {
            out_dir: o.out_dir,
            sonde_exe: o.sonde_exe,
            sonde_version: o.sonde_version,
            spec_text: text.to_owned(),
            store: Some(a.store.store.clone()).filter(|s| s != "sqlite"),
        },
        Err(e) => {
            eprintln!("sonde: error - {e:#}");
            return exit::FAILED;
        }
    };
    crate::output::outln!(
        "sonde lab: mesh {} ({origin}), {} nodes for {} s, results in {}",
        spec.name,
        spec.nodes,
        spec.duration_secs,
        a.out.display()
    );
    let summary = match sonde_mesh::run(spec, &opts, &mut Lines, interrupt) {
        Ok(s) => s,
        Err(e @ MeshError::AgentConfig { .. }) => {
            eprintln!("sonde: usage error - {e}");
            return exit::USAGE;
        }
        Err(e) => {
            eprintln!("sonde: error - {e}");
            return exit::FAILED;
        }
    };
    crate::output::outln!("{}", sonde_mesh::render::summary(&summary).trim_end());
    if summary.interrupted {
        crate::output::outln!(
            "interrupted: the lab is torn down and what the agents recorded is kept"
        );
    }
    crate::output::outln!("results database: {}", summary.database.display());
    crate::output::outln!(
        "per node: {0}/agents/NODE.db, .toml, .log; metrics: {0}/metrics/NODE.txt; summary: {0}/mesh.json",
        a.out.display()
    );
    if let Some(r) = &summary.remote {
        crate::output::outln!("{r}");
    }
    super::report_and_exit(&summary.database, summary.run, &a.out, summary.all_ok())
}
