//! Every OS-specific call sonde makes, in one place (Linux; other Unix systems get fallbacks).
//!
//! TCP_INFO, congestion control, socket options, thread CPU times, zero-copy sending and
//! readiness waits sit behind these small functions so the engine above stays portable; host
//! facts (`uname`, the wall clock), name resolution, the terminal's password prompt and the
//! local time's text are here for the same reason, as are the facts of the link a test leaves
//! by (`link_facts`: sysfs, the ethtool ioctl, the TCP sysctls). So are the calls on
//! processes: signalling a child or its process group and tying it to its parent's life
//! (`process`), running one under a deadline and a stop flag (`supervise`), leaving the terminal (`detach`), the descriptor limit (`nofile`), what a TCP
//! socket still holds unacknowledged (`socket_queue`) and the effective user (`user`).
//!
//! They are a crate of their own, below `sonde-runtime`, so that the runtime and the tools
//! that need only a socket option, a clock or a lookup (the stress suite, the mesh, the
//! agent, the command line) do not depend on each other for them: this crate depends on
//! nothing of sonde's but the sans-IO `sonde-stats` (for the CPU-usage model).

pub mod affinity;
pub mod cpu;
pub mod detach;
pub mod discard;
pub mod ethtool;
pub mod flowlabel;
pub mod host;
pub mod icmp;
pub mod link_facts;
pub mod local_time;
pub mod memory;
pub mod mmsg;
pub mod nofile;
pub mod packet_socket;
pub mod password;
pub mod pktinfo;
pub mod poll;
pub mod process;
pub mod random;
pub mod resolve;
pub mod socket_figures;
pub mod socket_queue;
pub mod sockopt;
pub mod supervise;
pub mod tcp_info;
pub mod timer;
pub mod timestamp;
pub mod tx_timestamp;
pub mod user;
pub mod zerocopy;
