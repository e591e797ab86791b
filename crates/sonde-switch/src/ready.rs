//! A descriptor an event loop can poll instead of blocking in `recv` or `send`.
//!
//! The stream's state lives behind a mutex, not in a kernel object, so it is mirrored onto a
//! connected pair of Unix stream sockets; the application polls one end, the library writes
//! and drains the other. One descriptor carries both directions independently:
//! - POLLIN while a non-blocking receive would not say "would block": bytes are buffered,
//!   the peer ended its stream, or the session failed or closed (the call reports it);
//! - POLLOUT while a non-blocking send would not say "would block": the replay buffer has
//!   room, or the session failed or closed.
//!
//! To clear readability the library drains the application's end; to signal it, it writes one
//! byte towards it. To clear writability it fills the application's end's (shrunk) send
//! buffer until the kernel refuses more; to signal it, it drains what it wrote. The library
//! updates the mirror on every state change it is told of, a thread switch after the change;
//! in between, a descriptor can show ready when a call would still block (the call then says
//! so and the caller polls again), never the other way round for longer than that.

use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;

/// The socket pair and the state it shows now.
#[derive(Debug)]
pub(crate) struct Readiness {
    /// The application's end: only polled.
    app: UnixStream,
    /// The library's end.
    lib: UnixStream,
    readable: bool,
    writable: bool,
}

impl Readiness {
    /// A pair showing "nothing to read, room to write".
    pub(crate) fn new() -> io::Result<Self> {
        let (app, lib) = UnixStream::pair()?;
        app.set_nonblocking(true)?;
        lib.set_nonblocking(true)?;
        // The kernel's minimum: filling it (to clear POLLOUT) then takes a few kilobytes.
        socket2::SockRef::from(&app).set_send_buffer_size(1)?;
        Ok(Self {
            app,
            lib,
            readable: false,
            writable: true,
        })
    }

    /// The descriptor to poll.
    pub(crate) fn fd(&self) -> RawFd {
        self.app.as_raw_fd()
    }

    /// Shows `readable` as POLLIN and `writable` as POLLOUT.
    pub(crate) fn set(&mut self, readable: bool, writable: bool) {
        if readable != self.readable {
            self.readable = readable;
            if readable {
                let _ = (&self.lib).write(&[1]);
            } else {
                drain(&self.app);
            }
        }
        if writable != self.writable {
            self.writable = writable;
            if writable {
                drain(&self.lib);
            } else {
                let junk = [0u8; 4096];
                // Bounded: the shrunk send buffer refuses more after a few writes.
                for _ in 0..1024 {
                    if (&self.app).write(&junk).is_err() {
                        break;
                    }
                }
            }
        }
    }
}

/// Reads and discards everything queued on `s`.
fn drain(mut s: &UnixStream) {
    let mut buf = [0u8; 4096];
    while matches!(s.read(&mut buf), Ok(n) if n > 0) {}
}
