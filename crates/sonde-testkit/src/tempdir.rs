//! A temporary directory removed when dropped (also when the test fails).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A directory of its own under the system's temporary directory, removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    /// A fresh, empty `sonde-test-TAG-PID-N`.
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("sonde-test-{tag}-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// The path of `name` in the directory.
    pub fn file(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::TempDir;

    #[test]
    fn the_directory_is_fresh_and_goes_when_dropped() {
        let dir = TempDir::new("kit");
        let (a, b) = (dir.path().to_path_buf(), TempDir::new("kit"));
        assert_ne!(a, b.path());
        std::fs::write(dir.file("x"), "x").unwrap();
        drop(dir);
        assert!(!a.exists());
    }
}
