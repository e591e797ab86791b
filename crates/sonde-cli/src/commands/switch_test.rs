//! `sonde switch-test`: the flags turned into the `sonde-switch-test` crate's configuration
//! (the server's addresses, the client's targets through sonde-platform's resolver), its
//! events on standard error, its outcome as the table or the `-J` document, and the exit code.

use super::exit;
use crate::flags::switch::SwitchTestArgs;
use crate::output::outln;
use sonde_platform::resolve::{resolve, Family as ResolveFamily};
use sonde_schema::switch_test::Start;
use sonde_stats::sink::FnSink;
use sonde_switch::policy::PolicyConfig;
use sonde_switch::{Backend, Family, Targets};
use sonde_switch_test::client::{self, ClientConfig, Outcome};
use sonde_switch_test::policy::PolicySettings;
use sonde_switch_test::schedule::Schedule;
use sonde_switch_test::server::{Server, ServerConfig};
use sonde_switch_test::{document, table, Event};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// Runs the switch-test command.
pub fn run(a: SwitchTestArgs, interrupt: &Arc<AtomicBool>) -> i32 {
    let r = if a.listen {
        serve(&a, interrupt)
    } else {
        client(&a, interrupt)
    };
    match r {
        Ok(code) => code,
        Err(e) => {
            let text = error_text(e.as_ref());
            // A client that failed before it measured still writes its document, saying why.
            if a.json && !a.listen {
                let doc = document::failed_before_measuring(start(&a), &text);
                crate::output::document(std::io::stdout(), &sonde_schema::to_value(&doc));
            }
            eprintln!("sonde: error - {text}");
            exit::FAILED
        }
    }
}

/// `e` and its causes, each once: an I/O error's text often already holds its cause, and
/// `{:#}` would print it twice ("refused (os error 111): refused (os error 111)").
fn error_text(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = String::new();
    let mut cause = Some(e);
    while let Some(c) = cause {
        let c_text = c.to_string();
        if !text.contains(&c_text) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&c_text);
        }
        cause = c.source();
    }
    text
}

fn backend(a: &SwitchTestArgs) -> Backend {
    if a.backend == "mptcp" {
        Backend::Mptcp
    } else {
        Backend::Framed
    }
}

/// What the run tells on standard error as it goes.
fn say(e: &Event) {
    match e {
        Event::Served { bytes } => {
            eprintln!("sonde switch-test: {bytes} bytes received, hash sent")
        }
        Event::TestFailed(e) => {
            eprintln!("sonde switch-test: a test failed - {}", error_text(e));
        }
        Event::CloseFailed(e) => {
            eprintln!("sonde switch-test: warning - closing the connection: {e}");
        }
    }
}

fn serve(a: &SwitchTestArgs, interrupt: &AtomicBool) -> anyhow::Result<i32> {
    let addrs = match (backend(a), a.v4, a.v6) {
        (Backend::Framed, _, _) => [
            SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), a.port),
            SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), a.port),
        ],
        // MPTCP listens on all addresses but must announce real ones.
        (Backend::Mptcp, Some(v4), Some(v6)) => [
            SocketAddr::new(IpAddr::V4(v4), a.port),
            SocketAddr::new(IpAddr::V6(v6), a.port),
        ],
        (Backend::Mptcp, _, _) => anyhow::bail!(
            "--listen --backend mptcp needs --v4 and --v6: the addresses to announce to clients"
        ),
    };
    let server = Server::bind(ServerConfig {
        backend: backend(a),
        addrs,
        interval: Duration::from_secs_f64(a.more.interval),
        one_off: a.one_off,
    })?;
    eprintln!(
        "sonde switch-test: listening on port {} (IPv4 and IPv6)",
        a.port
    );
    server.run(interrupt, &mut FnSink(say))?;
    Ok(exit::OK)
}

