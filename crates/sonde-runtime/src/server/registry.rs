//! Tests in progress on a server, found by session cookie when their data streams arrive.

use sonde_proto::message::TestParams;
use sonde_proto::preamble::Cookie;
use sonde_proto::udp_hello::HelloAck;
use std::collections::{HashMap, HashSet};
use std::net::{TcpStream, UdpSocket};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};

/// A data stream handed to its session.
pub enum Arrival {
    Tcp(u32, TcpStream),
    Udp(u32, UdpSocket, HelloAck),
}

struct Entry {
    expected: u32,
    params: Arc<TestParams>,
    tx: Sender<Arrival>,
    udp_seen: HashSet<u32>,
}

/// What the UDP listener should do with a hello.
pub enum HelloVerdict {
    /// First hello for this stream: create its socket with these parameters.
    Create(Arc<TestParams>, Sender<Arrival>),
    /// Already created: just acknowledge again.
    Repeat,
    /// Unknown cookie or stream id: ignore.
    Unknown,
}

/// The server's table of accepted tests.
#[derive(Default)]
pub struct Registry {
    inner: Mutex<HashMap<Cookie, Entry>>,
}

impl Registry {
    pub fn insert(&self, cookie: Cookie, params: Arc<TestParams>, tx: Sender<Arrival>) {
        if let Ok(mut m) = self.inner.lock() {
            let expected = params.stream_count();
            m.insert(
                cookie,
                Entry {
                    expected,
                    params,
                    tx,
                    udp_seen: HashSet::new(),
                },
            );
        }
    }

    pub fn remove(&self, cookie: &Cookie) {
        if let Ok(mut m) = self.inner.lock() {
            m.remove(cookie);
        }
    }

    /// Routes a TCP data stream to its session; false (and the socket closed) when the cookie
    /// or stream id is unknown or the session is gone.
    pub fn route_tcp(&self, cookie: &Cookie, id: u32, s: TcpStream) -> bool {
        let Ok(m) = self.inner.lock() else {
            return false;
        };
        match m.get(cookie) {
            Some(e) if (1..=e.expected).contains(&id) => e.tx.send(Arrival::Tcp(id, s)).is_ok(),
            _ => false,
        }
    }

    /// Classifies a UDP hello.
    pub fn hello(&self, cookie: &Cookie, id: u32) -> HelloVerdict {
        let Ok(mut m) = self.inner.lock() else {
            return HelloVerdict::Unknown;
        };
        match m.get_mut(cookie) {
            Some(e) if (1..=e.expected).contains(&id) => {
                if e.udp_seen.insert(id) {
                    HelloVerdict::Create(e.params.clone(), e.tx.clone())
                } else {
                    HelloVerdict::Repeat
                }
            }
            _ => HelloVerdict::Unknown,
        }
    }
}
