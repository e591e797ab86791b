//! One module per subcommand; each returns the process exit code.

pub mod agent;
pub mod auth;
pub mod btc;
pub mod capacity;
pub mod client;
pub mod client_iperf2;
pub mod coded;
pub mod compare_ip;
pub mod daemon;
pub mod demo;
pub mod docs;
pub mod lab;
pub mod latency;
pub mod profile;
pub mod report;
pub mod rrul;
pub mod serial;
pub mod server;
pub mod services;
pub mod stress;
pub mod stress_steps;
pub mod stress_udp;
pub mod sweep;

pub mod switch_test;

/// The process exit codes sonde documents.
pub mod exit {
    /// The test ran to its end condition.
    pub const OK: i32 = 0;
    /// The test failed, was refused, or ended early (Ctrl-C, peer died).
    pub const FAILED: i32 = 1;
    /// Bad flags or values (clap uses the same code).
    pub const USAGE: i32 = 2;
    /// Standard output was closed by its reader (`sonde ... | head`): the command stopped
    /// quietly, as a program killed by SIGPIPE would (the shell's 128 + 13).
    pub const STDOUT_CLOSED: i32 = 141;
}
