//! The exported functions: connect, listen, accept, send, recv, switch, stats, close (the
//! policy's are in [`crate::policy`]).
//!
//! Each checks its pointers, converts C strings, and runs through [`call`] so no panic and no
//! Rust error crosses the boundary.

use crate::error::{call, Failure};
use crate::policy_slot::PolicySlot;
use crate::types::{SondeSwitchOptions, SondeSwitchStats};
use sonde_switch::{AnyConn, AnyListener, Family, Targets};
use std::ffi::{c_char, c_int, c_void, CStr};
use std::net::{SocketAddr, ToSocketAddrs};
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

/// `flags` of `sonde_switch_send` and `sonde_switch_recv`: return -EAGAIN instead of waiting.
pub const SONDE_SWITCH_NONBLOCK: c_int = 1;

/// `backend` of `SondeSwitchOptions`: the framed protocol over one TCP connection per family.
pub const SONDE_SWITCH_BACKEND_FRAMED: u32 = 0;
/// `backend` of `SondeSwitchOptions`: one MPTCP connection with a subflow per family.
pub const SONDE_SWITCH_BACKEND_MPTCP: u32 = 1;

/// One end of a switching stream (opaque).
pub struct SondeSwitchConn {
    pub(crate) conn: AnyConn,
    /// `sonde_switch_set_policy`'s policy, if one was set.
    policy: Mutex<Option<PolicySlot>>,
}

impl SondeSwitchConn {
    fn boxed(conn: AnyConn) -> *mut Self {
        Box::into_raw(Box::new(Self {
            conn,
            policy: Mutex::new(None),
        }))
    }

    /// The policy slot, locked (a panic while it was held leaves the policy as it was).
    pub(crate) fn policy_slot(&self) -> MutexGuard<'_, Option<PolicySlot>> {
        self.policy.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A listener for switching streams (opaque). Keep it open while its connections may still
/// switch: a new path of an accepted connection arrives through it.
pub struct SondeSwitchListener {
    listener: AnyListener,
}

fn neg(code: c_int) -> c_int {
    code
}

fn neg_ssize(code: c_int) -> isize {
    code as isize
}

/// A C string argument as UTF-8.
///
/// # Safety
/// `p` is NULL or a NUL-terminated string.
unsafe fn text<'a>(p: *const c_char, what: &str) -> Result<&'a str, Failure> {
    if p.is_null() {
        return Err(Failure::invalid(format!("{what} is NULL")));
    }
    // SAFETY: the caller passes a NUL-terminated string.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .map_err(|_| Failure::invalid(format!("{what} is not UTF-8")))
}

/// "host:port,host:port" (names, `a.b.c.d:port`, `[v6]:port`) into socket addresses.
fn addresses(list: &str) -> Result<Vec<SocketAddr>, Failure> {
    let mut out = Vec::new();
    for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let found = item.to_socket_addrs().map_err(|e| Failure {
            errno: libc::EHOSTUNREACH,
            message: format!("cannot resolve {item} (give host:port, [v6]:port): {e}"),
        })?;
        out.extend(found);
    }
    if out.is_empty() {
        return Err(Failure::invalid("no address given"));
    }
    Ok(out)
}

fn family(af: c_int) -> Result<Family, Failure> {
    match af {
        libc::AF_INET => Ok(Family::V4),
        libc::AF_INET6 => Ok(Family::V6),
        _ => Err(Failure::invalid(format!(
            "family {af}: give AF_INET or AF_INET6"
        ))),
    }
}

/// # Safety
/// `p` is NULL or a handle from this library not yet closed.
pub(crate) unsafe fn handle<'a>(p: *const SondeSwitchConn) -> Result<&'a SondeSwitchConn, Failure> {
    // SAFETY: the caller passes a live handle or NULL.
    unsafe { p.as_ref() }.ok_or_else(|| Failure::invalid("the connection is NULL"))
}

/// # Safety
/// `p` is NULL or a handle from this library not yet closed.
unsafe fn conn<'a>(p: *const SondeSwitchConn) -> Result<&'a AnyConn, Failure> {
    // SAFETY: forwarded from the caller.
    unsafe { handle(p) }.map(|c| &c.conn)
}

