//! The `-P` streams of one iperf 2 TCP test. Each stream is its own connection with the same
//! header; the first one to arrive waits a little for the others and runs the test with all
//! of them, so the server reports one test of N streams (as iperf 2's `[SUM]` does), not N
//! tests. Streams are matched by the client's address and the header's bytes: two `-P`
//! tests from one host with identical headers starting in the same instant would be joined,
//! which iperf 2's own server cannot tell apart either.

use super::header::Request;
use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, SendError, Sender};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long the first stream of a `-P` test waits for the others (iperf 2 opens them at once).
pub const GATHER_WAIT: Duration = Duration::from_secs(2);

type Key = (IpAddr, Vec<u8>);

/// The tests gathering their streams.
#[derive(Default)]
pub struct Hub {
    gathering: Mutex<HashMap<Key, Sender<(TcpStream, SocketAddr)>>>,
}

impl Hub {
    /// Hands `stream` to the test gathering it and returns None, or, for the first stream of
    /// a test, gathers the others (up to the header's count, for [`GATHER_WAIT`]) and returns
    /// them all in arrival order.
    pub fn gather(
        &self,
        stream: TcpStream,
        peer: SocketAddr,
        request: &Request,
        stopping: &dyn Fn() -> bool,
    ) -> Option<Vec<(TcpStream, SocketAddr)>> {
        let want = usize::try_from(request.header.base.threads).unwrap_or(1);
        if want <= 1 {
            return Some(vec![(stream, peer)]);
        }
        let key = (peer.ip(), request.raw.clone());
        let mut item = (stream, peer);
        let rx = {
            let mut g = self.lock();
            if let Some(tx) = g.get(&key) {
                match tx.send(item) {
                    Ok(()) => return None,
                    // Its test already stopped gathering: this stream starts a new one.
                    Err(SendError(back)) => item = back,
                }
            }
            let (tx, rx) = channel();
            g.insert(key.clone(), tx);
            rx
        };
        Some(self.collect(&key, rx, item, want, stopping))
    }

    fn collect(
        &self,
        key: &Key,
        rx: Receiver<(TcpStream, SocketAddr)>,
        first: (TcpStream, SocketAddr),
        want: usize,
        stopping: &dyn Fn() -> bool,
    ) -> Vec<(TcpStream, SocketAddr)> {
        let mut streams = vec![first];
        let deadline = Instant::now() + GATHER_WAIT;
        while streams.len() < want && !stopping() {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            match rx.recv_timeout(left.min(Duration::from_millis(100))) {
                Ok(s) => streams.push(s),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        self.lock().remove(key);
        // A stream sent between the last wait and the removal still belongs to this test.
        streams.extend(rx.try_iter().take(want.saturating_sub(streams.len())));
        streams
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<Key, Sender<(TcpStream, SocketAddr)>>> {
        self.gathering
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