/// The server's address per family: HOST looked up through sonde-platform's resolver
/// (bounded in time, and left at Ctrl-C), then `--v4` / `--v6` where given.
fn targets(a: &SwitchTestArgs, interrupt: &AtomicBool) -> anyhow::Result<Targets> {
    let mut t = match &a.host {
        // The error's text already holds its cause; `{:#}` would print that twice.
        Some(h) => Targets::from_addrs(
            &resolve(h, a.port, ResolveFamily::Any, interrupt)
                .map_err(|e| anyhow::anyhow!("{e}"))?,
        ),
        None => Targets::default(),
    };
    if let Some(v4) = a.v4 {
        t.v4 = Some(SocketAddr::new(IpAddr::V4(v4), a.port));
    }
    if let Some(v6) = a.v6 {
        t.v6 = Some(SocketAddr::new(IpAddr::V6(v6), a.port));
    }
    if t.v4.is_none() || t.v6.is_none() {
        let has =
            |a: Option<SocketAddr>| a.map_or_else(|| "none".to_owned(), |a| a.ip().to_string());
        anyhow::bail!(
            "switch-test needs an IPv4 and an IPv6 address of the server; {} has IPv4 {}, IPv6 {} (give --v4 and --v6)",
            a.host.as_deref().unwrap_or("the command line"),
            has(t.v4),
            has(t.v6)
        );
    }
    Ok(t)
}

/// `--policy FILE` and its thresholds.
fn policy(a: &SwitchTestArgs) -> Option<PolicySettings> {
    let p = &a.policy;
    p.policy.as_ref().map(|file| PolicySettings {
        file: file.clone(),
        config: PolicyConfig {
            margin_pct: p.margin,
            min_confidence: p.min_confidence,
            confirm: p.confirm,
            hold: Duration::from_secs_f64(p.hold),
        },
    })
}

fn client(a: &SwitchTestArgs, interrupt: &AtomicBool) -> anyhow::Result<i32> {
    let cfg = ClientConfig {
        backend: backend(a),
        targets: targets(a, interrupt)?,
        start: if a.start == "6" {
            Family::V6
        } else {
            Family::V4
        },
        time: Duration::from_secs_f64(a.time),
        schedule: Schedule::new(a.every, &a.more.at),
        switches: a.more.switches,
        policy: policy(a),
    };
    let o = client::run(&cfg, interrupt, &mut FnSink(say))?;
    Ok(report(a, &o))
}

/// Prints the run's table or document, says why it failed once on stderr; the exit code.
fn report(a: &SwitchTestArgs, o: &Outcome) -> i32 {
    if a.json {
        let doc = document::document(start(a), o);
        crate::output::document(std::io::stdout(), &sonde_schema::to_value(&doc));
    } else {
        let _whole = crate::signals::writing();
        for line in table::lines(o) {
            outln!("{line}");
        }
    }
    // Cut short by a signal, the transfer did not reach its end: that is not a pass.
    let Some(why) = o.failure() else {
        return exit::OK;
    };
    crate::output::run_error(&why, o.error.is_none() && o.interrupted);
    exit::FAILED
}

/// The run's parameters, the document's `start`.
fn start(a: &SwitchTestArgs) -> Start {
    Start {
        host: a.host.clone(),
        port: a.port,
        backend: a.backend.clone(),
        time: a.time,
        every: a.every,
        start_family: a.start.clone(),
        switches: a.more.switches,
        at: a.more.at.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::error_text;

    #[derive(Debug)]
    struct Outer(std::io::Error);
    impl std::fmt::Display for Outer {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "connecting: {}", self.0)
        }
    }
    impl std::error::Error for Outer {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.0)
        }
    }

    #[test]
    fn a_cause_already_in_the_text_is_said_once() {
        let e = Outer(std::io::Error::other("refused"));
        assert_eq!(error_text(&e), "connecting: refused");
        let e = anyhow::Error::from(std::io::Error::other("refused")).context("dialling");
        assert_eq!(error_text(e.as_ref()), "dialling: refused");
    }
}
