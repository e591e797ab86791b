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
//! Threads: `send`, `recv`, `switch`, `stats` and `verdict` on one connection may be called from
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
//!
//! Switching driven by measurements: give the connection a policy, then each verdict.
//!
//! ```c
//! SondeSwitchPolicyConfig p;
//! sonde_switch_policy_init(&p);          /* 10 % margin, 0.95 confidence, 30 s hold */
//! p.confirm = 2;                         /* two verdicts in a row */
//! sonde_switch_set_policy(c, &p);
//! SondeSwitchVerdict v = { sizeof v, AF_INET6, 30.0, 0.999, "median latency" };
//! int moved = sonde_switch_verdict(c, &v, NULL);  /* 0: stayed; AF_INET6: moved there */
//! ```

mod api;
mod error;
mod policy;
mod policy_slot;
mod types;

pub use api::*;
pub use error::{sonde_switch_last_error, sonde_switch_strerror};
pub use policy::*;
pub use types::{SondeSwitchOptions, SondeSwitchStats};
