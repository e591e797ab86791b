//! Zero-copy TCP sending (`-Z`): the payload lives in a memory file and goes out with
//! `sendfile`, so the kernel never copies it from user space (what iperf3's `-Z` does).

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::{AsRawFd, FromRawFd};

/// A memory-backed file holding one block of payload.
pub struct ZeroCopySource {
    file: File,
    len: usize,
}

impl ZeroCopySource {
    /// Creates the memory file and writes the payload into it.
    ///
    /// # Errors
    /// When the OS has no memfd support or the write fails.
    #[cfg(target_os = "linux")]
    pub fn new(payload: &[u8]) -> io::Result<Self> {
        // SAFETY: the name is a valid C string; the returned fd is owned by the File below.
        let fd = unsafe { libc::memfd_create(c"sonde-zerocopy".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut file = unsafe { File::from_raw_fd(fd) };
        file.write_all(payload)?;
        Ok(Self {
            file,
            len: payload.len(),
        })
    }

    #[cfg(not(target_os = "linux"))]
    pub fn new(_payload: &[u8]) -> io::Result<Self> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "zero-copy sending needs Linux",
        ))
    }

    /// Sends up to `max` bytes of the payload on `sock`; returns bytes sent.
    ///
    /// # Errors
    /// The OS error of `sendfile` (WouldBlock on a send timeout).
    #[cfg(target_os = "linux")]
    pub fn send(&self, sock: &impl AsRawFd, max: usize) -> io::Result<usize> {
        let mut off: libc::off_t = 0;
        let n = max.min(self.len);
        // SAFETY: both fds are valid; `off` is ours.
        let rc = unsafe { libc::sendfile(sock.as_raw_fd(), self.file.as_raw_fd(), &mut off, n) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(rc as usize)
    }

    #[cfg(not(target_os = "linux"))]
    pub fn send(&self, _sock: &impl AsRawFd, _max: usize) -> io::Result<usize> {
        Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "zero-copy sending needs Linux",
        ))
    }
}
