//! The kernel's in-kernel path manager, through `ip mptcp` (iproute2).
//!
//! What this kernel (6.x) supports and the backend uses: endpoints are per network namespace
//! (`ip mptcp endpoint add ADDR [signal] [backup]`); a `signal` endpoint on the server
//! announces that address (ADD_ADDR), and a client whose `add_addr_accepted` and `subflows`
//! limits allow it opens a subflow to it - of the other family too, on a dual-stack AF_INET6
//! socket. `ip mptcp endpoint change id N backup|nobackup` marks every subflow whose local
//! address is that endpoint's and sends MP_PRIO, so both ends stop sending on it while a
//! non-backup subflow is up: that is the switch. The flags are namespace-wide (every MPTCP
//! connection using that local address follows them) and changing them needs
//! CAP_NET_ADMIN. A netlink client of the path manager would avoid running `ip`; the
//! userspace path manager (`net.mptcp.pm_type=1`) would make the flags per connection, at
//! the price of managing every subflow by hand.

use std::io::Read;
use std::net::IpAddr;
use std::process::{Command, Stdio};
use std::time::Duration;
use thiserror::Error;

/// How long one `ip mptcp` command may run. Each is one netlink request the kernel answers at
/// once (a few milliseconds with the process start); one still running after this is stuck,
/// and a switch or bind waiting on it would hang the caller.
pub const IP_TIMEOUT: Duration = Duration::from_secs(5);

/// What went wrong with the path manager.
#[derive(Debug, Error)]
pub enum PmError {
    #[error("cannot run `{command}` (is iproute2 installed?): {source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    #[error("`{command}` failed ({status}): {stderr}")]
    Failed {
        command: String,
        status: String,
        stderr: String,
    },
    #[error("`{command}` did not finish within {} s and was killed", .after.as_secs())]
    TimedOut { command: String, after: Duration },
    #[error("the endpoint {0} was added but `ip mptcp endpoint show` does not list it")]
    NotListed(IpAddr),
    #[error(
        "no {family} subflow joined within {} ms: the server must announce an {family} \
         address (ip mptcp endpoint add ADDR signal) and this host accept it (ip mptcp limits \
         set subflows 2 add_addr_accepted 2); subflows now (local, remote): {subflows:?}",
        .waited.as_millis()
    )]
    NoSubflow {
        family: &'static str,
        waited: Duration,
        subflows: Vec<(IpAddr, IpAddr)>,
    },
}

/// One endpoint as `ip mptcp endpoint show` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub addr: IpAddr,
    pub id: u32,
    pub flags: Vec<String>,
}

/// Runs `ip ARGS` and returns its stdout; kills it after [`IP_TIMEOUT`].
fn ip(args: &[&str]) -> Result<String, PmError> {
    ip_within(args, IP_TIMEOUT)
}

/// Runs `ip ARGS`, killed at `timeout`. The pipes are read on a helper thread, whose end
/// (both pipes closed: the command exited) is what this waits for, so a command that
/// finishes is seen at once rather than at the next poll.
fn ip_within(args: &[&str], timeout: Duration) -> Result<String, PmError> {
    let command = format!("ip {}", args.join(" "));
    let mut child = Command::new("ip")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| PmError::Spawn {
            command: command.clone(),
            source,
        })?;
    let (out, err) = (child.stdout.take(), child.stderr.take());
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let (mut o, mut e) = (Vec::new(), Vec::new());
        // `ip` writes a few lines at most, far below a pipe's buffer, so reading one pipe
        // to its end before the other cannot block the command.
        if let Some(mut p) = out {
            let _ = p.read_to_end(&mut o);
        }
        if let Some(mut p) = err {
            let _ = p.read_to_end(&mut e);
        }
        let _ = tx.send((o, e));
    });
    let Ok((stdout, stderr)) = rx.recv_timeout(timeout) else {
        let _ = child.kill();
        let _ = child.wait();
        return Err(PmError::TimedOut {
            command,
            after: timeout,
        });
    };
    let status = child.wait().map_err(|source| PmError::Spawn {
        command: command.clone(),
        source,
    })?;
    if status.success() {
        Ok(String::from_utf8_lossy(&stdout).into_owned())
    } else {
        Err(PmError::Failed {
            command,
            status: status.to_string(),
            stderr: String::from_utf8_lossy(&stderr).trim().to_owned(),
        })
    }
}

