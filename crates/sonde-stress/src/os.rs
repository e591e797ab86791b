//! What the stress suite asks of the OS beyond mio, and its policy for it: a reset instead of
//! a FIN when a connection is refused, and as many descriptors as the hard limit allows. The
//! calls themselves, a socket's unacknowledged bytes and killing a load probe's process group
//! are `sonde_platform`'s (`nofile`, `socket_queue`, `process`), as is handing unused heap
//! back after a burst (`memory`, shared with the agent).

/// Closes `stream` with a reset (SO_LINGER 0): how the services refuse a connection beyond
/// their limit, so the client sees a refusal at once rather than an accepted, silent socket.
pub fn close_with_reset(stream: mio::net::TcpStream) {
    let s = socket2::SockRef::from(&stream);
    let _ = s.set_linger(Some(std::time::Duration::ZERO));
    drop(stream);
}

/// Raises this process's soft limit on open descriptors to its hard limit (thousands of
/// connections need thousands of descriptors) and returns the soft limit now in force; 1024,
/// the usual default, where the limit cannot be read (`u64::MAX`: unlimited).
pub fn raise_nofile_limit() -> u64 {
    sonde_platform::nofile::raise_to_hard().unwrap_or(1024)
}
