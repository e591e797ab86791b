//! The `sonde server` each server node runs while a setting's tests run.
//!
//! One server per node serves every test of the setting: sonde throughput and latency tests
//! and iperf3 clients alike (it answers both on port 5201), and iperf 2 clients (`iperf -c`)
//! on iperf 2's port 5001 (`--iperf2`). It must be stopped before its lab
//! is torn down: a process still inside a namespace keeps that namespace's interfaces alive
//! after `ip netns delete`. [`LabServer`]'s drop kills it, so an early return or a panic
//! cannot leave it behind.

use std::fs::File;
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use sonde_lab::Lab;
use sonde_platform::process::Signal;

use crate::exec;

/// sonde's default port, which every test in a scenario assumes.
const PORT: u16 = 5201;
/// How long a server may take to listen.
const READY: Duration = Duration::from_secs(10);
/// How long a stopped server may take to exit before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(3);

/// A running `sonde server` in a lab node.
#[derive(Debug)]
pub(crate) struct LabServer {
    child: Option<Child>,
}

impl LabServer {
    /// Starts `sonde_exe server` in `node`, its stderr appended to `log`, and waits until it
    /// accepts connections (checked from inside the node, over loopback, so nothing crosses
    /// an impaired link and the loss pattern stays the tests' own).
    ///
    /// # Errors
    /// A message saying what failed (spawn, early exit, not listening in time).
    pub fn start(lab: &Lab, node: &str, sonde_exe: &Path, log: &Path) -> Result<LabServer, String> {
        let exe = sonde_exe.display().to_string();
        let mut cmd = lab
            .command(node, &exe, &["server", "--iperf2"])
            .map_err(|e| e.to_string())?;
        let stderr = File::options()
            .create(true)
            .append(true)
            .open(log)
            .map(Stdio::from)
            .unwrap_or_else(|_| Stdio::null());
        exec::isolate(&mut cmd).stdout(Stdio::null()).stderr(stderr);
        let child = cmd
            .spawn()
            .map_err(|e| format!("cannot start `sonde server` in {node}: {e}"))?;
        let mut server = LabServer { child: Some(child) };
        let deadline = Instant::now() + READY;
        loop {
            if let Some(Ok(Some(status))) = server.child.as_mut().map(Child::try_wait) {
                return Err(format!(
                    "`sonde server` in {node} exited at start ({status}); see {}",
                    log.display()
                ));
            }
            let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, PORT));
            let up = lab
                .in_node(node, || {
                    TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok()
                })
                .unwrap_or(false);
            if up {
                return Ok(server);
            }
            if Instant::now() >= deadline {
                return Err(format!(
                    "`sonde server` in {node} is not listening on port {PORT} after {} s",
                    READY.as_secs()
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Asks the server to stop (SIGTERM), kills it if it has not within a grace period.
    pub fn stop(mut self) {
        self.shutdown();
    }

    fn shutdown(&mut self) {
        let Some(mut child) = self.child.take() else {
            return;
        };
        exec::signal_group(&child, Signal::TERM);
        let deadline = Instant::now() + EXIT_GRACE;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        exec::signal_group(&child, Signal::KILL);
        let _ = child.wait();
    }
}

impl Drop for LabServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}