/// Initialises `*opts` to the defaults (every field 0, `size` set).
///
/// # Safety
/// `opts` is NULL or points to a writable `SondeSwitchOptions`.
#[no_mangle]
pub unsafe extern "C" fn sonde_switch_options_init(opts: *mut SondeSwitchOptions) -> c_int {
    call(neg, || {
        if opts.is_null() {
            return Err(Failure::invalid("opts is NULL"));
        }
        let o = SondeSwitchOptions {
            size: std::mem::size_of::<SondeSwitchOptions>() as u32,
            ..SondeSwitchOptions::default()
        };
        // SAFETY: checked non-NULL; the caller vouches it is writable.
        unsafe { opts.write(o) };
        Ok(0)
    })
}

/// Connects to a switching listener and starts the stream on `family` (AF_INET or
/// AF_INET6). `addrs` lists the peer's addresses, comma-separated, `host:port` or
/// `[v6]:port`; the first of each family is used (a name may give both). `opts` may be NULL.
/// A name is looked up with the system resolver (getaddrinfo), and the call waits as long as
/// that does; a caller that must not wait passes addresses. On success `*out` holds the
/// connection.
///
/// # Safety
/// `addrs` is a NUL-terminated string; `opts` NULL or valid; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn sonde_switch_connect(
    addrs: *const c_char,
    family_af: c_int,
    opts: *const SondeSwitchOptions,
    out: *mut *mut SondeSwitchConn,
) -> c_int {
    call(neg, || {
        if out.is_null() {
            return Err(Failure::invalid("out is NULL"));
        }
        // SAFETY: forwarded from the caller.
        let (list, (opts, backend)) =
            unsafe { (text(addrs, "addrs")?, SondeSwitchOptions::read(opts)?) };
        let targets = Targets::from_addrs(&addresses(list)?);
        let conn = AnyConn::connect(backend, &targets, family(family_af)?, opts)?;
        // SAFETY: checked non-NULL; the caller vouches it is writable.
        unsafe { out.write(SondeSwitchConn::boxed(conn)) };
        Ok(0)
    })
}

/// Listens on every address of `addrs` (comma-separated `ip:port`; port 0 picks one; IPv6
/// addresses are IPv6-only so an IPv4 and an IPv6 address can share a port). `opts` may be
/// NULL. With SONDE_SWITCH_BACKEND_MPTCP: one dual-stack socket on all addresses at the port
/// of the first, and each given address announced to clients (an MPTCP `signal` endpoint).
/// On success `*out` holds the listener.
///
/// # Safety
/// `addrs` is a NUL-terminated string; `opts` NULL or valid; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn sonde_switch_listen(
    addrs: *const c_char,
    opts: *const SondeSwitchOptions,
    out: *mut *mut SondeSwitchListener,
) -> c_int {
    call(neg, || {
        if out.is_null() {
            return Err(Failure::invalid("out is NULL"));
        }
        // SAFETY: forwarded from the caller.
        let (list, (opts, backend)) =
            unsafe { (text(addrs, "addrs")?, SondeSwitchOptions::read(opts)?) };
        let listener = AnyListener::bind(backend, &addresses(list)?, opts)?;
        // SAFETY: checked non-NULL; the caller vouches it is writable.
        unsafe { out.write(Box::into_raw(Box::new(SondeSwitchListener { listener }))) };
        Ok(0)
    })
}

/// Writes the listener's bound addresses, in the form `sonde_switch_connect` takes, into
/// `buf` (NUL-terminated, cut to `len`). Returns the full length without the NUL, as
/// snprintf does, so a larger buffer can be tried.
///
/// # Safety
/// `l` is a live listener; `buf` NULL (with `len` 0) or `len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn sonde_switch_listener_addrs(
    l: *const SondeSwitchListener,
    buf: *mut c_char,
    len: usize,
) -> isize {
    call(neg_ssize, || {
        // SAFETY: the caller passes a live handle or NULL.
        let l = unsafe { l.as_ref() }.ok_or_else(|| Failure::invalid("the listener is NULL"))?;
        let s: Vec<String> = l
            .listener
            .local_addrs()
            .iter()
            .map(ToString::to_string)
            .collect();
        let s = s.join(",");
        if !buf.is_null() && len > 0 {
            let n = s.len().min(len - 1);
            // SAFETY: n + 1 <= len bytes are writable at buf.
            unsafe {
                std::ptr::copy_nonoverlapping(s.as_ptr().cast::<c_char>(), buf, n);
                buf.add(n).write(0);
            }
        }
        Ok(s.len() as isize)
    })
}

