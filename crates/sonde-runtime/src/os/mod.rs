//! Every OS-specific call sonde makes, in one place (Linux; other Unix systems get fallbacks).
//!
//! TCP_INFO, congestion control, socket options, thread CPU times, zero-copy sending and
//! readiness waits sit behind these small functions so the engine above stays portable; host
//! facts (`uname`, the wall clock) and name resolution are here for the same reason.

pub mod affinity;
pub mod cpu;
pub mod discard;
pub mod flowlabel;
pub mod host;
pub mod icmp;
pub mod memory;
pub mod mmsg;
pub mod nofile;
pub mod packet_socket;
pub mod pktinfo;
pub mod poll;
pub mod random;
pub mod resolve;
pub mod socket_figures;
pub mod sockopt;
pub mod tcp_info;
pub mod timer;
pub mod timestamp;
pub mod tx_timestamp;
pub mod zerocopy;
