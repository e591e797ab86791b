//! Where a PostgreSQL URL leads, and the same URL led elsewhere: for a process that carries
//! the database's connections across a boundary its clients cannot cross themselves (the
//! mesh's namespaces reach only their own loopback, where a relay listens and connects on
//! to the server the URL names).
//!
//! The driver parses the URL (so what is relayed to is what the driver would have connected
//! to); the rewrite is textual, so the user name, password, database and every other
//! parameter stay exactly as written.

use std::net::SocketAddr;
use std::path::PathBuf;

use postgres::config::Host;

use super::{pg_err, redact};
use crate::StoreError;

/// PostgreSQL's port when a URL names none.
const DEFAULT_PORT: u16 = 5432;

/// The server a URL's first host names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PostgresEndpoint {
    /// A host name or address and a port (the name is resolved by whoever connects).
    Tcp { host: String, port: u16 },
    /// A Unix-domain socket file (`DIR/.s.PGSQL.PORT`, from `host=/DIR`).
    Unix(PathBuf),
}

/// The server `url` connects to first: its first host (or `hostaddr`) and port.
///
/// # Errors
/// [`StoreError::Postgres`] when the driver refuses the URL, [`StoreError::Corrupt`] when it
/// names no host at all.
pub fn postgres_endpoint(url: &str) -> Result<PostgresEndpoint, StoreError> {
    let target = redact(url);
    let config: postgres::Config = url.parse().map_err(pg_err(&target))?;
    let port = config.get_ports().first().copied().unwrap_or(DEFAULT_PORT);
    if let Some(ip) = config.get_hostaddrs().first() {
        return Ok(PostgresEndpoint::Tcp {
            host: ip.to_string(),
            port,
        });
    }
    match config.get_hosts().first() {
        Some(Host::Tcp(host)) => Ok(PostgresEndpoint::Tcp {
            host: host.clone(),
            port,
        }),
        Some(Host::Unix(dir)) => Ok(PostgresEndpoint::Unix(dir.join(format!(".s.PGSQL.{port}")))),
        None => Err(StoreError::Corrupt {
            path: target,
            what: "names no host".into(),
        }),
    }
}

/// `url` with its hosts and ports replaced by `addr` (and `host`, `hostaddr` and `port`
/// parameters dropped): the same user, password, database and options, reached at `addr`.
pub fn postgres_url_via(url: &str, addr: SocketAddr) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("postgres", url));
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let user = authority.rfind('@').map_or("", |at| &authority[..=at]);
    let (path, query) = tail.split_once('?').unwrap_or((tail, ""));
    let kept: Vec<&str> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .filter(|p| {
            let key = p.split_once('=').map_or(*p, |(k, _)| k);
            !matches!(key, "host" | "hostaddr" | "port")
        })
        .collect();
    let mut out = format!("{scheme}://{user}{addr}{path}");
    if !kept.is_empty() {
        out.push('?');
        out.push_str(&kept.join("&"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp(host: &str, port: u16) -> PostgresEndpoint {
        PostgresEndpoint::Tcp {
            host: host.into(),
            port,
        }
    }

    #[test]
    fn the_first_host_and_port_are_where_it_leads() {
        let e = |u: &str| postgres_endpoint(u).unwrap();
        assert_eq!(
            e("postgres://u:p@db.example:6000/x"),
            tcp("db.example", 6000)
        );
        assert_eq!(e("postgresql://127.0.0.1/x"), tcp("127.0.0.1", 5432));
        assert_eq!(e("postgres://[::1]:7/x"), tcp("::1", 7));
        assert_eq!(e("postgres://a:1,b:2/x"), tcp("a", 1));
        assert_eq!(
            e("postgres://u@/x?host=/run/postgresql&port=5433"),
            PostgresEndpoint::Unix("/run/postgresql/.s.PGSQL.5433".into())
        );
        assert_eq!(
            e("postgres://name/x?hostaddr=10.0.0.9"),
            tcp("10.0.0.9", 5432)
        );
        assert!(postgres_endpoint("postgres://u@/x").is_err(), "no host");
        assert!(postgres_endpoint("postgres://h:port/x").is_err());
    }

    #[test]
    fn the_rewrite_keeps_everything_but_the_hosts() {
        let via: SocketAddr = "127.0.0.1:5432".parse().unwrap();
        let cases = [
            (
                "postgres://sonde:s3cret@db.example:6000/results",
                "postgres://sonde:s3cret@127.0.0.1:5432/results",
            ),
            ("postgresql://h/db", "postgresql://127.0.0.1:5432/db"),
            (
                "postgres://u@/db?host=/run/pg&port=5433&application_name=mesh",
                "postgres://u@127.0.0.1:5432/db?application_name=mesh",
            ),
            (
                "postgres://u@a:1,b:2?connect_timeout=3",
                "postgres://u@127.0.0.1:5432?connect_timeout=3",
            ),
        ];
        for (url, want) in cases {
            let got = postgres_url_via(url, via);
            assert_eq!(got, want, "{url}");
            assert_eq!(
                postgres_endpoint(&got).unwrap(),
                tcp("127.0.0.1", 5432),
                "{got}"
            );
        }
    }
}
