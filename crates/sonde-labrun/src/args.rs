//! A test's command line, made concrete: placeholders filled with the lab's addresses, `-J`
//! added to sonde tests, and the test's duration read back from its flags.
//!
//! Pure string work, kept apart from the runner so the rules (which placeholder wins, what
//! counts as a duration, which protocol a command line measures) are unit-tested without root.

use std::net::{Ipv4Addr, Ipv6Addr};

/// The addresses a test's arguments may name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Endpoints {
    /// The server node's IPv4 address (`{server}`, `{server4}`).
    pub server4: Ipv4Addr,
    /// The server node's IPv6 address (`{server6}`).
    pub server6: Ipv6Addr,
    /// The client node's IPv4 address (`{client}`, `{client4}`).
    pub client4: Ipv4Addr,
    /// The client node's IPv6 address (`{client6}`).
    pub client6: Ipv6Addr,
}

/// Replaces every placeholder in `arg`. The family-specific ones go first so `{server4}` is
/// never read as `{server}` followed by `4}`.
pub fn substitute(arg: &str, ep: &Endpoints) -> String {
    arg.replace("{server4}", &ep.server4.to_string())
        .replace("{server6}", &ep.server6.to_string())
        .replace("{server}", &ep.server4.to_string())
        .replace("{client4}", &ep.client4.to_string())
        .replace("{client6}", &ep.client6.to_string())
        .replace("{client}", &ep.client4.to_string())
}

/// `args` with `-J` appended unless it asks for JSON already: the runner records the
/// result document, so a sonde test must print one.
pub fn with_json(args: &[String]) -> Vec<String> {
    let mut out = args.to_vec();
    if !args.iter().any(|a| a == "-J" || a == "--json") {
        out.push("-J".into());
    }
    out
}

/// The test's duration in seconds from `-t SECS` / `--time SECS` / `--time=SECS` / `-tSECS`,
/// else, for `profile run HOST NAME|FILE`, that profile's duration (a built-in's, or a
/// readable profile file's); `None` when it has none (byte- or count-bounded, the tool's
/// default, or a profile file that cannot be read here).
pub fn duration_secs(args: &[String]) -> Option<f64> {
    time_flag(args).or_else(|| builtin_profile_secs(args))
}

fn time_flag(args: &[String]) -> Option<f64> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let value = if a == "-t" || a == "--time" {
            it.next().map(String::as_str)
        } else {
            a.strip_prefix("--time=")
                .or_else(|| a.strip_prefix("-t").filter(|v| !v.is_empty()))
        };
        if let Some(secs) = value.and_then(|v| v.parse::<f64>().ok()) {
            if secs.is_finite() && secs >= 0.0 {
                return Some(secs);
            }
        }
    }
    None
}

/// The duration of the profile a `profile run` names (an argument after the host: a built-in
/// or a `.toml` file; `monitoring`, the command's default, when it names neither), so a
/// 300 s profile is not killed at the default deadline.
fn builtin_profile_secs(args: &[String]) -> Option<f64> {
    if args.first().map(String::as_str) != Some("profile")
        || args.get(1).map(String::as_str) != Some("run")
    {
        return None;
    }
    let rest = args.get(3..).unwrap_or_default();
    if let Some(p) = rest.iter().find_map(|a| sonde_profile::builtin::get(a)) {
        return Some(p.duration_s);
    }
    if let Some(file) = rest.iter().find(|a| a.ends_with(".toml")) {
        // The test runs on this host's file system: the file's own length, or none when it
        // cannot be read here (the run then fails with the file's error, not a deadline).
        return std::fs::read_to_string(file)
            .ok()
            .and_then(|t| sonde_profile::Profile::from_toml(&t).ok())
            .map(|p| p.duration_s);
    }
    sonde_profile::builtin::get("monitoring").map(|p| p.duration_s)
}

/// What the test measures, for the database's `protocol` column: `latency` for `sonde
/// latency`, `profile` for `sonde profile run`, `stress` for `sonde stress` (TCP or UDP), `coded` for `--coded`, `udp` when `-u`/`--udp`
/// is given, `tcp` for other throughput tests; `None` for anything the runner cannot tell.
pub fn protocol(program_args: &[String]) -> Option<String> {
    let first = program_args.first()?.as_str();
    let udp = program_args.iter().any(|a| a == "-u" || a == "--udp");
    let coded = program_args
        .iter()
        .any(|a| a == "--coded" || a.starts_with("--coded="));
    let p = match first {
        "latency" => "latency",
        "profile" => "profile",
        "stress" => "stress",
        "rrul" => "rrul",
        "compare-ip" => "compare-ip",
        "client" | "c" if coded => "coded",
        _ if udp => "udp",
        "client" | "c" => "tcp",
        _ if first.ends_with("iperf3") || first.ends_with("iperf") => "tcp",
        _ => return None,
    };
    Some(p.to_owned())
}

