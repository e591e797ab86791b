//! The plain C structs of the ABI: options in, statistics out.
//!
//! Both begin with their own size (`sizeof` as the caller compiled it), so fields can be
//! added at the end later: an older caller's smaller struct is read or filled only as far as
//! it reaches, and the rest takes its default.

use crate::error::Failure;
use sonde_switch::{Backend, Family, Options, Stats, SwitchKind};
use std::time::Duration;

/// Sizes and time limits of a connection or listener. Zero in any field means its default;
/// fill `size` with `sizeof(SondeSwitchOptions)`, or call `sonde_switch_options_init`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct SondeSwitchOptions {
    /// `sizeof(SondeSwitchOptions)` as the caller knows it.
    pub size: u32,
    /// Dial plus handshake of one path, in milliseconds (default 3000).
    pub connect_timeout_ms: u32,
    /// The longest a send, receive or close waits for the peer, in milliseconds (default 30000).
    pub io_timeout_ms: u32,
    /// After the path carrying the stream failed, how long to get a new one, in milliseconds
    /// (default 10000).
    pub recovery_timeout_ms: u32,
    /// Bytes sent but not yet confirmed that are kept for replay; sends block beyond
    /// (default 8 MiB; 128 KiB to 1 GiB).
    pub replay_capacity: u64,
    /// Bytes received but not yet read (default 8 MiB; 128 KiB to 1 GiB).
    pub recv_capacity: u64,
    /// SONDE_SWITCH_BACKEND_FRAMED (0, the default) or SONDE_SWITCH_BACKEND_MPTCP: one
    /// MPTCP connection with a subflow per family, switched through the kernel's path
    /// manager (needs MPTCP enabled and root; fails with -EPROTONOSUPPORT and a message
    /// saying why when MPTCP is unavailable, never falls back to plain TCP).
    pub backend: u32,
}

const MIN_BUFFER: u64 = 128 << 10;
const MAX_BUFFER: u64 = 1 << 30;

impl SondeSwitchOptions {
    /// Reads `*p` as far as its `size` reaches (NULL: all defaults).
    ///
    /// # Safety
    /// `p` is NULL or points to at least `(*p).size` readable bytes.
    pub(crate) unsafe fn read(p: *const Self) -> Result<(Options, Backend), Failure> {
        let o = if p.is_null() {
            Self::default()
        } else {
            // SAFETY: forwarded from the caller.
            unsafe { read_sized(p, Self::default(), 4, "options")? }
        };
        o.to_options()
    }

    fn to_options(self) -> Result<(Options, Backend), Failure> {
        let backend = match self.backend {
            0 => Backend::Framed,
            1 => Backend::Mptcp,
            b => {
                return Err(Failure::invalid(format!(
                    "options: backend {b}: give SONDE_SWITCH_BACKEND_FRAMED or _MPTCP"
                )))
            }
        };
        let mut opts = Options::default();
        let ms = |v: u32, d: Duration| {
            if v == 0 {
                d
            } else {
                Duration::from_millis(u64::from(v))
            }
        };
        opts.connect_timeout = ms(self.connect_timeout_ms, opts.connect_timeout);
        opts.io_timeout = ms(self.io_timeout_ms, opts.io_timeout);
        opts.recovery_timeout = ms(self.recovery_timeout_ms, opts.recovery_timeout);
        for (v, slot, what) in [
            (
                self.replay_capacity,
                &mut opts.session.replay_capacity,
                "replay_capacity",
            ),
            (
                self.recv_capacity,
                &mut opts.session.recv_capacity,
                "recv_capacity",
            ),
        ] {
            if v == 0 {
                continue;
            }
            if !(MIN_BUFFER..=MAX_BUFFER).contains(&v) {
                return Err(Failure::invalid(format!(
                    "options: {what} {v} is outside {MIN_BUFFER}..={MAX_BUFFER}"
                )));
            }
            *slot = v as usize;
        }
        Ok((opts, backend))
    }
}

/// What a connection measured so far. Durations are microseconds, -1 when not known (yet).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
pub struct SondeSwitchStats {
    /// `sizeof(SondeSwitchStats)` as the caller knows it: set it before the call.
    pub size: u32,
    /// The family the stream is sent on now: AF_INET, AF_INET6, or 0 while it has no path.
    pub family: i32,
    /// Bytes handed to `sonde_switch_send`.
    pub written: u64,
    /// Of those, bytes the peer confirmed.
    pub acked: u64,
    /// Bytes received in order, each once.
    pub received: u64,
    /// Payload bytes sent over IPv4 and over IPv6, replays included.
    pub sent_ipv4: u64,
    pub sent_ipv6: u64,
    /// New bytes received over IPv4 and over IPv6.
    pub received_ipv4: u64,
    pub received_ipv6: u64,
    /// Bytes sent twice (replayed after a switch), all switches.
    pub replayed: u64,
    /// Bytes received twice and dropped, all switches.
    pub duplicates: u64,
    /// Moves of the stream to another path, planned or after a failure...
    pub switches: u64,
    /// ...of which after a failure (break-before-make).
    pub recoveries: u64,
    /// The last switch: request to the peer's JOIN_OK (the connecting end only).
    pub last_setup_us: i64,
    /// The last switch: request to the first new byte received on the new path.
    pub last_first_received_us: i64,
    /// The last switch: the longest gap between deliveries of new bytes around it.
    pub last_stall_us: i64,
    /// The longest such gap over all switches.
    pub max_stall_us: i64,
    /// Paths declared failed because nothing arrived on them for the heartbeat deadline
    /// (packets dropped silently); each is followed by a recovery.
    pub heartbeat_failures: u64,
    /// Bytes that arrived on a new path ahead of the old path's last ones and were held until
    /// those came (a planned switch: both paths deliver for a moment).
    pub held_ahead: u64,
}