/// Waits for the next new connection; `timeout_ms` < 0 waits without limit.
///
/// # Safety
/// `l` is a live listener; `out` writable.
#[no_mangle]
pub unsafe extern "C" fn sonde_switch_accept(
    l: *const SondeSwitchListener,
    timeout_ms: c_int,
    out: *mut *mut SondeSwitchConn,
) -> c_int {
    call(neg, || {
        // SAFETY: the caller passes a live handle or NULL.
        let l = unsafe { l.as_ref() }.ok_or_else(|| Failure::invalid("the listener is NULL"))?;
        if out.is_null() {
            return Err(Failure::invalid("out is NULL"));
        }
        let timeout = u64::try_from(timeout_ms).ok().map(Duration::from_millis);
        let conn = l.listener.accept(timeout)?;
        // SAFETY: checked non-NULL; the caller vouches it is writable.
        unsafe { out.write(SondeSwitchConn::boxed(conn)) };
        Ok(0)
    })
}

/// Stops listening and frees the listener (accepted connections go on, but can no longer
/// switch or recover).
///
/// # Safety
/// `l` is NULL or a listener not yet closed; no other call on it is running.
#[no_mangle]
pub unsafe extern "C" fn sonde_switch_listener_close(l: *mut SondeSwitchListener) {
    call(
        |_| (),
        || {
            if !l.is_null() {
                // SAFETY: the handle came from Box::into_raw and is freed once.
                drop(unsafe { Box::from_raw(l) });
            }
            Ok(())
        },
    )
}

/// Sends up to `len` bytes; returns how many were taken (at least 1 when `len` > 0).
/// Blocks until there is room, unless `flags` has SONDE_SWITCH_NONBLOCK (then -EAGAIN).
///
/// # Safety
/// `c` is a live connection; `buf` has `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn sonde_switch_send(
    c: *const SondeSwitchConn,
    buf: *const c_void,
    len: usize,
    flags: c_int,
) -> isize {
    call(neg_ssize, || {
        // SAFETY: forwarded from the caller.
        let conn = unsafe { conn(c)? };
        if len == 0 {
            return Ok(0);
        }
        if buf.is_null() {
            return Err(Failure::invalid("buf is NULL"));
        }
        // SAFETY: the caller vouches for len readable bytes.
        let data = unsafe { std::slice::from_raw_parts(buf.cast::<u8>(), len) };
        let n = if flags & SONDE_SWITCH_NONBLOCK != 0 {
            conn.try_send(data)?
        } else {
            conn.send(data)?
        };
        Ok(n as isize)
    })
}

/// Receives up to `len` bytes; returns how many, 0 once the peer ended its stream and every
/// byte was read. Blocks until bytes arrive, unless `flags` has SONDE_SWITCH_NONBLOCK (then
/// -EAGAIN).
///
/// # Safety
/// `c` is a live connection; `buf` has `len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn sonde_switch_recv(
    c: *const SondeSwitchConn,
    buf: *mut c_void,
    len: usize,
    flags: c_int,
) -> isize {
    call(neg_ssize, || {
        // SAFETY: forwarded from the caller.
        let conn = unsafe { conn(c)? };
        if buf.is_null() && len > 0 {
            return Err(Failure::invalid("buf is NULL"));
        }
        let data: &mut [u8] = if len == 0 {
            &mut []
        } else {
            // SAFETY: the caller vouches for len writable bytes.
            unsafe { std::slice::from_raw_parts_mut(buf.cast::<u8>(), len) }
        };
        let n = if flags & SONDE_SWITCH_NONBLOCK != 0 {
            conn.try_recv(data)?
        } else {
            conn.recv(data)?
        };
        Ok(n as isize)
    })
}

