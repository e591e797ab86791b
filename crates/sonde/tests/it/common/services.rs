//! A `sonde services` child on loopback, on ports the OS picked, for the stress tests.

use super::{run, Output, Proc};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// How long one `sonde stress` run may take.
pub const DEADLINE: Duration = Duration::from_secs(30);

/// A `sonde services` child on ports the OS picked, with where each service listens.
pub struct Services {
    pub proc: Proc,
    /// ("echo", "TCP") -> port
    pub ports: HashMap<(String, String), u16>,
}

impl Services {
    pub fn start(extra: &[&str]) -> Services {
        Services::start_on("127.0.0.1", extra)
    }

    /// Like [`Services::start`], bound to `bind` (`0.0.0.0`: every address of the host).
    pub fn start_on(bind: &str, extra: &[&str]) -> Services {
        let mut args = vec!["-B", bind];
        args.extend_from_slice(extra);
        Services::start_with(&args)
    }

    /// Like [`Services::start`] with no `-B`: the default addresses (IPv6 and IPv4).
    pub fn start_with(extra: &[&str]) -> Services {
        let mut args = vec![
            "services",
            "--echo-port",
            "0",
            "--discard-port",
            "0",
            "--chargen-port",
            "0",
        ];
        args.extend_from_slice(extra);
        let proc = Proc::spawn(&args);
        let t0 = Instant::now();
        loop {
            let out = proc.stdout_so_far();
            let ports: HashMap<(String, String), u16> = out
                .lines()
                .filter_map(|l| {
                    let rest = l.strip_prefix("Serving ")?;
                    let (service, rest) = rest.split_once(" on ")?;
                    let (proto, addr) = rest.split_once(' ')?;
                    let port = addr.rsplit_once(':')?.1.parse().ok()?;
                    Some(((service.to_string(), proto.to_string()), port))
                })
                .collect();
            if ports.len() == 6 {
                return Services { proc, ports };
            }
            assert!(
                t0.elapsed() < Duration::from_secs(5),
                "services did not come up: {out}\n{}",
                proc.stderr_so_far()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn port(&self, service: &str, proto: &str) -> String {
        self.ports[&(service.to_string(), proto.to_string())].to_string()
    }

    pub fn stress(&self, service: &str, extra: &[&str]) -> Output {
        let port = self.port(service, "TCP");
        let mode = format!("--{service}");
        let mut args = vec!["stress", "127.0.0.1", "-p", &port, &mode];
        args.extend_from_slice(extra);
        run(&args, DEADLINE)
    }
}
