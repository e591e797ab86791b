//! Facts about this host and this build that every test reports: the software name, a
//! `uname`-style description of the system and the wall-clock time.
//!
//! They sit here, not in a client, because the sonde and iperf3 clients, the server and the
//! latency tools all put them in their start events and hellos, and `uname` is an OS call.

/// Software name sent in hellos and reports.
pub fn software() -> String {
    format!("sonde {}", env!("CARGO_PKG_VERSION"))
}

/// Seconds since the Unix epoch.
pub fn unix_now() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or(0.0)
}

/// `uname`-style description of this host.
pub fn system_info() -> String {
    // SAFETY: uname fills the zeroed struct we own.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut u) } != 0 {
        return String::from("unknown");
    }
    let field = |f: &[libc::c_char]| {
        let bytes: Vec<u8> = f
            .iter()
            .take_while(|&&c| c != 0)
            .map(|&c| c as u8)
            .collect();
        String::from_utf8_lossy(&bytes).into_owned()
    };
    format!(
        "{} {} {} {}",
        field(&u.sysname),
        field(&u.nodename),
        field(&u.release),
        field(&u.machine)
    )
}