/// A descriptor for poll(), select() or epoll (level-triggered) before the
/// SONDE_SWITCH_NONBLOCK calls. POLLIN: `sonde_switch_recv` would not return -EAGAIN (bytes
/// are buffered, the peer ended its stream, or the connection failed or closed - the call
/// says which). POLLOUT: `sonde_switch_send` would not return -EAGAIN (the replay buffer has
/// room, or the connection failed or closed). The library updates it a thread switch after
/// each change, so after a wake-up a call can still return -EAGAIN (poll again); it never
/// stays quiet while a call would succeed. Only poll it: do not read, write or close it. It
/// is the same descriptor on every call and stays valid until `sonde_switch_close` or
/// `sonde_switch_abort`. With the MPTCP backend it is the connection's socket itself (same
/// meaning of POLLIN and POLLOUT). Returns the descriptor or a negative errno.
///
/// # Safety
/// `c` is a live connection.
#[no_mangle]
pub unsafe extern "C" fn sonde_switch_fd(c: *const SondeSwitchConn) -> c_int {
    call(neg, || {
        // SAFETY: forwarded from the caller.
        let conn = unsafe { conn(c)? };
        Ok(conn.poll_fd()?)
    })
}

/// Moves the stream to `family_af` (AF_INET or AF_INET6), make-before-break: dials, joins,
/// and returns once data goes out on the new path. Only the connecting end can switch.
///
/// # Safety
/// `c` is a live connection.
#[no_mangle]
pub unsafe extern "C" fn sonde_switch_switch(c: *const SondeSwitchConn, family_af: c_int) -> c_int {
    call(neg, || {
        // SAFETY: forwarded from the caller.
        let conn = unsafe { conn(c)? };
        conn.switch(family(family_af)?)?;
        Ok(0)
    })
}

/// Fills `*out` with the counters so far; set `out->size` to `sizeof(SondeSwitchStats)`
/// first (it says how much was filled afterwards).
///
/// # Safety
/// `c` is a live connection; `out` points to a `SondeSwitchStats` with `size` set.
#[no_mangle]
pub unsafe extern "C" fn sonde_switch_stats(
    c: *const SondeSwitchConn,
    out: *mut SondeSwitchStats,
) -> c_int {
    call(neg, || {
        // SAFETY: forwarded from the caller.
        let conn = unsafe { conn(c)? };
        if out.is_null() {
            return Err(Failure::invalid("out is NULL"));
        }
        // SAFETY: forwarded from the caller.
        unsafe { SondeSwitchStats::from_stats(&conn.stats()).write_to(out)? };
        Ok(0)
    })
}

/// Ends this end's stream after the bytes sent so far; the peer's receive then returns 0.
/// Receiving goes on.
///
/// # Safety
/// `c` is a live connection.
#[no_mangle]
pub unsafe extern "C" fn sonde_switch_finish(c: *const SondeSwitchConn) -> c_int {
    call(neg, || {
        // SAFETY: forwarded from the caller.
        unsafe { conn(c)? }.finish()?;
        Ok(0)
    })
}

/// Ends the stream, waits until the peer confirmed every byte and ended its own, closes the
/// paths and frees the connection (also when it fails: the handle is gone either way).
///
/// # Safety
/// `c` is NULL or a connection not yet closed; no other call on it is running.
#[no_mangle]
pub unsafe extern "C" fn sonde_switch_close(c: *mut SondeSwitchConn) -> c_int {
    call(neg, || {
        if c.is_null() {
            return Ok(0);
        }
        // SAFETY: the handle came from Box::into_raw and is freed once.
        let b = unsafe { Box::from_raw(c) };
        b.conn.close()?;
        Ok(0)
    })
}

/// Closes the paths at once and frees the connection: bytes not yet confirmed are lost.
///
/// # Safety
/// `c` is NULL or a connection not yet closed; no other call on it is running.
#[no_mangle]
pub unsafe extern "C" fn sonde_switch_abort(c: *mut SondeSwitchConn) {
    call(
        |_| (),
        || {
            if !c.is_null() {
                // SAFETY: the handle came from Box::into_raw and is freed once.
                drop(unsafe { Box::from_raw(c) });
            }
            Ok(())
        },
    )
}
