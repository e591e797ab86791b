//! Reading a password from the terminal without echo (iperf3's `iperf_getpass`), in a way
//! Ctrl-C can end: sonde's Ctrl-C handler only raises a flag, so a plain blocking read would
//! ignore it until Enter. The terminal waits in slices and its settings are restored on every
//! way out.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::io::AsRawFd;
use std::sync::atomic::{AtomicBool, Ordering};

/// Longest password read.
const MAX_LEN: usize = 4096;
/// How often the Ctrl-C flag is looked at while waiting for the line.
const SLICE_MS: libc::c_int = 100;

/// Puts the terminal's settings back when dropped.
struct Restore {
    fd: libc::c_int,
    old: libc::termios,
}

impl Drop for Restore {
    fn drop(&mut self) {
        // SAFETY: tcsetattr on a descriptor this process holds open, with settings it read.
        unsafe { libc::tcsetattr(self.fd, libc::TCSAFLUSH, &self.old) };
    }
}

fn os_err(what: &str) -> String {
    format!("{what}: {}", std::io::Error::last_os_error())
}

/// Shows `prompt` on the controlling terminal and reads one line with echo off.
///
/// # Errors
/// No terminal, a terminal that cannot turn echo off, or Ctrl-C (`interrupt` raised).
pub fn read_password(prompt: &str, interrupt: &AtomicBool) -> Result<String, String> {
    let tty: File = OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .map_err(|e| format!("cannot open the terminal: {e}"))?;
    let fd = tty.as_raw_fd();
    // SAFETY: termios is plain data; tcgetattr fills it.
    let mut old: libc::termios = unsafe { std::mem::zeroed() };
    // SAFETY: fd is open for the whole function.
    if unsafe { libc::tcgetattr(fd, &mut old) } != 0 {
        return Err(os_err("cannot read the terminal's settings"));
    }
    let mut quiet = old;
    quiet.c_lflag &= !libc::ECHO;
    quiet.c_lflag |= libc::ECHONL;
    // SAFETY: as above, with settings derived from the terminal's own.
    if unsafe { libc::tcsetattr(fd, libc::TCSAFLUSH, &quiet) } != 0 {
        return Err(os_err("cannot turn the terminal's echo off"));
    }
    let _restore = Restore { fd, old };
    (&tty)
        .write_all(prompt.as_bytes())
        .map_err(|e| format!("cannot write the prompt: {e}"))?;
    let mut line = Vec::new();
    let mut buf = [0u8; 256];
    while !line.contains(&b'\n') && line.len() <= MAX_LEN {
        if interrupt.load(Ordering::Relaxed) {
            return Err("interrupted at the password prompt".into());
        }
        let mut p = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut p, 1, SLICE_MS) };
        if n < 0 && std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return Err(os_err("cannot wait for the terminal"));
        }
        if n <= 0 {
            continue;
        }
        match (&tty).read(&mut buf) {
            Ok(0) => break,
            Ok(k) => line.extend_from_slice(&buf[..k]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("cannot read the password: {e}")),
        }
    }
    let end = line
        .iter()
        .position(|b| *b == b'\n' || *b == b'\r')
        .unwrap_or(line.len());
    line.truncate(end);
    String::from_utf8(line).map_err(|_| "the password is not UTF-8".to_string())
}
