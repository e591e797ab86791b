//! `sonde client --iperf2`: what of the client's flags an iperf 2 test can do (a usage error
//! naming each one it cannot), iperf 2's defaults, and the run against `iperf -s`.

use crate::flags::ClientArgs;
use sonde_runtime::client::{ClientConfig, ClientOutcome};
use sonde_runtime::iperf2::client::{self, Iperf2Options};
use sonde_stats::model::Event;
use sonde_stats::sink::Sink;
use std::sync::atomic::AtomicBool;

/// iperf 2's UDP datagram when `-l` is not given (sonde's own is 1448).
pub const UDP_DEFAULT_LEN: u64 = sonde_runtime::iperf2::client_header::DEFAULT_UDP_LEN;

/// Refuses what an iperf 2 test cannot do, naming the flag.
///
/// # Errors
/// The usage message for the first such flag.
pub fn check(a: &ClientArgs) -> Result<(), String> {
    let refusals: [(bool, &str); 5] = [
        (
            a.bidir,
            "--bidir is not iperf 2's: an iperf 2 test runs one direction (-R reverses it)",
        ),
        (
            a.get_server_output,
            "--get-server-output is not iperf 2's: iperf -s sends no record of a test (UDP's \
             server report is shown without it)",
        ),
        (
            a.cntl_ka.is_some(),
            "--cntl-ka applies to a control connection, and iperf 2 has none",
        ),
        (
            a.affinity.is_some_and(|(_, server)| server.is_some()),
            "-A N,M: iperf -s cannot be told a core; give -A N for this end only",
        ),
        (
            a.udp && a.reverse,
            "-u -R with --iperf2 is not supported yet: UDP runs from this end to iperf -s",
        ),
    ];
    match refusals.iter().find(|(hit, _)| *hit) {
        Some((_, why)) => Err((*why).to_owned()),
        None => Ok(()),
    }
}

/// Runs the test against `iperf -s`.
pub fn run(
    a: &ClientArgs,
    cfg: &ClientConfig,
    interrupt: &AtomicBool,
    emit: &mut dyn Sink<Event>,
) -> ClientOutcome {
    let opts = Iperf2Options {
        length_given: a.length.is_some(),
    };
    client::run(cfg, opts, interrupt, emit)
}
