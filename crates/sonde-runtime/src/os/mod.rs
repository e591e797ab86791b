//! Every OS-specific call sonde makes, in one place (Linux; other Unix systems get fallbacks).
//!
//! TCP_INFO, congestion control, socket options, thread CPU times, zero-copy sending and
//! readiness waits sit behind these small functions so the engine above stays portable.

pub mod cpu;
pub mod discard;
pub mod icmp;
pub mod mmsg;
pub mod poll;
pub mod random;
pub mod sockopt;
pub mod tcp_info;
pub mod timer;
pub mod timestamp;
pub mod zerocopy;
