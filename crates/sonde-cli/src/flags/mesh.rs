//! Flags of `sonde lab run` that only the mesh takes (phase one: parse; the command checks
//! they are used with a mesh).

use clap::Args;

/// `sonde lab run mesh [--nodes N] [-t SECS]`.
#[derive(Debug, Clone, Args)]
pub struct MeshArgs {
    /// Mesh only: how many nodes (2..=64), instead of the description's `nodes` (16 for the built-in)
    #[arg(long, value_name = "N")]
    pub nodes: Option<usize>,
    /// Mesh only: how long the agents run, seconds, instead of the description's `duration_secs` (60 for the built-in)
    #[arg(short = 't', long = "time", value_name = "SECS")]
    pub time: Option<f64>,
}

impl MeshArgs {
    /// True when any mesh-only flag is given.
    pub fn any(&self) -> bool {
        self.nodes.is_some() || self.time.is_some()
    }
}
