//! Network namespaces: the privilege check, creation and removal, entering one from a thread,
//! and cleaning up after a lab that was killed.
//!
//! Namespaces are created with `ip netns add`, so they are named bind mounts under
//! `/run/netns` that `ip netns list` shows and an engineer can enter by hand while a lab runs.
//! The forwarder enters a box namespace with `setns(2)` on its own thread: for `CLONE_NEWNET`
//! this changes only the calling thread, and sockets keep the namespace they were created in,
//! so no helper process is needed. Sysctls are written the same way, through `/proc/sys` from
//! a thread inside the namespace ([`run_in`]), so the lab does not need procps.
//!
//! A namespace may also get its own hosts file (`write_hosts`): `ip netns exec NAME`
//! mounts `/etc/netns/NAME/hosts` over `/etc/hosts` for the program it starts, so the system
//! resolver there finds the lab's node names. Deleting the namespace removes that directory,
//! which `ip netns del` leaves behind.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::PathBuf;

use crate::cmd;
use crate::error::LabError;
use crate::topology::check_prefix;

/// Where `ip netns` keeps its named namespaces.
const NETNS_DIR: &str = "/run/netns";
/// Where `ip netns exec` looks for a namespace's own `/etc` files.
const ETC_DIR: &str = "/etc/netns";

const CAP_NET_ADMIN: u32 = 12;
const CAP_SYS_ADMIN: u32 = 21;

/// Checks that the process may create namespaces and qdiscs (CAP_NET_ADMIN and CAP_SYS_ADMIN
/// in its effective set, which root has).
///
/// # Errors
/// [`LabError::NotPrivileged`] naming what is missing.
pub fn check_privileges() -> Result<(), LabError> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let eff = status
        .lines()
        .find_map(|l| l.strip_prefix("CapEff:"))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        .unwrap_or(0);
    let missing: Vec<&str> = [
        (CAP_NET_ADMIN, "CAP_NET_ADMIN"),
        (CAP_SYS_ADMIN, "CAP_SYS_ADMIN"),
    ]
    .into_iter()
    .filter(|(bit, _)| eff & (1 << bit) == 0)
    .map(|(_, name)| name)
    .collect();
    if missing.is_empty() {
        Ok(())
    } else {
        Err(LabError::NotPrivileged {
            missing: missing.join(" and "),
        })
    }
}

/// The names of every named network namespace.
///
/// # Errors
/// [`LabError`] when `ip netns list` fails.
pub fn list() -> Result<Vec<String>, LabError> {
    let out = cmd::ip(&["netns", "list"])?;
    // Lines look like "name" or "name (id: 3)".
    Ok(out
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect())
}

/// True when a namespace of that name exists.
pub fn exists(name: &str) -> bool {
    path(name).exists()
}

fn path(name: &str) -> PathBuf {
    PathBuf::from(NETNS_DIR).join(name)
}

fn etc_path(name: &str) -> PathBuf {
    PathBuf::from(ETC_DIR).join(name)
}

/// Gives namespace `name` the hosts file `text`, which programs started there with
/// `ip netns exec` (and so [`crate::Lab::command`]) read instead of `/etc/hosts`.
///
/// # Errors
/// [`LabError::Os`] when the directory or the file cannot be written (a read-only `/etc`).
pub(crate) fn write_hosts(name: &str, text: &str) -> Result<(), LabError> {
    let dir = etc_path(name);
    std::fs::create_dir_all(&dir)
        .map_err(|e| LabError::os(format!("creating {}", dir.display()), name, e))?;
    let file = dir.join("hosts");
    std::fs::write(&file, text)
        .map_err(|e| LabError::os(format!("writing {}", file.display()), name, e))
}

/// Removes namespace `name`'s `/etc/netns` directory if it has one, and `/etc/netns` itself
/// when that leaves it empty (as it was before the lab, on most machines).
fn remove_etc(name: &str) -> Result<(), LabError> {
    let dir = etc_path(name);
    if !dir.exists() {
        return Ok(());
    }
    std::fs::remove_dir_all(&dir)
        .map_err(|e| LabError::os(format!("removing {}", dir.display()), name, e))?;
    // Fails harmlessly while another lab (or the administrator) keeps files there.
    let _ = std::fs::remove_dir(ETC_DIR);
    Ok(())
}

/// Creates namespace `name` with its loopback up. When the namespace is made but its loopback
/// cannot be brought up, it is deleted again: the caller records a namespace only once this
/// returns `Ok`, so one left here would outlive the lab.
///
/// # Errors
/// [`LabError::NamespaceExists`] when taken; [`LabError::Command`] when `ip` fails.
pub(crate) fn create(name: &str) -> Result<(), LabError> {
    if exists(name) {
        return Err(LabError::NamespaceExists(name.to_owned()));
    }
    cmd::ip(&["netns", "add", name])?;
    if let Err(e) = cmd::ip_in(name, &["link", "set", "lo", "up"]) {
        let _ = delete(name);
        return Err(e);
    }
    Ok(())
}

