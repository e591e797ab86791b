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

use super::url::redact;
use crate::error::StoreError;

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
/// [`StoreError::Postgres`] when the driver refuses the URL, [`StoreError::BadUrl`] when it
/// names no host at all.
pub fn postgres_endpoint(url: &str) -> Result<PostgresEndpoint, StoreError> {
    let target = redact(url);
    let (config, _) = super::tls::parse(url)?;
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
        None => Err(StoreError::BadUrl {
            target,
            what: "names no host".into(),
        }),
    }
}

/// `url` leading to `addr` instead: the same user, password, database and options, its
/// first host name kept (for TLS: `verify-full` checks the certificate against it) with
/// `hostaddr` and the port set to `addr`, other hosts dropped. A URL whose first host is a
/// Unix socket gets `addr` as its host.
pub fn postgres_url_via(url: &str, addr: SocketAddr) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("postgres", url));
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    let user = authority.rfind('@').map_or("", |at| &authority[..=at]);
    let (path, query) = tail.split_once('?').unwrap_or((tail, ""));
    let mut kept: Vec<String> = query
        .split('&')
        .filter(|p| !p.is_empty())
        .filter(|p| {
            let key = p.split_once('=').map_or(*p, |(k, _)| k);
            !matches!(key, "host" | "hostaddr" | "port")
        })
        .map(str::to_owned)
        .collect();
    let name = super::tls::parse(url)
        .ok()
        .and_then(|(c, _)| match c.get_hosts().first() {
            Some(Host::Tcp(h)) => Some(h.clone()),
            _ => None,
        });
    let host = match name {
        Some(h) => {
            kept.push(format!("hostaddr={}", addr.ip()));
            if h.contains(':') {
                format!("[{h}]:{}", addr.port())
            } else {
                format!("{h}:{}", addr.port())
            }
        }
        None => addr.to_string(),
    };
    let mut out = format!("{scheme}://{user}{host}{path}");
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
    fn the_rewrite_keeps_everything_but_where_it_connects() {
        let via: SocketAddr = "127.0.0.1:5432".parse().unwrap();
        let cases = [
            (
                "postgres://sonde:s3cret@db.example:6000/results?sslmode=verify-full",
                "postgres://sonde:s3cret@db.example:5432/results?sslmode=verify-full&hostaddr=127.0.0.1",
            ),
            (
                "postgresql://h/db",
                "postgresql://h:5432/db?hostaddr=127.0.0.1",
            ),
            (
                "postgres://u@[::1]:7/db",
                "postgres://u@[::1]:5432/db?hostaddr=127.0.0.1",
            ),
            (
                "postgres://u@/db?host=/run/pg&port=5433&application_name=mesh",
                "postgres://u@127.0.0.1:5432/db?application_name=mesh",
            ),
            (
                "postgres://u@a:1,b:2?connect_timeout=3",
                "postgres://u@a:5432?connect_timeout=3&hostaddr=127.0.0.1",
            ),
            (
                "postgres://u@name/db?hostaddr=10.0.0.9",
                "postgres://u@name:5432/db?hostaddr=127.0.0.1",
            ),
        ];
        for (url, want) in cases {
            let got = postgres_url_via(url, via);
            assert_eq!(got, want, "{url}");
            let (config, _) = crate::pg::tls::parse(&got).unwrap();
            let ip: std::net::IpAddr = "127.0.0.1".parse().unwrap();
            let connects_to = config.get_hostaddrs().first().copied().or_else(|| {
                match config.get_hosts().first() {
                    Some(Host::Tcp(h)) => h.parse().ok(),
                    _ => None,
                }
            });
            assert_eq!(connects_to, Some(ip), "{got}");
            assert_eq!(config.get_ports(), [5432], "{got}");
        }
    }
}
