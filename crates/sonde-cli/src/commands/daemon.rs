//! `sonde server -D` and `-I FILE`: detaching from the terminal and the process-id file.
//!
//! The server binds its ports before it detaches, so a port in use is still reported on the
//! terminal with exit status 1; only then does the process fork into the background (the
//! parent exits 0 at once, as iperf3's does). Paths given relative to the working directory
//! are made absolute first, because a daemon works from `/`.

use std::path::{Path, PathBuf};

/// Relative paths made absolute against the current directory (unchanged when that fails).
pub fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

/// Forks into the background: a new session, working directory `/`, standard streams on
/// `/dev/null`. Call before any thread is started (a fork keeps only the calling thread).
///
/// # Errors
/// The OS error when the fork or the new session fails.
pub fn detach() -> std::io::Result<()> {
    sonde_platform::detach::daemonize()
}

/// A process-id file that is removed when dropped (at the server's normal exit, Ctrl-C or
/// SIGTERM).
pub struct PidFile(PathBuf);

impl PidFile {
    /// Writes this process's id to `path`.
    ///
    /// # Errors
    /// When the file cannot be written.
    pub fn write(path: &Path) -> std::io::Result<Self> {
        std::fs::write(path, format!("{}\n", std::process::id()))?;
        Ok(Self(path.to_path_buf()))
    }
}

impl Drop for PidFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}
