//! The `sonde` binary: parses flags, wires the runtime to the reporters, picks the exit code.

mod cli;
mod cli_agent;
mod cli_auth;
mod cli_btc;
mod cli_capacity;
mod cli_coded;
mod cli_compare_ip;
mod cli_latency;
mod cli_mesh;
mod cli_profile;
mod cli_serial;
mod cli_store;
mod cli_stress;
mod cli_sweep;
mod cli_switch;
mod cli_switch_more;
mod cli_switch_policy;
mod cli_values;
mod commands;
mod os_password;
mod os_time;
mod output;

use clap::Parser;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

fn main() {
    let args = cli::rewrite_iperf_style(std::env::args().collect());
    let parsed = match cli::Cli::try_parse_from(args) {
        Ok(c) => c,
        Err(e) => {
            let _ = e.print();
            std::process::exit(if e.use_stderr() {
                commands::exit::USAGE
            } else {
                commands::exit::OK
            });
        }
    };
    let interrupt = Arc::new(AtomicBool::new(false));
    output::set_stop_flag(interrupt.clone());
    // A lab must be torn down whatever happens: there a second Ctrl-C only repeats that it is.
    let builds_lab = matches!(parsed.command, cli::Command::Lab(_) | cli::Command::Demo(_));
    let flag = interrupt.clone();
    let arm = move || arm_interrupt(flag.clone(), builds_lab);
    if !matches!(parsed.command, cli::Command::Server(_)) {
        arm();
    }
    let code = match parsed.command {
        // The server arms it itself, after it may have detached (-D).
        cli::Command::Server(a) => commands::server::run(a, interrupt, &arm),
        cli::Command::Client(a) => commands::client::run(*a, &interrupt),
        cli::Command::Demo(a) => commands::demo::run(a.time, &a.out, interrupt),
        cli::Command::Report(a) => commands::report::run(&a),
        cli::Command::Latency(a) => commands::latency::run(a, &interrupt),
        cli::Command::Btc(a) => commands::btc::run(a, &interrupt),
        cli::Command::Capacity(a) => commands::capacity::run(a, &interrupt),
        cli::Command::Rrul(a) => commands::rrul::run(a, &interrupt),
        cli::Command::CompareIp(a) => commands::compare_ip::run(a, &interrupt),
        cli::Command::Profile(c) => commands::profile::run(c, &interrupt),
        cli::Command::SwitchTest(a) => commands::switch_test::run(a, &interrupt),
        cli::Command::Serial(a) => commands::serial::run(a, &interrupt),
        cli::Command::Lab(c) => commands::lab::run(c, &interrupt),
        cli::Command::Stress(a) => commands::stress::run(a, &interrupt),
        cli::Command::Sweep(a) => commands::sweep::run(a, &interrupt),
        cli::Command::Agent(a) => commands::agent::run(a, interrupt.clone()),
        cli::Command::Services(a) => commands::services::run(&a, &interrupt),
        cli::Command::Completions { shell } => commands::docs::completions(shell),
        cli::Command::Man => commands::docs::man(),
    };
    if output::stdout_closed() {
        std::process::exit(commands::exit::STDOUT_CLOSED);
    }
    std::process::exit(code);
}

/// Installs the Ctrl-C (and SIGTERM) handler that raises `flag`; a second one exits at once,
/// except while a lab is torn down.
fn arm_interrupt(flag: Arc<AtomicBool>, builds_lab: bool) {
    if let Err(e) = ctrlc::set_handler(move || {
        if flag.swap(true, Ordering::SeqCst) {
            if builds_lab {
                eprintln!("sonde: stopping; removing the lab's namespaces first");
            } else {
                // A second Ctrl-C: the user really wants out now.
                std::process::exit(commands::exit::FAILED);
            }
        }
    }) {
        eprintln!("sonde: warning - cannot install the Ctrl-C handler: {e}");
    }
}
