//! The agent's lookups of its peers' names, and what it does when the name servers stop
//! answering.
//!
//! A fleet's DNS goes away now and then (a cluster's DNS pods restarting, a site's resolver
//! down) while the paths the agent measures are fine. Failing every run to a named peer then
//! would show a network outage that is not there, and waiting out the resolver's time-outs
//! before each run would stall the schedule for every peer. So a lookup is waited for at
//! most [`LOOKUP_WAIT`] (`sonde_platform::resolve` lets one lookup per name run on and joins
//! it); when the name servers give no answer, the addresses the name last had are measured
//! for up to [`LAST_KNOWN_FOR`], said once in the log, and said again when answers return. A
//! name the servers answer has no address for (NXDOMAIN) is no outage: its runs fail.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use sonde_platform::resolve::{is_no_answer, resolve_within, Family, ResolveError};
use sonde_runtime::RunError;

/// The longest a run waits for its peer's name before it falls back (or fails).
pub const LOOKUP_WAIT: Duration = Duration::from_secs(3);

/// How long the last answer for a name is measured while the name servers do not answer.
pub const LAST_KNOWN_FOR: Duration = Duration::from_secs(3600);

/// A name's last answer.
#[derive(Debug, Clone)]
struct Answer {
    addrs: Vec<SocketAddr>,
    at: Instant,
}

/// What a lookup gave the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// The name servers' answer now.
    Fresh(Vec<SocketAddr>),
    /// No answer now: the name's last addresses, this old.
    LastKnown(Vec<SocketAddr>, Duration),
}

impl Found {
    pub fn addrs(&self) -> &[SocketAddr] {
        match self {
            Found::Fresh(a) | Found::LastKnown(a, _) => a,
        }
    }
}

/// The last answers, by name, port and family.
#[derive(Debug, Default)]
pub struct Names {
    answers: HashMap<(String, u16, Family), Answer>,
    /// Names whose last-known fallback is said in the log (said once, until answers return).
    stale: HashSet<(String, u16, Family)>,
}

/// What to do with one lookup's result, given the name's last answer: the pure part.
fn decide(
    result: Result<Vec<SocketAddr>, ResolveError>,
    last: Option<&Answer>,
    now: Instant,
) -> Result<Found, ResolveError> {
    match result {
        Ok(addrs) => Ok(Found::Fresh(addrs)),
        Err(e) if is_no_answer(&e) => match last {
            Some(a) if now.saturating_duration_since(a.at) <= LAST_KNOWN_FOR => Ok(
                Found::LastKnown(a.addrs.clone(), now.saturating_duration_since(a.at)),
            ),
            _ => Err(e),
        },
        Err(e) => Err(e),
    }
}

impl Names {
    /// `host`'s addresses of `family`: fresh, or its last when the name servers do not
    /// answer (said in `log` once per outage).
    ///
    /// # Errors
    /// The name has no address, or the servers do not answer and its last answer is older
    /// than [`LAST_KNOWN_FOR`] or there is none; [`RunError::Interrupted`] on Ctrl-C.
    pub fn lookup(
        &mut self,
        host: &str,
        port: u16,
        family: Family,
        interrupt: &AtomicBool,
        log: &dyn Fn(&str),
    ) -> Result<Found, RunError> {
        let key = (host.to_string(), port, family);
        let result = resolve_within(host, port, family, LOOKUP_WAIT, interrupt);
        if matches!(result, Err(ResolveError::Interrupted)) {
            return result.map(Found::Fresh).map_err(RunError::from);
        }
        let now = Instant::now();
        let found = decide(result, self.answers.get(&key), now).map_err(RunError::from);
        match &found {
            Ok(Found::Fresh(addrs)) => {
                if self.stale.remove(&key) {
                    log(&format!("the name servers answer for {host} again"));
                }
                self.answers.insert(
                    key,
                    Answer {
                        addrs: addrs.clone(),
                        at: now,
                    },
                );
            }
            Ok(Found::LastKnown(addrs, age)) => {
                if self.stale.insert(key) {
                    let list: Vec<String> = addrs.iter().map(|a| a.ip().to_string()).collect();
                    log(&format!(
                        "the name servers do not answer for {host}: measuring its last known address{} {} (from {:.0} s ago) until they do, for at most {} min",
                        if addrs.len() == 1 { "" } else { "es" },
                        list.join(", "),
                        age.as_secs_f64(),
                        LAST_KNOWN_FOR.as_secs() / 60
                    ));
                }
            }
            Err(_) => {}
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn no_answer() -> ResolveError {
        ResolveError::Failed {
            host: "peer".into(),
            source: std::io::Error::new(std::io::ErrorKind::TimedOut, "no answer"),
        }
    }

    fn no_such_name() -> ResolveError {
        ResolveError::Failed {
            host: "peer".into(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no address"),
        }
    }

    #[test]
    fn the_last_answer_stands_in_while_the_servers_are_silent_and_not_for_ever() {
        let t0 = Instant::now();
        let addr: SocketAddr = "10.0.0.2:5201".parse().unwrap();
        let last = Answer {
            addrs: vec![addr],
            at: t0,
        };
        assert_eq!(
            decide(Ok(vec![addr]), Some(&last), t0).unwrap(),
            Found::Fresh(vec![addr])
        );
        let later = t0 + Duration::from_secs(90);
        assert_eq!(
            decide(Err(no_answer()), Some(&last), later).unwrap(),
            Found::LastKnown(vec![addr], Duration::from_secs(90))
        );
        // Nothing known, or known too long ago: the run fails with the lookup's error.
        assert!(decide(Err(no_answer()), None, later).is_err());
        let too_late = t0 + LAST_KNOWN_FOR + Duration::from_secs(1);
        assert!(decide(Err(no_answer()), Some(&last), too_late).is_err());
        // A name the servers say has no address is not an outage of theirs.
        assert!(decide(Err(no_such_name()), Some(&last), later).is_err());
        // Glibc's own time-outs passing reads as no answer too.
        let again = ResolveError::Failed {
            host: "peer".into(),
            source: std::io::Error::other(
                "failed to lookup address information: Temporary failure in name resolution",
            ),
        };
        assert!(decide(Err(again), Some(&last), later).is_ok());
    }

    #[test]
    fn addresses_resolve_fresh_and_are_remembered() {
        let mut names = Names::default();
        let no = AtomicBool::new(false);
        let f = names
            .lookup("127.0.0.1", 9, Family::Any, &no, &|_| {})
            .unwrap();
        assert_eq!(f, Found::Fresh(vec!["127.0.0.1:9".parse().unwrap()]));
        assert_eq!(names.answers.len(), 1);
    }
}
