//! Name resolution: the one place sonde asks the system resolver (`getaddrinfo`, through
//! [`ToSocketAddrs`]) for a host's addresses, restricted to the family `-4` / `-6` asked for.
//!
//! The sonde and iperf3 clients, `sonde latency`, `sonde rrul`, `sonde compare-ip` and the
//! agent all resolve here, after their flags are parsed, so every tool filters families and
//! reports a failed lookup the same way.
//!
//! `getaddrinfo` blocks and cannot be cancelled: with a name server that does not answer it
//! waits out the resolver's own time-outs (`resolv.conf`: 5 s per try, two tries per server
//! by default, longer where an operator set them so). A measuring tool must not hang there:
//! Ctrl-C or an agent's SIGTERM would go unheard for that long. So the lookup runs on a
//! thread of its own while the caller waits for at most [`LOOKUP_LIMIT`], looking at its
//! interrupt flag every `SLICE`. A lookup given up on ends on its own when the resolver
//! does; until then, asking for the same name joins it rather than starting another, and at
//! most [`MAX_UNANSWERED`] names may be under way, so a dead resolver cannot pile up threads.
//! Addresses written as addresses are never looked up.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};
use thiserror::Error;

/// The longest a lookup may take: past the system resolver's default worst case with one
/// server (two tries of 5 s), short enough that a schedule or a user is not held long.
pub const LOOKUP_LIMIT: Duration = Duration::from_secs(15);

/// How often a waiting caller looks at its interrupt flag.
const SLICE: Duration = Duration::from_millis(50);

/// Names being looked up at once, at most (one thread each).
pub const MAX_UNANSWERED: usize = 8;

/// Address family restriction (`-4` / `-6`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Family {
    #[default]
    Any,
    V4,
    V6,
}

/// Why a lookup gave no addresses (the runtime's `RunError` takes it in with the same text).
#[derive(Debug, Error)]
pub enum ResolveError {
    /// Nothing matches, the resolver failed or did not answer in time, or too many earlier
    /// lookups are still unanswered ([`is_no_answer`] tells the silent resolver apart).
    #[error("cannot resolve host \"{host}\": {source}")]
    Failed {
        host: String,
        source: std::io::Error,
    },
    /// The caller's interrupt flag (Ctrl-C, SIGTERM or SIGHUP) was raised while waiting.
    #[error("interrupted")]
    Interrupted,
}

/// Resolves `host` to addresses of the wanted family, giving up after [`LOOKUP_LIMIT`].
///
/// # Errors
/// [`ResolveError::Interrupted`] when `interrupt` is raised while the resolver has not
/// answered; [`ResolveError::Failed`] when nothing matches, the resolver did not answer in
/// time, or too many earlier lookups are still unanswered.
pub fn resolve(
    host: &str,
    port: u16,
    family: Family,
    interrupt: &AtomicBool,
) -> Result<Vec<SocketAddr>, ResolveError> {
    resolve_within(host, port, family, LOOKUP_LIMIT, interrupt)
}

/// [`resolve`] with a limit of the caller's.
///
/// # Errors
/// As [`resolve`].
pub fn resolve_within(
    host: &str,
    port: u16,
    family: Family,
    limit: Duration,
    interrupt: &AtomicBool,
) -> Result<Vec<SocketAddr>, ResolveError> {
    let fail = |source: std::io::Error| ResolveError::Failed {
        host: host.to_string(),
        source,
    };
    let found = match literal(host) {
        Some(ip) => vec![SocketAddr::new(ip, port)],
        None => look_up(host, port, limit, interrupt)?.map_err(fail)?,
    };
    let v: Vec<SocketAddr> = found
        .into_iter()
        .filter(|a| match family {
            Family::Any => true,
            Family::V4 => a.is_ipv4(),
            Family::V6 => a.is_ipv6(),
        })
        .collect();
    if v.is_empty() {
        let fam = match family {
            Family::V4 => " IPv4",
            Family::V6 => " IPv6",
            Family::Any => "",
        };
        return Err(fail(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!("no{fam} address"),
        )));
    }
    Ok(v)
}

/// An address written as one (`192.0.2.1`, `2001:db8::1`, `[2001:db8::1]`).
fn literal(host: &str) -> Option<IpAddr> {
    let bare = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    bare.parse().ok()
}

/// A lookup under way: its answer once the resolver gives it, and when it was asked.
struct Pending {
    answer: Mutex<Option<std::io::Result<Vec<SocketAddr>>>>,
    answered: Condvar,
    asked: Instant,
}

type UnderWay = HashMap<String, Arc<Pending>>;

/// The lookups under way, by name (looked up at port 0; each caller's port is set on the
/// answer): a caller asking for a name already being looked
/// up waits for that lookup (within its limit, counted from when it was asked) instead of
/// starting another, so a name server that does not answer costs one thread per name.
fn under_way() -> MutexGuard<'static, UnderWay> {
    static MAP: OnceLock<Mutex<UnderWay>> = OnceLock::new();
    MAP.get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
}

