//! A PostgreSQL server for tests: `initdb` + `pg_ctl` in a temporary directory, on a free
//! loopback port, as the `postgres` user when run as root (PostgreSQL refuses root), stopped
//! when dropped, even when the test fails.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::net::free_port;
use crate::{require_all, which, TempDir};

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

/// The only name [`Postgres::start_tls`]'s certificate is valid for.
pub const TLS_NAME: &str = "db.sonde.test";

/// The user [`Postgres::start_tls`]'s server authenticates by client certificate alone
/// (`hostssl ... cert`): one whose certificate, signed by `good-ca.pem`, names it.
pub const CERT_USER: &str = "sonde_cert";

/// A PostgreSQL server in a temporary directory; stopped when dropped (even on failure).
pub struct Postgres {
    bin: PathBuf,
    data: PathBuf,
    port: u16,
    /// More server options (`-c name=value ...`), e.g. TLS.
    extra: String,
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
        Postgres::start_new_with("")
    }

    /// A new server started with `extra` server options besides the usual ones.
    pub fn start_new_with(extra: &str) -> Postgres {
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
            extra: extra.to_owned(),
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
            "-p {} -k {data} -c listen_addresses=127.0.0.1 -c fsync=off {}",
            self.port, self.extra
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

    /// A server that takes TCP connections over TLS only (`hostnossl ... reject`), with a
    /// certificate for [`TLS_NAME`] alone signed by the CA `dir/good-ca.pem`; `dir` also
    /// holds `other-ca.pem`, a CA that signed nothing. [`CERT_USER`] must show a client
    /// certificate signed by `good-ca.pem` (see [`make_client_cert`]); other users need none.
    pub fn start_tls(dir: &Path) -> Postgres {
        make_ca(dir, "good");
        make_ca(dir, "other");
        make_server_cert(dir, "good");
        std::fs::write(
            dir.join("hba.conf"),
            format!(
                "local all all trust\nhostnossl all all all reject\n\
                 hostssl all {CERT_USER} all cert\nhostssl all all all trust\n"
            ),
        )
        .unwrap();
        let f = |name: &str| dir.join(name).display().to_string();
        let pg = Postgres::start_new_with(&format!(
            "-c ssl=on -c ssl_cert_file={} -c ssl_key_file={} -c ssl_ca_file={} -c hba_file={}",
            f("server.crt"),
            f("server.key"),
            f("good-ca.pem"),
            f("hba.conf")
        ));
        let data = pg.data.display().to_string();
        let port = pg.port.to_string();
        let out = pg
            .as_owner(
                "createuser",
                &["-h", &data, "-p", &port, "-U", "sonde", "-s", CERT_USER],
            )
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "createuser {CERT_USER}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        pg
    }

    /// The URL of [`Postgres::start_tls`]'s server, verified in full against `ca` and reached
    /// by its name with `hostaddr` (the name needs no resolver).
    pub fn tls_url(&self, ca: &Path) -> String {
        format!(
            "postgres://sonde@{TLS_NAME}:{}/postgres?connect_timeout=3&sslmode=verify-full&sslrootcert={}&hostaddr=127.0.0.1",
            self.port,
            ca.display()
        )
    }

    pub fn port(&self) -> u16 {
        self.port
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

pub fn openssl_available() -> bool {
    if which("openssl").is_some() {
        return true;
    }
    assert!(
        !require_all(),
        "SONDE_REQUIRE_ALL=1 but openssl is missing (apt-get install openssl)"
    );
    eprintln!("skipped: no openssl to make the test certificates");
    false
}

/// Runs `openssl` in `dir` with the words of `words` (file names relative to `dir`), then
/// `more` (arguments that may hold spaces).
fn openssl(dir: &Path, words: &str, more: &[&str]) {
    let out = Command::new("openssl")
        .current_dir(dir)
        .args(words.split_whitespace())
        .args(more)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "openssl {words} {more:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A new P-256 key, unencrypted: quick to make, and what webpki verifies.
const NEW_KEY: &str = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";

/// A CA (`NAME-ca.pem`) in `dir`, with its key.
fn make_ca(dir: &Path, name: &str) {
    let subject = format!("/CN=sonde test CA {name}");
    let words = format!("req -x509 {NEW_KEY} -keyout {name}-ca.key -out {name}-ca.pem -days 2");
    openssl(dir, &words, &["-subj", &subject]);
}

/// `server.crt` and `server.key` for [`TLS_NAME`] only, signed by the CA `ca`, the key
/// readable by the server alone.
fn make_server_cert(dir: &Path, ca: &str) {
    std::fs::write(
        dir.join("ext.cnf"),
        format!(
            "subjectAltName=DNS:{TLS_NAME}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"
        ),
    )
    .unwrap();
    let request = format!("req {NEW_KEY} -keyout server.key -out server.csr -subj /CN={TLS_NAME}");
    openssl(dir, &request, &[]);
    let sign = format!(
        "x509 -req -in server.csr -CA {ca}-ca.pem -CAkey {ca}-ca.key -CAcreateserial \
         -out server.crt -days 2 -extfile ext.cnf"
    );
    openssl(dir, &sign, &[]);
    let key = dir.join("server.key");
    std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    if unsafe { libc::geteuid() } == 0 {
        let ok = Command::new("chown")
            .arg("postgres:postgres")
            .arg(&key)
            .status()
            .is_ok_and(|s| s.success());
        assert!(ok, "chown of the server key to postgres failed");
    }
}

/// `NAME.crt` and `NAME.key` in `dir`: a client certificate for the user `user`, signed by the
/// CA `ca` ("good" or "other"), its key readable by its owner alone.
pub fn make_client_cert(dir: &Path, ca: &str, user: &str, name: &str) {
    let request = format!("req {NEW_KEY} -keyout {name}.key -out {name}.csr -subj /CN={user}");
    openssl(dir, &request, &[]);
    std::fs::write(
        dir.join("client-ext.cnf"),
        "basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n",
    )
    .unwrap();
    let sign = format!(
        "x509 -req -in {name}.csr -CA {ca}-ca.pem -CAkey {ca}-ca.key -CAcreateserial \
         -out {name}.crt -days 2 -extfile client-ext.cnf"
    );
    openssl(dir, &sign, &[]);
    let key = dir.join(format!("{name}.key"));
    std::fs::set_permissions(&key, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
}