/// How long a test may run before it is killed: its own `timeout` when the scenario gives
/// one, else twice its duration (10 s when it names none) plus 60 s. The slack covers
/// connection set-up and result exchange on a lossy link, where control messages wait for
/// TCP retransmissions (sonde's own control steps allow 30 s each); a hung test still ends
/// within a couple of minutes.
pub fn timeout_secs(explicit: Option<f64>, args: &[String]) -> f64 {
    explicit.unwrap_or_else(|| duration_secs(args).unwrap_or(10.0) * 2.0 + 60.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(args: &[&str]) -> Vec<String> {
        args.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn placeholders() {
        let ep = Endpoints {
            server4: Ipv4Addr::new(10, 77, 2, 2),
            server6: "fd00:77:0:2::2".parse().unwrap_or(Ipv6Addr::LOCALHOST),
            client4: Ipv4Addr::new(10, 77, 1, 1),
            client6: Ipv6Addr::LOCALHOST,
        };
        assert_eq!(substitute("{server}", &ep), "10.77.2.2");
        assert_eq!(
            substitute("{server4}:{server6}", &ep),
            "10.77.2.2:fd00:77:0:2::2"
        );
        assert_eq!(substitute("--bind={client}", &ep), "--bind=10.77.1.1");
        assert_eq!(substitute("{client6}", &ep), "::1");
        assert_eq!(substitute("{other}", &ep), "{other}");
    }

    #[test]
    fn json_flag_added_once() {
        assert_eq!(with_json(&v(&["client", "h"])), v(&["client", "h", "-J"]));
        assert_eq!(
            with_json(&v(&["client", "--json"])),
            v(&["client", "--json"])
        );
    }

    #[test]
    fn durations() {
        assert_eq!(duration_secs(&v(&["client", "h", "-t", "5"])), Some(5.0));
        assert_eq!(duration_secs(&v(&["--time=2.5"])), Some(2.5));
        assert_eq!(duration_secs(&v(&["-t3"])), Some(3.0));
        assert_eq!(duration_secs(&v(&["-t"])), None);
        assert_eq!(duration_secs(&v(&["-t", "x"])), None);
        assert_eq!(duration_secs(&v(&["-n", "100M"])), None);
        assert_eq!(timeout_secs(None, &v(&["-t", "5"])), 70.0);
        assert_eq!(timeout_secs(None, &v(&[])), 80.0);
        assert_eq!(timeout_secs(Some(7.0), &v(&["-t", "5"])), 7.0);
        // A built-in profile runs its own duration unless -t cuts it.
        let monitoring = v(&["profile", "run", "10.0.0.2", "monitoring", "-J"]);
        assert_eq!(duration_secs(&monitoring), Some(300.0));
        assert_eq!(timeout_secs(None, &monitoring), 660.0);
        let cut = v(&["profile", "run", "10.0.0.2", "monitoring", "-t", "6"]);
        assert_eq!(duration_secs(&cut), Some(6.0));
        assert_eq!(
            duration_secs(&v(&["profile", "run", "h", "missing.toml"])),
            None
        );
        let dir = std::env::temp_dir().join(format!("sonde-args-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("mine.toml");
        let text = sonde_profile::builtin::text("monitoring").unwrap();
        std::fs::write(&file, text.replace("duration_s = 300", "duration_s = 42")).unwrap();
        let path = file.to_string_lossy().to_string();
        assert_eq!(
            duration_secs(&v(&["profile", "run", "h", &path])),
            Some(42.0)
        );
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            duration_secs(&v(&["profile", "run", "h", "-J"])),
            Some(300.0)
        );
        assert_eq!(duration_secs(&v(&["client", "monitoring"])), None);
    }

    #[test]
    fn protocols() {
        assert_eq!(protocol(&v(&["client", "h"])).as_deref(), Some("tcp"));
        assert_eq!(protocol(&v(&["client", "h", "-u"])).as_deref(), Some("udp"));
        assert_eq!(protocol(&v(&["latency", "h"])).as_deref(), Some("latency"));
        assert_eq!(protocol(&v(&["iperf3", "-c", "h"])).as_deref(), Some("tcp"));
        assert_eq!(
            protocol(&v(&["iperf3", "-c", "h", "-u"])).as_deref(),
            Some("udp")
        );
        assert_eq!(
            protocol(&v(&["client", "h", "--coded", "-b", "100m"])).as_deref(),
            Some("coded")
        );
        assert_eq!(
            protocol(&v(&["profile", "run", "h"])).as_deref(),
            Some("profile")
        );
        assert_eq!(
            protocol(&v(&["stress", "h", "-u", "--echo"])).as_deref(),
            Some("stress")
        );
        assert_eq!(protocol(&v(&["false"])), None);
        assert_eq!(protocol(&[]), None);
    }
}