/// Parses `ip mptcp endpoint show`: lines of `ADDR [port P] id N [flags...] [dev D]`.
pub fn parse_endpoints(text: &str) -> Vec<Endpoint> {
    text.lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let addr = words.next()?.parse().ok()?;
            let mut id = None;
            let mut flags = Vec::new();
            let mut words = words.peekable();
            while let Some(w) = words.next() {
                match w {
                    "id" => id = words.next().and_then(|v| v.parse().ok()),
                    "port" | "dev" => {
                        words.next();
                    }
                    f => flags.push(f.to_string()),
                }
            }
            Some(Endpoint {
                addr,
                id: id?,
                flags,
            })
        })
        .collect()
}

/// The endpoints of this network namespace.
///
/// # Errors
/// `ip` is missing, fails or hangs.
pub fn endpoints() -> Result<Vec<Endpoint>, PmError> {
    ip(&["mptcp", "endpoint", "show"]).map(|t| parse_endpoints(&t))
}

/// The id of the endpoint for `addr`, adding it (with `flags`) when there is none.
///
/// # Errors
/// Adding failed (not root, say), or `ip` is missing or hangs.
pub fn ensure(addr: IpAddr, flags: &[&str]) -> Result<u32, PmError> {
    if let Some(e) = endpoints()?.into_iter().find(|e| e.addr == addr) {
        return Ok(e.id);
    }
    let a = addr.to_string();
    let mut args = vec!["mptcp", "endpoint", "add", a.as_str()];
    args.extend_from_slice(flags);
    ip(&args)?;
    endpoints()?
        .into_iter()
        .find(|e| e.addr == addr)
        .map(|e| e.id)
        .ok_or(PmError::NotListed(addr))
}

/// Marks endpoint `id` (and the subflows using its address) backup or not.
///
/// # Errors
/// The change failed (not root, say), or `ip` is missing or hangs.
pub fn set_backup(id: u32, backup: bool) -> Result<(), PmError> {
    let id = id.to_string();
    let flag = if backup { "backup" } else { "nobackup" };
    ip(&["mptcp", "endpoint", "change", "id", &id, flag]).map(drop)
}

/// Raises this namespace's limits so a connection may add `n` subflows and accept `n`
/// announced addresses (never lowers them).
///
/// # Errors
/// Reading or setting the limits failed, or `ip` is missing or hangs.
pub fn ensure_limits(n: u32) -> Result<(), PmError> {
    let text = ip(&["mptcp", "limits", "show"])?;
    let get = |key: &str| -> u32 {
        let mut w = text.split_whitespace();
        while let Some(x) = w.next() {
            if x == key {
                return w.next().and_then(|v| v.parse().ok()).unwrap_or(0);
            }
        }
        0
    };
    let (sub, acc) = (get("subflows"), get("add_addr_accepted"));
    if sub >= n && acc >= n {
        return Ok(());
    }
    let (sub, acc) = (sub.max(n).to_string(), acc.max(n).to_string());
    ip(&[
        "mptcp",
        "limits",
        "set",
        "subflows",
        &sub,
        "add_addr_accepted",
        &acc,
    ])
    .map(drop)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoint_lines_parse() {
        let t = "::1 id 1 signal \n127.0.0.1 id 2 subflow backup \n10.0.0.1 port 80 id 3 signal dev eth0\n";
        let e = parse_endpoints(t);
        assert_eq!(e.len(), 3);
        assert_eq!(e[0].addr, "::1".parse::<IpAddr>().unwrap());
        assert_eq!(
            (e[1].id, e[1].flags.clone()),
            (2, vec!["subflow".into(), "backup".into()])
        );
        assert_eq!(
            (e[2].id, e[2].flags.clone()),
            (3, vec!["signal".to_string()])
        );
    }

    /// `ip monitor` runs until killed: the timeout must end it and say so. `ip -batch -`
    /// reads its commands from stdin, here /dev/null, so it ends at once and succeeds.
    #[test]
    fn a_command_that_hangs_is_killed_at_the_timeout() {
        if Command::new("ip").arg("-V").output().is_err() {
            // iproute2 is part of the bare machine the README promises; CI must not skip.
            assert!(
                std::env::var("SONDE_REQUIRE_ALL").as_deref() != Ok("1"),
                "SONDE_REQUIRE_ALL=1 but there is no `ip` (iproute2) to run"
            );
            return eprintln!("skipped: no `ip` (iproute2) on PATH");
        }
        let t0 = std::time::Instant::now();
        let r = ip_within(&["monitor", "link"], Duration::from_millis(200));
        assert!(matches!(r, Err(PmError::TimedOut { .. })), "{r:?}");
        assert!(t0.elapsed() < Duration::from_secs(3), "{:?}", t0.elapsed());
        let r = ip_within(&["-batch", "-"], Duration::from_secs(5));
        assert!(r.is_ok(), "{r:?}");
        let r = ip_within(&["no-such-object"], Duration::from_secs(5));
        assert!(matches!(r, Err(PmError::Failed { .. })), "{r:?}");
    }
}
