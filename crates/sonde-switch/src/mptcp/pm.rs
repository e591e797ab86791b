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

use std::net::IpAddr;
use std::process::Command;

/// One endpoint as `ip mptcp endpoint show` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    pub addr: IpAddr,
    pub id: u32,
    pub flags: Vec<String>,
}

/// Runs `ip ARGS`; its stdout, or what went wrong.
fn ip(args: &[&str]) -> Result<String, String> {
    let out = Command::new("ip")
        .args(args)
        .output()
        .map_err(|e| format!("cannot run `ip` (iproute2): {e}"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "`ip {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        ))
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
/// `ip` is missing or cannot show them.
pub fn endpoints() -> Result<Vec<Endpoint>, String> {
    ip(&["mptcp", "endpoint", "show"]).map(|t| parse_endpoints(&t))
}

/// The id of the endpoint for `addr`, adding it (with `flags`) when there is none.
///
/// # Errors
/// Adding failed (not root, say).
pub fn ensure(addr: IpAddr, flags: &[&str]) -> Result<u32, String> {
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
        .ok_or_else(|| format!("the endpoint {addr} was added but is not listed"))
}

/// Marks endpoint `id` (and the subflows using its address) backup or not.
///
/// # Errors
/// The change failed.
pub fn set_backup(id: u32, backup: bool) -> Result<(), String> {
    let id = id.to_string();
    let flag = if backup { "backup" } else { "nobackup" };
    ip(&["mptcp", "endpoint", "change", "id", &id, flag]).map(drop)
}

/// Raises this namespace's limits so a connection may add `n` subflows and accept `n`
/// announced addresses (never lowers them).
///
/// # Errors
/// Reading or setting the limits failed.
pub fn ensure_limits(n: u32) -> Result<(), String> {
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
}
