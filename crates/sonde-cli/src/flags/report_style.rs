//! Where `-y C` (iperf 2's CSV report style) is refused: it is a flag of the output flags every
//! measuring command shares ([`crate::flags::OutputArgs`]), but only the throughput tests of
//! `sonde client` and `sonde server` have iperf 2's lines to write. Any other command that
//! is given it stops with a usage error naming the commands that take it, rather than
//! printing its own table as if the flag were not there.

use crate::flags::{Cli, Command, OutputArgs};
use clap::error::ErrorKind;

/// The command's name and its output flags, for the commands that cannot write iperf 2's CSV.
fn refusing(cmd: &Command) -> Option<(&'static str, &OutputArgs)> {
    Some(match cmd {
        Command::Client(a) if a.coded.is_some() => ("client --coded", &a.output),
        Command::Latency(a) => ("latency", &a.output),
        Command::Rrul(a) => ("rrul", &a.output),
        Command::CompareIp(a) => ("compare-ip", &a.output),
        Command::Btc(a) => ("btc", &a.output),
        Command::Capacity(a) => ("capacity", &a.output),
        Command::Stress(a) => ("stress", &a.output),
        Command::Sweep(a) => ("sweep", &a.output),
        _ => return None,
    })
}

/// `cli` as parsed, or clap's usage error when its command cannot take `-y`.
///
/// # Errors
/// An [`ErrorKind::ArgumentConflict`] saying which commands take `-y C`.
pub fn refuse_where_unsupported(cli: Cli, cmd: &mut clap::Command) -> Result<Cli, clap::Error> {
    match refusing(&cli.command) {
        Some((name, o)) if o.report_style.is_some() => Err(cmd.error(
            ErrorKind::ArgumentConflict,
            format!(
                "'-y/--reportstyle' (iperf 2's CSV lines) is for the throughput tests of \
                 'sonde client' and 'sonde server', not 'sonde {name}'"
            ),
        )),
        _ => Ok(cli),
    }
}

#[cfg(test)]
mod tests {
    use crate::flags::parse::parse_from;

    fn refused(line: &str) -> Option<String> {
        parse_from(line.split(' ')).err().map(|e| e.to_string())
    }

    #[test]
    fn client_and_server_take_y_c_and_other_commands_refuse_it() {
        for ok in [
            "sonde client h -y C",
            "sonde client h -u -b 10m --reportstyle c",
            "sonde server -y C",
        ] {
            assert_eq!(refused(ok), None, "{ok}");
        }
        for (line, name) in [
            ("sonde latency h -y C", "'sonde latency'"),
            ("sonde client h --coded -y C", "'sonde client --coded'"),
            ("sonde sweep h -y c", "'sonde sweep'"),
        ] {
            let e = refused(line).unwrap_or_default();
            assert!(
                e.contains(name) && e.contains("-y/--reportstyle"),
                "{line}: {e}"
            );
        }
    }

    #[test]
    fn y_c_conflicts_with_the_json_outputs() {
        for line in ["sonde client h -y C -J", "sonde server --json-stream -y C"] {
            let e = refused(line).unwrap_or_default();
            assert!(e.contains("cannot be used with"), "{line}: {e}");
        }
        let e = refused("sonde client h -y X").unwrap_or_default();
        assert!(e.contains("only report style is C"), "{e}");
    }
}
