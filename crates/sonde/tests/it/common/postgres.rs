//! A PostgreSQL server for tests: `initdb` + `pg_ctl` in a temporary directory, on a free
//! loopback port, as the `postgres` user when run as root (PostgreSQL refuses root), stopped
//! when dropped, even when the test fails.

use std::path::PathBuf;
use std::process::Command;

use super::{free_port, require_all, TempDir};

/// The PostgreSQL server binaries (`/usr/lib/postgresql/VERSION/bin`), newest first.
pub fn pg_available() -> bool {
    if pg_bin().is_some() {
        return true;
    }
    assert!(
        !require_all(),
        "SONDE_REQUIRE_ALL=1 but PostgreSQL's server binaries are missing (apt-get install postgresql)"
    );
    eprintln!("skipped: no PostgreSQL server binaries under /usr/lib/postgresql/*/bin");
    false
}

fn pg_bin() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path().join("bin"))
        .filter(|b| b.join("initdb").exists() && b.join("pg_ctl").exists())
        .collect();
    dirs.sort();
    dirs.pop()
}

/// A PostgreSQL server in a temporary directory; stopped when dropped (even on failure).
pub struct Postgres {
    bin: PathBuf,
    data: PathBuf,
    port: u16,
    _dir: TempDir,
}

impl Postgres {
    pub fn as_owner(&self, program: &str, args: &[&str]) -> Command {
        let exe = self.bin.join(program);
        // PostgreSQL refuses to run as root: run its tools as the `postgres` user then.
        if unsafe { libc::geteuid() } == 0 {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(exe).args(args);
            c
        } else {
            let mut c = Command::new(exe);
            c.args(args);
            c
        }
    }

    pub fn start_new() -> Postgres {
        let bin = pg_bin().unwrap_or_else(|| panic!("no PostgreSQL binaries"));
        let dir = TempDir::new("pg");
        let data = dir.file("data");
        if unsafe { libc::geteuid() } == 0 {
            let ok = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(dir.path())
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok, "chown of {} to postgres failed", dir.path().display());
        }
        let pg = Postgres {
            bin,
            data,
            port: free_port(),
            _dir: dir,
        };
        let data = pg.data.display().to_string();
        let out = pg
            .as_owner(
                "initdb",
                &["-D", &data, "-A", "trust", "-U", "sonde", "--no-sync"],
            )
            .output()
            .unwrap_or_else(|e| panic!("initdb: {e}"));
        assert!(
            out.status.success(),
            "initdb failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        pg.start();
        pg
    }

    pub fn start(&self) {
        let data = self.data.display().to_string();
        let opts = format!(
            "-p {} -k {data} -c listen_addresses=127.0.0.1 -c fsync=off",
            self.port
        );
        let log = format!("{data}/../pg.log");
        let out = self
            .as_owner(
                "pg_ctl",
                &[
                    "-D", &data, "-l", &log, "-o", &opts, "-w", "-t", "30", "start",
                ],
            )
            .output()
            .unwrap_or_else(|e| panic!("pg_ctl start: {e}"));
        assert!(
            out.status.success(),
            "pg_ctl start failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
    }

    pub fn stop(&self) {
        let data = self.data.display().to_string();
        let _ = self
            .as_owner(
                "pg_ctl",
                &["-D", &data, "-m", "fast", "-w", "-t", "30", "stop"],
            )
            .output();
    }

    /// The same database through the server's Unix-domain socket (in its data directory).
    pub fn socket_url(&self) -> String {
        format!(
            "postgres://sonde@/postgres?host={}&port={}&connect_timeout=3",
            self.data.display(),
            self.port
        )
    }

    pub fn url(&self) -> String {
        format!(
            "postgres://sonde@127.0.0.1:{}/postgres?connect_timeout=3",
            self.port
        )
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        self.stop();
    }
}
