//! The C ABI of [`sonde_switch`]: one byte stream over an IPv4 and an IPv6 connection that
//! moves between them on request, or when the path carrying it fails, with no byte lost,
//! duplicated or reordered.
//!
//! Built as a shared and a static library; the header `include/sonde_switch.h` is generated
//! from this crate by cbindgen (a test fails when the checked-in copy differs). Conventions:
//! functions return 0 (or a byte count) on success and a negative errno on failure, with the
//! detail in [`sonde_switch_last_error`]; handles are opaque pointers; no panic unwinds into
//! the caller; writes never raise SIGPIPE; the library's own threads block all asynchronous
//! signals, so a program's handlers (switching on SIGUSR1, say) run in its own threads.
//!
//! Threads: `send`, `recv`, `switch` and `stats` on one connection may be called from
//! different threads at once (one sender and one receiver, typically). `close` and `abort`
//! free the handle: call them when no other call on it is running.
//!
//! ```c
//! SondeSwitchConn *c;
//! if (sonde_switch_connect("192.0.2.1:5301,[2001:db8::1]:5301", AF_INET, NULL, &c) < 0)
//!     fprintf(stderr, "%s\n", sonde_switch_last_error());
//! sonde_switch_send(c, buf, len, 0);
//! sonde_switch_switch(c, AF_INET6);      /* make-before-break, nothing lost */
//! sonde_switch_close(c);                 /* waits until the peer confirmed every byte */
//! ```

mod api;
mod error;
mod types;

pub use api::*;
pub use error::{sonde_switch_last_error, sonde_switch_strerror};
pub use types::{SondeSwitchOptions, SondeSwitchStats};
