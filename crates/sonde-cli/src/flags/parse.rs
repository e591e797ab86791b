//! The parser of the whole command line: [`Cli`]'s flags with two habits of iperf3's (getopt's)
//! that wrapper scripts rely on, applied to every subcommand at once so none can miss them.
//!
//! - A flag given twice takes its last value (`-t 1 -t 2` runs 2 s), as iperf3 and iperf2 do;
//!   clap's default is to refuse the line.
//! - A value may start with a hyphen (`-b -5m`, `-t -1`): the flag's own parser sees the text,
//!   and a negative number is refused as such ("must not be negative") instead of clap's
//!   advice to write `-- -5`. A flag whose value is optional (compare-ip's `--sizes [LIST]`)
//!   takes a hyphen only in a negative number, so a flag after it stays a flag; positional
//!   arguments are left as they are.

use crate::flags::Cli;
use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Arg, ArgMatches, Command, CommandFactory, FromArgMatches};

/// `sonde`'s command with the rules above; what `main`, the lab's check of a scenario's sonde
/// tests, the completions and the man page all use.
pub fn command() -> Command {
    hyphen_values(Cli::command().args_override_self(true))
}

/// Parses `args` (the program name first) as `main` does.
///
/// # Errors
/// clap's error (help and version requests included), with a negative value said as such.
pub fn parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let mut cmd = command();
    let matches: ArgMatches = cmd
        .try_get_matches_from_mut(args)
        .map_err(|e| negative_said(e, &cmd))?;
    let cli = Cli::from_arg_matches(&matches).map_err(|e| e.format(&mut cmd))?;
    crate::flags::report_style::refuse_where_unsupported(cli, &mut cmd)
}

fn hyphen_values(cmd: Command) -> Command {
    cmd.mut_args(value_may_start_with_hyphen)
        .mut_subcommands(hyphen_values)
}

fn value_may_start_with_hyphen(a: Arg) -> Arg {
    if a.is_positional() || !a.get_action().takes_values() || a.is_require_equals_set() {
        return a;
    }
    match a.get_num_args() {
        None => a.allow_hyphen_values(true),
        Some(r) if r.min_values() == 1 && r.max_values() == 1 => a.allow_hyphen_values(true),
        Some(r) if r.max_values() == 1 => a.allow_negative_numbers(true),
        Some(_) => a,
    }
}

/// A value refused by its parser that is a negative number: no value of sonde's is, so the
/// message says that (the parser's own message would list a range or a syntax).
fn negative_said(e: clap::Error, cmd: &Command) -> clap::Error {
    if !matches!(
        e.kind(),
        ErrorKind::ValueValidation | ErrorKind::InvalidValue
    ) {
        return e;
    }
    let (Some(ContextValue::String(arg)), Some(ContextValue::String(value))) = (
        e.get(ContextKind::InvalidArg),
        e.get(ContextKind::InvalidValue),
    ) else {
        return e;
    };
    if !sonde_stats::units::looks_negative(value) {
        return e;
    }
    let message = format!("invalid value '{value}' for '{arg}': must not be negative");
    clap::Error::raw(ErrorKind::ValueValidation, format!("{message}\n")).with_cmd(cmd)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_flag_takes_its_last_value() {
        let cli = parse_from(["sonde", "client", "h", "-t", "1", "-t", "2", "-u", "-u"]).unwrap();
        let crate::flags::Command::Client(c) = cli.command else {
            panic!("not a client line")
        };
        assert_eq!(c.time, Some(2.0));
        assert!(c.udp);
    }

    /// Every subcommand's path (`["lab", "run"]`) with stand-ins for its required positional
    /// arguments, and its flags.
    fn every_subcommand(cmd: &Command, path: &[String], out: &mut Vec<(Vec<String>, Vec<Arg>)>) {
        for sub in cmd.get_subcommands() {
            let mut words = path.to_vec();
            words.push(sub.get_name().to_string());
            let mut line = words.clone();
            let mut flags = Vec::new();
            for a in sub.get_arguments() {
                if !a.is_positional() {
                    flags.push(a.clone());
                } else if a.is_required_set() {
                    let stand_in = a
                        .get_possible_values()
                        .first()
                        .map_or("x".to_string(), |v| v.get_name().to_string());
                    line.push(stand_in);
                }
            }
            out.push((line, flags));
            every_subcommand(sub, &words, out);
        }
    }

    fn spelling(a: &Arg) -> String {
        match (a.get_long(), a.get_short()) {
            (Some(l), _) => format!("--{l}"),
            (None, Some(c)) => format!("-{c}"),
            (None, None) => unreachable!("a flag has a name"),
        }
    }

    #[test]
    fn every_flag_of_every_subcommand_may_be_repeated_and_sees_a_negative_value() {
        let mut all = Vec::new();
        every_subcommand(&command(), &[], &mut all);
        assert!(all.len() > 20, "{} subcommands", all.len());
        let mut value_flags = 0;
        for (line, flags) in all {
            for a in flags {
                let flag = spelling(&a);
                let mut argv = vec!["sonde".to_string()];
                argv.extend(line.iter().cloned());
                if a.get_action().takes_values() {
                    value_flags += 1;
                    let given = if a.is_require_equals_set() {
                        vec![format!("{flag}=-1"), format!("{flag}=-1")]
                    } else {
                        vec![flag.clone(), "-1".into(), flag.clone(), "-1".into()]
                    };
                    argv.extend(given);
                } else {
                    argv.extend([flag.clone(), flag.clone()]);
                }
                let Err(e) = parse_from(&argv) else { continue };
                let said = e.to_string();
                let what = argv.join(" ");
                assert!(!said.contains("multiple times"), "{what}: {said}");
                assert_ne!(e.kind(), ErrorKind::UnknownArgument, "{what}: {said}");
                if e.kind() == ErrorKind::ValueValidation {
                    assert!(said.contains("must not be negative"), "{what}: {said}");
                }
            }
        }
        assert!(value_flags > 100, "{value_flags} flags with values");
    }

    #[test]
    fn a_negative_value_is_refused_as_negative() {
        for line in [
            "sonde client h -b -5m",
            "sonde client h -t -1",
            "sonde client h -P -1",
            "sonde server --max-bitrate -1",
            "sonde sweep h -u --max-loss -1",
            "sonde compare-ip h --sizes -4",
        ] {
            let e = parse_from(line.split(' ')).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::ValueValidation, "{line}: {e}");
            assert!(
                e.to_string().contains("must not be negative"),
                "{line}: {e}"
            );
        }
    }
}
