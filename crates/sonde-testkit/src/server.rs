//! A server child on a port of its own: started on a free port, ready once that very process
//! accepts connections on it (not another that took the port between the check and the
//! bind), killed when dropped, and its output shown next to a failed assertion.

use std::net::{SocketAddr, TcpStream};
use std::thread;
use std::time::{Duration, Instant};

use crate::net::{free_port, listens_on};
use crate::proc::Proc;
use crate::tail;

/// A server child on its own port; killed when dropped, its output printed when the test
/// fails while it runs.
pub struct Server<P = ()> {
    pub port: u16,
    proc: Option<Proc<P>>,
}

impl<P> Server<P> {
    /// Starts `spawn(port)` on a free port and returns once it accepts TCP connections there
    /// (on 127.0.0.1), within `timeout`; another port, up to three, when it does not.
    #[track_caller]
    pub fn start(spawn: impl Fn(u16) -> Proc<P>, timeout: Duration) -> Self {
        let mut last_err = String::new();
        // Another process may grab the port between the check and the bind: try a few ports.
        for _ in 0..3 {
            let port = free_port();
            let mut proc = spawn(port);
            match wait_listening(&mut proc, port, timeout) {
                Ok(()) => {
                    return Server {
                        port,
                        proc: Some(proc),
                    }
                }
                Err(e) => {
                    last_err = format!(
                        "{e}\n`{}`\n--- stdout ---\n{}\n--- stderr ---\n{}",
                        proc.command_line(),
                        proc.stdout_so_far(),
                        proc.stderr_so_far()
                    );
                }
            }
        }
        panic!("the server did not come up: {last_err}");
    }

    pub fn proc(&mut self) -> &mut Proc<P> {
        self.proc.as_mut().expect("server still owned")
    }

    /// Takes the server process (to signal it and wait for its exit).
    pub fn take(&mut self) -> Proc<P> {
        self.proc.take().expect("server still owned")
    }

    /// What the server printed so far.
    pub fn output_so_far(&self) -> String {
        match &self.proc {
            Some(p) => format!(
                "--- server stdout ---\n{}\n--- server stderr ---\n{}",
                tail(&p.stdout_so_far(), 4000),
                tail(&p.stderr_so_far(), 4000)
            ),
            None => String::new(),
        }
    }
}

impl<P> Drop for Server<P> {
    fn drop(&mut self) {
        if thread::panicking() {
            // Leave the server's view next to the failing assertion.
            eprintln!("{}", self.output_so_far());
        }
    }
}

fn wait_listening<P>(proc: &mut Proc<P>, port: u16, timeout: Duration) -> Result<(), String> {
    let deadline = Instant::now() + timeout;
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    loop {
        if proc.has_exited() {
            return Err("server exited before accepting connections".into());
        }
        // Something accepts on the port: it must be this server, not another process that
        // took the port between `free_port`'s check and the server's bind (CI once saw a
        // server fail with "address already in use" while the port accepted connections).
        if TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_ok()
            && listens_on(proc.pid(), port)
        {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(format!("nothing accepted on {addr} within {timeout:?}"));
        }
        thread::sleep(Duration::from_millis(50));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[should_panic(expected = "server exited before accepting connections")]
    fn a_server_that_exits_fails_the_test() {
        Server::start(
            |_| Proc::<()>::spawn_program("true", &[] as &[&str]),
            Duration::from_secs(5),
        );
    }
}