fn us(d: Option<Duration>) -> i64 {
    d.map_or(-1, |d| i64::try_from(d.as_micros()).unwrap_or(i64::MAX))
}

impl SondeSwitchStats {
    pub(crate) fn from_stats(s: &Stats) -> Self {
        let last = s.switches.last();
        Self {
            size: std::mem::size_of::<Self>() as u32,
            family: match s.family {
                Some(Family::V4) => libc::AF_INET,
                Some(Family::V6) => libc::AF_INET6,
                None => 0,
            },
            written: s.written,
            acked: s.acked,
            received: s.received,
            sent_ipv4: s.sent_by_family[0],
            sent_ipv6: s.sent_by_family[1],
            received_ipv4: s.received_by_family[0],
            received_ipv6: s.received_by_family[1],
            replayed: s.replayed,
            duplicates: s.duplicates,
            switches: s.switches.len() as u64,
            recoveries: s
                .switches
                .iter()
                .filter(|r| r.kind == SwitchKind::Recovery)
                .count() as u64,
            last_setup_us: us(last.and_then(|r| r.setup)),
            last_first_received_us: us(last.and_then(|r| r.first_received)),
            last_stall_us: us(last.and_then(|r| r.stall)),
            max_stall_us: us(s.switches.iter().filter_map(|r| r.stall).max()),
            heartbeat_failures: s.heartbeat_failures,
            held_ahead: s.held_ahead,
        }
    }

    /// Writes `self` into `*p` as far as the caller's `size` reaches.
    ///
    /// # Safety
    /// `p` points to at least `(*p).size` writable bytes, of which 4 readable (size).
    pub(crate) unsafe fn write_to(&self, p: *mut Self) -> Result<(), Failure> {
        // SAFETY: forwarded from the caller.
        unsafe { write_sized(self, p, "stats: set size to sizeof(SondeSwitchStats)") }
    }
}

/// `*p` read as far as its leading `size` field reaches (at most `T`'s size) over `init`:
/// how a struct from an older caller, which ends sooner, is read. At least `need` bytes.
///
/// # Safety
/// `p` is NULL or points to at least `(*p).size` readable bytes.
pub(crate) unsafe fn read_sized<T: Copy>(
    p: *const T,
    init: T,
    need: usize,
    what: &str,
) -> Result<T, Failure> {
    if p.is_null() {
        return Err(Failure::invalid(format!("{what} is NULL")));
    }
    // SAFETY: the caller vouches for `size` bytes at p, of which at least 4 (size).
    let size = unsafe { std::ptr::read_unaligned(p.cast::<u32>()) } as usize;
    let n = size.min(std::mem::size_of::<T>());
    if n < need.max(4) {
        return Err(Failure::invalid(format!(
            "{what}: size {size} is smaller than its fields"
        )));
    }
    let mut v = init;
    // SAFETY: n bytes are readable at p (see above) and writable in v.
    unsafe { std::ptr::copy_nonoverlapping(p.cast::<u8>(), (&mut v as *mut T).cast(), n) };
    Ok(v)
}

/// Writes `v` into `*p` as far as the caller's leading `size` field reaches (at most `T`'s
/// size, at least 8 bytes, else `too_small`), then sets `size` to the bytes filled.
///
/// # Safety
/// `p` points to at least `(*p).size` writable bytes, of which 4 readable (size).
pub(crate) unsafe fn write_sized<T>(v: &T, p: *mut T, too_small: &str) -> Result<(), Failure> {
    // SAFETY: the caller vouches for the size field.
    let size = unsafe { std::ptr::read_unaligned(p.cast::<u32>()) } as usize;
    let n = size.min(std::mem::size_of::<T>());
    if n < std::mem::size_of::<u32>() * 2 {
        return Err(Failure::invalid(too_small));
    }
    // SAFETY: n bytes are writable at p and readable in v.
    unsafe { std::ptr::copy_nonoverlapping((v as *const T).cast::<u8>(), p.cast(), n) };
    // SAFETY: as above. `size` now says how many bytes were filled.
    unsafe { std::ptr::write_unaligned(p.cast::<u32>(), n as u32) };
    Ok(())
}