/// Kills every process left in namespace `name` (tests or commands the lab started there),
/// then deletes it; its interfaces go with it.
///
/// # Errors
/// [`LabError::Command`] when `ip netns del` fails.
pub(crate) fn delete(name: &str) -> Result<(), LabError> {
    if let Ok(pids) = cmd::ip(&["netns", "pids", name]) {
        for pid in pids.lines().filter_map(|p| p.trim().parse::<i32>().ok()) {
            // SAFETY: kill(2) has no memory effects; the pid lives in a namespace this lab made.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
            }
        }
    }
    let deleted = cmd::ip(&["netns", "del", name]).map(|_| ());
    let etc = remove_etc(name);
    deleted.and(etc)
}

/// Moves the calling thread into namespace `name`. Call it on a thread of its own (one the
/// caller spawned for the purpose): sockets it then creates live in that namespace, which is
/// how in-process tests send and receive inside a lab.
///
/// # Errors
/// [`LabError::Os`] when the namespace cannot be opened or entered.
pub fn enter(name: &str) -> Result<(), LabError> {
    let file = File::open(path(name)).map_err(|e| LabError::os("open the namespace", name, e))?;
    // SAFETY: a valid fd to a namespace file; CLONE_NEWNET affects only this thread.
    let rc = unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) };
    if rc != 0 {
        return Err(LabError::os("setns", name, std::io::Error::last_os_error()));
    }
    Ok(())
}

/// Runs `f` on a new thread inside namespace `name` and returns its result: sockets `f`
/// creates, and files under `/proc/sys/net` it opens, belong to that namespace.
///
/// # Errors
/// [`LabError::Os`] when the namespace cannot be entered, [`LabError::ThreadPanicked`] when
/// `f` panicked.
pub fn run_in<T: Send>(name: &str, f: impl FnOnce() -> T + Send) -> Result<T, LabError> {
    std::thread::scope(|s| {
        s.spawn(|| {
            enter(name)?;
            Ok(f())
        })
        .join()
        .map_err(|_| LabError::ThreadPanicked(name.to_owned()))?
    })
}

/// The `/proc/sys` file of a sysctl key (`net.ipv4.ip_forward` → `/proc/sys/net/ipv4/ip_forward`).
fn sysctl_path(key: &str) -> PathBuf {
    PathBuf::from("/proc/sys").join(key.replace('.', "/"))
}

/// Writes sysctls (`("net.ipv4.ip_forward", "1")`) inside namespace `netns`, through
/// `/proc/sys` from a thread in the namespace: the `net.*` files there are the namespace's
/// own, so no `sysctl` program (procps) is needed.
///
/// # Errors
/// [`LabError::Os`] naming the key when a write fails (or the namespace cannot be entered).
pub(crate) fn sysctl(netns: &str, settings: &[(&str, &str)]) -> Result<(), LabError> {
    run_in(netns, || {
        for (key, value) in settings {
            std::fs::write(sysctl_path(key), value)
                .map_err(|e| LabError::os(format!("setting sysctl {key}={value}"), netns, e))?;
        }
        Ok(())
    })?
}

/// What [`clean_leftovers`] removed.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct Cleaned {
    /// Namespaces deleted.
    pub namespaces: Vec<String>,
    /// Interfaces deleted from the caller's namespace.
    pub interfaces: Vec<String>,
    /// `/etc/netns` directories (a namespace's hosts file) whose namespace was gone already.
    pub files: Vec<String>,
}

/// Removes every namespace (and interface of the caller's namespace) whose name starts with
/// `prefix`, after a lab was killed without tearing down (`kill -9`). Processes still running
/// in those namespaces are killed first.
///
/// `prefix` must start with `sonde-` (use `"sonde-"` for every lab), so nothing the lab did
/// not create can match.
///
/// # Errors
/// [`LabError::BadPrefix`] for another prefix; [`LabError::NotPrivileged`] without root;
/// the first failed deletion otherwise (the rest are still attempted).
pub fn clean_leftovers(prefix: &str) -> Result<Cleaned, LabError> {
    if prefix != crate::topology::PREFIX_ROOT {
        check_prefix(prefix)?;
    }
    check_privileges()?;
    let mut cleaned = Cleaned::default();
    let mut first_error = None;
    for ns in list()?.into_iter().filter(|n| n.starts_with(prefix)) {
        match delete(&ns) {
            Ok(()) => cleaned.namespaces.push(ns),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    let etc_left: Vec<String> = std::fs::read_dir(ETC_DIR)
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| n.starts_with(prefix) && !exists(n))
                .collect()
        })
        .unwrap_or_default();
    for name in etc_left {
        match remove_etc(&name) {
            Ok(()) => cleaned.files.push(etc_path(&name).display().to_string()),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    let links = cmd::ip(&["-o", "link", "show"])?;
    // Lines look like "7: name@peer: <FLAGS> ...".
    let names: Vec<String> = links
        .lines()
        .filter_map(|l| l.split(": ").nth(1))
        .map(|n| n.split('@').next().unwrap_or(n).to_owned())
        .filter(|n| n.starts_with(prefix))
        .collect();
    for name in names {
        match cmd::ip(&["link", "del", &name]) {
            Ok(_) => cleaned.interfaces.push(name),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        }
    }
    match first_error {
        Some(e) => Err(e),
        None => Ok(cleaned),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sysctl_keys_map_to_proc_sys() {
        assert_eq!(
            sysctl_path("net.ipv6.conf.default.accept_dad"),
            PathBuf::from("/proc/sys/net/ipv6/conf/default/accept_dad")
        );
    }
}
