//! iperf 2 as a partner of the tests: Debian's `iperf` (2.1.8) on `PATH`, found or said why
//! not (failing under `SONDE_REQUIRE_ALL=1`), and its server on a free port.

use super::Iperf3;
use crate::common::{self, require_all, Proc};
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

/// iperf 2 on `PATH` when it runs (`iperf -v` names version 2); else fails under
/// `SONDE_REQUIRE_ALL=1` or says why the test skips.
pub fn iperf2() -> Option<Iperf3> {
    let out = Command::new("iperf").arg("-v").output();
    let runs = out.is_ok_and(|o| {
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        text.contains("iperf version 2")
    });
    if !runs {
        assert!(
            !require_all(),
            "SONDE_REQUIRE_ALL=1 but iperf 2 (`iperf`) does not run"
        );
        eprintln!("skipping: iperf 2 (`iperf`) does not run: install the iperf package");
        return None;
    }
    Some(Iperf3 {
        label: "iperf 2",
        path: PathBuf::from("iperf"),
    })
}

/// `iperf -s -p PORT EXTRA...` on a free port, once its socket is bound (TCP listening, or
/// with `-u` the UDP port); killed when the `Proc` drops.
pub fn serve(iperf2: &Iperf3, extra: &[&str]) -> (u16, Proc) {
    let port = common::free_port();
    let path = iperf2.path.to_string_lossy();
    let mut args = vec!["-s".to_string(), "-p".into(), port.to_string()];
    args.extend(extra.iter().map(|s| s.to_string()));
    let mut proc = Proc::spawn_program(&path, &args);
    let udp = extra.contains(&"-u");
    let t0 = Instant::now();
    while !bound(port, udp) {
        assert!(
            !proc.has_exited() && t0.elapsed() < Duration::from_secs(5),
            "`iperf {}` did not bind port {port}: {}",
            args.join(" "),
            proc.stderr_so_far()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    (port, proc)
}

/// True once a socket is bound to `port` (TCP: listening), read from `/proc` so the server
/// sees no connection.
fn bound(port: u16, udp: bool) -> bool {
    let needle = format!(":{port:04X}");
    let (tables, state) = if udp {
        (["/proc/net/udp", "/proc/net/udp6"], None)
    } else {
        (["/proc/net/tcp", "/proc/net/tcp6"], Some("0A"))
    };
    tables.iter().any(|f| {
        std::fs::read_to_string(f).is_ok_and(|t| {
            t.lines().skip(1).any(|l| {
                let cols: Vec<&str> = l.split_whitespace().collect();
                cols.get(1).is_some_and(|a| a.ends_with(&needle))
                    && state.is_none_or(|s| cols.get(3) == Some(&s))
            })
        })
    })
}
