//! The `sonde` command line: parses flags, wires the runtime to the reporters, picks the exit
//! code. The `sonde` package's binary is only a call to [`main`]: keeping the command line in
//! a library lets that package (its `main` and the integration tests) build at a low
//! optimisation level, while every line that runs here keeps the workspace's release profile.

mod commands;
mod flags;
mod output;
mod progress;
mod signals;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Parses a command line as [`main`] does, and runs nothing: iperf3's spellings
/// (`sonde -s`, `sonde -c HOST`) rewritten to their subcommands, then every flag and value
/// checked by clap with sonde's rules (a repeated flag takes its last value, a negative value
/// is refused as such). It opens no file, resolves no name and binds no socket, so what a
/// subcommand checks when it starts (a client's contradicting flags, an `-F` file's size, a
/// scenario's tests) is not covered. `args` starts with the program's name, as
/// `std::env::args` does; the docs' test (`tests/docs.rs`) runs every command line of the
/// README and `docs/` through it.
///
/// ```
/// let line = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
/// assert!(sonde_cli::parse_only(&line("sonde -c HOST -u -b 90m -J")).is_ok());
/// assert!(sonde_cli::parse_only(&line("sonde client --help")).is_ok());
/// assert!(sonde_cli::parse_only(&line("sonde client HOST --no-such-flag")).is_err());
/// ```
///
/// # Errors
/// clap's message, as `main` would print it before exiting with the usage error's code. A
/// request for help or the version is not an error: `main` prints it and exits with 0.
pub fn parse_only(args: &[String]) -> Result<(), String> {
    match parse(args.to_vec()) {
        Ok(_) => Ok(()),
        Err(e) if !e.use_stderr() => Ok(()),
        Err(e) => Err(e.to_string()),
    }
}

/// The one parse of a command line: `main`'s, [`parse_only`]'s and the lab's check of a
/// scenario's sonde tests.
fn parse(args: Vec<String>) -> Result<flags::Cli, clap::Error> {
    flags::parse::parse_from(flags::rewrite_iperf_style(args))
}

/// Runs the command line of this process and exits with its code; never returns.
pub fn main() -> ! {
    let parsed = match parse(std::env::args().collect()) {
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
    let builds_lab = matches!(
        parsed.command,
        flags::Command::Lab(_) | flags::Command::Demo(_)
    );
    // The agent reads its configuration again on SIGHUP.
    let reload = matches!(parsed.command, flags::Command::Agent(_))
        .then(|| Arc::new(AtomicBool::new(false)));
    let targets = signals::Targets {
        stop: interrupt.clone(),
        builds_lab,
        reload: reload.clone(),
    };
    let arm = move || signals::arm(targets.clone());
    if !matches!(parsed.command, flags::Command::Server(_)) {
        arm();
    }
    let code = match parsed.command {
        // The server arms it itself, after it may have detached (-D).
        flags::Command::Server(a) => commands::server::run(a, interrupt, &arm),
        flags::Command::Client(a) => commands::client::run(*a, &interrupt),
        flags::Command::Demo(a) => commands::demo::run(a.time, &a.out, interrupt),
        flags::Command::Report(a) => commands::report::run(&a),
        flags::Command::Latency(a) => commands::latency::run(a, &interrupt),
        flags::Command::Btc(a) => commands::btc::run(a, &interrupt),
        flags::Command::Capacity(a) => commands::capacity::run(a, &interrupt),
        flags::Command::Rrul(a) => commands::rrul::run(a, &interrupt),
        flags::Command::CompareIp(a) => commands::compare_ip::run(a, &interrupt),
        flags::Command::Profile(c) => commands::profile::run(c, &interrupt),
        flags::Command::SwitchTest(a) => commands::switch_test::run(a, &interrupt),
        flags::Command::Serial(a) => commands::serial::run(a, &interrupt),
        flags::Command::Lab(c) => commands::lab::run(c, &interrupt),
        flags::Command::Stress(a) => commands::stress::run(a, &interrupt),
        flags::Command::Sweep(a) => commands::sweep::run(a, &interrupt),
        flags::Command::Agent(a) => commands::agent::run(a, interrupt.clone(), reload),
        flags::Command::Services(a) => commands::services::run(&a, &interrupt),
        flags::Command::Completions { shell } => commands::docs::completions(shell),
        flags::Command::Man(a) => commands::docs::man(&a),
    };
    if output::stdout_closed() {
        std::process::exit(commands::exit::STDOUT_CLOSED);
    }
    std::process::exit(code);
}
