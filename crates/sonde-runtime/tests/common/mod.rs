//! The loopback harness of the runtime's own tests: a server of `sonde_runtime::server` in
//! this process on 127.0.0.1 (a port the kernel picks), stopped when dropped, and a bound on
//! every client run, so that a run that hangs fails its test instead of the whole suite.

use sonde_proto::message::TestParams;
use sonde_runtime::auth::ServerAuth;
use sonde_runtime::client::{ClientConfig, Family};
use sonde_runtime::server::source_limit::SourceLimits;
use sonde_runtime::server::{Server, ServerConfig, SinkFactory};
use sonde_stats::sink::Discard;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// Longest a client run (or the server's stop) may take before its test fails.
pub const BOUND: Duration = Duration::from_secs(30);

/// A server's configuration as `sonde server -B 127.0.0.1 -p 0` makes it.
pub fn loopback_config() -> ServerConfig {
    ServerConfig {
        port: 0,
        bind: Some(IpAddr::V4(Ipv4Addr::LOCALHOST)),
        max_clients: None,
        max_duration_secs: None,
        max_bitrate: None,
        one_off: false,
        interval_secs: None,
        ipv6_only: false,
        rcv_timeout: Some(Duration::from_secs(10)),
        mptcp: false,
        idle_timeout: None,
        source_limits: SourceLimits::default(),
        auth: ServerAuth::default(),
    }
}

/// A server running on its own thread; dropping it raises its interrupt and waits for it.
pub struct Served {
    pub port: u16,
    interrupt: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Served {
    /// Binds `cfg` (its port should be 0) and runs it. The listener is bound and listening
    /// when this returns, so a client may connect at once: no wait for readiness is needed.
    pub fn start(cfg: ServerConfig) -> Served {
        let interrupt = Arc::new(AtomicBool::new(false));
        let sinks: SinkFactory = Arc::new(|_peer: &str| Box::new(Discard));
        let log = Arc::new(|msg: &str| eprintln!("server: {msg}"));
        let server = Server::bind(cfg, interrupt.clone(), sinks, log).expect("bind 127.0.0.1");
        let port = server.local_addr().expect("bound address").port();
        assert_ne!(port, 0, "the kernel gave no port");
        let thread = std::thread::spawn(move || {
            if let Err(e) = server.run() {
                panic!("the server failed: {e}");
            }
        });
        Served {
            port,
            interrupt,
            thread: Some(thread),
        }
    }

    /// A client configuration of `params` against this server.
    pub fn client(&self, params: TestParams) -> ClientConfig {
        ClientConfig {
            host: "127.0.0.1".into(),
            port: self.port,
            family: Family::V4,
            cport: None,
            params,
            connect_timeout: Duration::from_secs(5),
            local: Default::default(),
            rcv_timeout: Some(Duration::from_secs(10)),
            file: None,
        }
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        self.interrupt.store(true, Ordering::Relaxed);
        // Not while a failing test unwinds: its own message is the one to read, and a
        // second panic would abort the test binary.
        let Some(t) = self.thread.take().filter(|_| !std::thread::panicking()) else {
            return;
        };
        let joined = bounded("the server's stop", move || t.join().is_ok());
        assert!(joined, "the server thread panicked");
    }
}

/// Runs `f` on a thread of its own and returns what it returns, failing the test when it
/// takes longer than [`BOUND`] (`what` names it in the message).
pub fn bounded<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(BOUND) {
        Ok(v) => v,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what} took longer than {BOUND:?}"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{what} panicked"),
    }
}
