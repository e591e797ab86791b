//! The agents' processes: `sonde agent` started in each node's namespace, stopped with
//! SIGTERM (each records the test it was in and marks its run finished), killed only when it
//! outlasts its grace, and killed on drop so that no agent outlives a failed run.

use std::fs::File;
use std::net::SocketAddr;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde::Serialize;
use sonde_lab::Lab;
use sonde_platform::process::{self, Signal};

use crate::error::{io_err, MeshError};

/// A running agent.
#[derive(Debug)]
pub struct AgentProc {
    pub node: String,
    child: Child,
    status: Option<ExitStatus>,
}

/// How an agent ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgentEnd {
    pub node: String,
    /// Its exit code (None when killed by a signal).
    pub code: Option<i32>,
    /// It exited before the mesh asked it to stop.
    pub early: bool,
    /// It had to be killed after its grace.
    pub killed: bool,
}

impl AgentProc {
    /// Starts `sonde agent --config CONFIG --metrics METRICS --store STORE` in `node`, its
    /// output to `log`. `store` is the agent's store target, passed through as one argument.
    ///
    /// # Errors
    /// [`MeshError::Lab`] for an unknown node, [`MeshError::Io`] when the log or the process
    /// cannot be created.
    pub fn spawn(
        lab: &Lab,
        node: &str,
        sonde_exe: &Path,
        config: &Path,
        metrics: SocketAddr,
        store: &str,
        log: &Path,
    ) -> Result<AgentProc, MeshError> {
        let out = File::create(log).map_err(io_err(format!("creating {}", log.display())))?;
        let err = out
            .try_clone()
            .map_err(io_err(format!("opening {}", log.display())))?;
        let exe = sonde_exe.to_string_lossy();
        let (config, metrics) = (config.to_string_lossy(), metrics.to_string());
        let mut cmd = lab.command(
            node,
            &exe,
            &[
                "agent",
                "--config",
                &config,
                "--metrics",
                &metrics,
                "--store",
                store,
            ],
        )?;
        cmd.stdin(Stdio::null()).stdout(out).stderr(err);
        // SAFETY: die_with_parent makes one system call and allocates nothing, as code
        // between fork and exec must. The agent gets SIGTERM when this process dies, even by
        // kill -9, so it stops cleanly (recording what it measured) instead of outliving the
        // mesh; where the kernel refuses, the agent is not started at all.
        unsafe {
            cmd.pre_exec(|| process::die_with_parent(Signal::TERM));
        }
        let child = cmd
            .spawn()
            .map_err(io_err(format!("starting the agent of {node}")))?;
        Ok(AgentProc {
            node: node.to_owned(),
            child,
            status: None,
        })
    }

    /// True once the process has exited.
    pub fn exited(&mut self) -> bool {
        if self.status.is_none() {
            self.status = self.child.try_wait().ok().flatten();
        }
        self.status.is_some()
    }

    /// Signals the agent: a pid this process spawned and has not reaped yet (a reaped child
    /// has its status recorded and is never signalled), so it names no other process.
    fn signal(&self, sig: Signal) {
        let _ = process::signal(self.child.id(), sig);
    }
}

impl Drop for AgentProc {
    fn drop(&mut self) {
        if !self.exited() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Stops every agent: SIGTERM to all at once, then waits up to `grace` for them together,
/// then kills what is left. `early` names the agents that had exited before.
pub fn stop_all(agents: &mut [AgentProc], grace: Duration) -> Vec<AgentEnd> {
    let early: Vec<bool> = agents.iter_mut().map(AgentProc::exited).collect();
    for a in agents.iter_mut().filter(|a| a.status.is_none()) {
        a.signal(Signal::TERM);
    }
    let deadline = Instant::now() + grace;
    while Instant::now() < deadline && agents.iter_mut().any(|a| !a.exited()) {
        std::thread::sleep(Duration::from_millis(50));
    }
    agents
        .iter_mut()
        .zip(early)
        .map(|(a, early)| {
            let killed = !a.exited();
            if killed {
                let _ = a.child.kill();
                a.status = a.child.wait().ok();
            }
            AgentEnd {
                node: a.node.clone(),
                code: a.status.and_then(|s| s.code()),
                early,
                killed,
            }
        })
        .collect()
}