/// The lookup of `host` under way, or a new one started on a thread of its own.
fn join_or_start(host: &str) -> std::io::Result<Arc<Pending>> {
    let key = host.to_string();
    let mut map = under_way();
    if let Some(p) = map.get(&key) {
        return Ok(p.clone());
    }
    if map.len() >= MAX_UNANSWERED {
        return Err(std::io::Error::new(
            std::io::ErrorKind::WouldBlock,
            format!(
                "{} other lookups are still unanswered: the system's name servers are not answering",
                map.len()
            ),
        ));
    }
    let pending = Arc::new(Pending {
        answer: Mutex::new(None),
        answered: Condvar::new(),
        asked: Instant::now(),
    });
    let theirs = pending.clone();
    let thread_key = key.clone();
    std::thread::Builder::new()
        .name("sonde-lookup".into())
        .spawn(move || {
            let found = (thread_key.as_str(), 0)
                .to_socket_addrs()
                .map(Iterator::collect::<Vec<_>>);
            under_way().remove(&thread_key);
            *theirs.answer.lock().unwrap_or_else(PoisonError::into_inner) = Some(found);
            theirs.answered.notify_all();
        })?;
    map.insert(key, pending.clone());
    Ok(pending)
}

/// Asks the system resolver (or joins the lookup of the same name under way); the outer
/// error ends the wait (interrupt), the inner one is the lookup's.
fn look_up(
    host: &str,
    port: u16,
    limit: Duration,
    interrupt: &AtomicBool,
) -> Result<std::io::Result<Vec<SocketAddr>>, ResolveError> {
    let pending = match join_or_start(host) {
        Ok(p) => p,
        Err(e) => return Ok(Err(e)),
    };
    let called = Instant::now();
    let deadline = (called + limit).min(pending.asked + limit);
    let mut answer = pending
        .answer
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    loop {
        // A caller told to stop stops, answer or not.
        if interrupt.load(Ordering::Relaxed) {
            return Err(ResolveError::Interrupted);
        }
        if let Some(found) = answer.as_ref() {
            return Ok(match found {
                Ok(v) => Ok(v.iter().map(|a| SocketAddr::new(a.ip(), port)).collect()),
                Err(e) => Err(std::io::Error::new(e.kind(), e.to_string())),
            });
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!(
                    "the system's name servers gave no answer within {} s{}",
                    limit.as_secs_f64(),
                    // Joined a lookup asked before this call.
                    if called.duration_since(pending.asked) >= SLICE {
                        format!(
                            " (asked {:.0} s ago, still unanswered)",
                            pending.asked.elapsed().as_secs_f64()
                        )
                    } else {
                        String::new()
                    }
                ),
            )));
        }
        answer = pending
            .answered
            .wait_timeout(answer, left.min(SLICE))
            .unwrap_or_else(PoisonError::into_inner)
            .0;
    }
}

/// Whether `e` says the name servers did not answer (rather than that the name has no
/// address): the lookup's limit passed, too many lookups were unanswered, or the resolver's
/// own time-outs passed (EAI_AGAIN). The standard library keeps only the text of a
/// `getaddrinfo` failure, not its code, so EAI_AGAIN is known by its text: glibc's and musl's
/// (sonde never sets a locale, so it is never translated).
pub fn is_no_answer(e: &ResolveError) -> bool {
    let ResolveError::Failed { source, .. } = e else {
        return false;
    };
    let text = source.to_string();
    matches!(
        source.kind(),
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
    ) || text.contains("Temporary failure in name resolution")
        || text.ends_with(": Try again")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_taken_as_written_and_filtered_by_family() {
        let no = AtomicBool::new(false);
        let v4 = resolve("192.0.2.7", 5201, Family::Any, &no).unwrap();
        assert_eq!(v4, vec!["192.0.2.7:5201".parse().unwrap()]);
        let v6 = resolve("[2001:db8::7]", 9, Family::V6, &no).unwrap();
        assert_eq!(v6, vec!["[2001:db8::7]:9".parse().unwrap()]);
        let wrong = resolve("192.0.2.7", 5201, Family::V6, &no).unwrap_err();
        assert!(wrong.to_string().contains("no IPv6 address"), "{wrong}");
    }

    #[test]
    fn a_resolver_that_did_not_answer_is_told_from_a_name_without_address() {
        let err = |text: &str| ResolveError::Failed {
            host: "peer.example".into(),
            source: std::io::Error::other(format!("failed to lookup address information: {text}")),
        };
        // glibc's and musl's texts for EAI_AGAIN, and the lookup's own limit.
        assert!(is_no_answer(&err("Temporary failure in name resolution")));
        assert!(is_no_answer(&err("Try again")));
        assert!(is_no_answer(&ResolveError::Failed {
            host: "peer.example".into(),
            source: std::io::Error::new(std::io::ErrorKind::TimedOut, "no answer"),
        }));
        // EAI_NONAME (glibc, musl): the name servers answered that there is no such name.
        assert!(!is_no_answer(&err("Name or service not known")));
        assert!(!is_no_answer(&err("Name does not resolve")));
        assert!(!is_no_answer(&ResolveError::Interrupted));
    }

    #[test]
    fn a_raised_flag_stops_a_lookup_answered_or_not() {
        // Whether or not the hosts file answered first, a caller told to stop stops. (Ending
        // a wait for a silent name server is tested with one: agent_fleet in the sonde tests.)
        let yes = AtomicBool::new(true);
        assert!(matches!(
            resolve("localhost", 1, Family::Any, &yes),
            Err(ResolveError::Interrupted)
        ));
    }

    #[test]
    fn localhost_resolves() {
        let no = AtomicBool::new(false);
        let v = resolve("localhost", 7, Family::Any, &no).unwrap();
        assert!(
            v.iter().all(|a| a.ip().is_loopback() && a.port() == 7),
            "{v:?}"
        );
    }
}
