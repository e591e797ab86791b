//! One type for either backend, for callers that choose at run time (the C ABI,
//! `sonde-switch-test`): each call goes to the framed [`Conn`] or the [`MptcpConn`].

use crate::conn::{Conn, Listener};
use crate::error::Error;
use crate::mptcp::{Backend, MptcpConn, MptcpListener};
use crate::options::{Options, Targets};
use crate::stats::{Family, Stats, SwitchRecord};
use std::net::SocketAddr;
use std::os::fd::RawFd;
use std::time::Duration;

/// A connection of either backend.
pub enum AnyConn {
    Framed(Conn),
    Mptcp(Box<MptcpConn>),
}

/// A listener of either backend.
pub enum AnyListener {
    Framed(Listener),
    Mptcp(MptcpListener),
}

macro_rules! each {
    ($self:expr, $c:ident => $e:expr) => {
        match $self {
            AnyConn::Framed($c) => $e,
            AnyConn::Mptcp($c) => $e,
        }
    };
}

impl AnyConn {
    /// Connects with `backend`.
    ///
    /// # Errors
    /// As [`Conn::connect`] or [`MptcpConn::connect`].
    pub fn connect(
        backend: Backend,
        targets: &Targets,
        family: Family,
        opts: Options,
    ) -> Result<Self, Error> {
        Ok(match backend {
            Backend::Framed => Self::Framed(Conn::connect(targets, family, opts)?),
            Backend::Mptcp => Self::Mptcp(Box::new(MptcpConn::connect(targets, family, opts)?)),
        })
    }

    /// Which backend this is.
    pub fn backend(&self) -> Backend {
        match self {
            Self::Framed(_) => Backend::Framed,
            Self::Mptcp(_) => Backend::Mptcp,
        }
    }

    /// # Errors
    /// As the backend's `send`.
    pub fn send(&self, data: &[u8]) -> Result<usize, Error> {
        each!(self, c => c.send(data))
    }

    /// # Errors
    /// As the backend's `try_send`.
    pub fn try_send(&self, data: &[u8]) -> Result<usize, Error> {
        each!(self, c => c.try_send(data))
    }

    /// # Errors
    /// As the backend's `send_all`.
    pub fn send_all(&self, data: &[u8]) -> Result<(), Error> {
        each!(self, c => c.send_all(data))
    }

    /// # Errors
    /// As the backend's `recv`.
    pub fn recv(&self, buf: &mut [u8]) -> Result<usize, Error> {
        each!(self, c => c.recv(buf))
    }

    /// # Errors
    /// As the backend's `try_recv`.
    pub fn try_recv(&self, buf: &mut [u8]) -> Result<usize, Error> {
        each!(self, c => c.try_recv(buf))
    }

    /// Fills `buf` completely.
    ///
    /// # Errors
    /// As the backend's `recv`, or the stream ended first.
    pub fn recv_exact(&self, buf: &mut [u8]) -> Result<(), Error> {
        crate::conn::recv_exact_with(buf, |b| self.recv(b))
    }

    /// # Errors
    /// As the backend's `switch`.
    pub fn switch(&self, family: Family) -> Result<SwitchRecord, Error> {
        each!(self, c => c.switch(family))
    }

    /// # Errors
    /// As the backend's `finish`.
    pub fn finish(&self) -> Result<(), Error> {
        each!(self, c => c.finish())
    }

    /// # Errors
    /// As the backend's `close`.
    pub fn close(&self) -> Result<(), Error> {
        each!(self, c => c.close())
    }

    /// The counters so far.
    pub fn stats(&self) -> Stats {
        each!(self, c => c.stats())
    }

    /// The family the stream is sent on now.
    pub fn family(&self) -> Option<Family> {
        each!(self, c => c.family())
    }

    /// The descriptor to poll: see [`Conn::poll_fd`] and [`MptcpConn::poll_fd`].
    ///
    /// # Errors
    /// As [`Conn::poll_fd`].
    pub fn poll_fd(&self) -> Result<RawFd, Error> {
        match self {
            Self::Framed(c) => c.poll_fd(),
            Self::Mptcp(c) => Ok(c.poll_fd()),
        }
    }
}

impl AnyListener {
    /// Listens with `backend`.
    ///
    /// # Errors
    /// As [`Listener::bind_with`] or [`MptcpListener::bind`].
    pub fn bind(backend: Backend, addrs: &[SocketAddr], opts: Options) -> Result<Self, Error> {
        Ok(match backend {
            Backend::Framed => Self::Framed(Listener::bind_with(addrs, opts)?),
            Backend::Mptcp => Self::Mptcp(MptcpListener::bind(addrs, opts)?),
        })
    }

    /// The addresses bound (or announced).
    pub fn local_addrs(&self) -> Vec<SocketAddr> {
        match self {
            Self::Framed(l) => l.local_addrs(),
            Self::Mptcp(l) => l.local_addrs(),
        }
    }

    /// # Errors
    /// As the backend's `accept`.
    pub fn accept(&self, timeout: Option<Duration>) -> Result<AnyConn, Error> {
        Ok(match self {
            Self::Framed(l) => AnyConn::Framed(l.accept(timeout)?),
            Self::Mptcp(l) => AnyConn::Mptcp(Box::new(l.accept(timeout)?)),
        })
    }
}
