//! Naming a PostgreSQL database in messages: telling its URL from a path, hiding the
//! password, and the driver's error with its causes (and a hint for TLS alerts).
//!
//! A leaf of `pg`: the URL parser ([`super::tls`]), the endpoint, the schema and row copies and
//! the sync all report through it, and it uses none of them.

use crate::error::StoreError;

/// Whether `s` names a PostgreSQL database (`postgres://` or `postgresql://` URL).
pub fn is_postgres_url(s: &str) -> bool {
    s.starts_with("postgres://") || s.starts_with("postgresql://")
}

/// `url` without its password, for messages.
pub(crate) fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_owned();
    };
    let (auth, host) = match rest.rsplit_once('@') {
        Some((auth, host)) => (Some(auth), host),
        None => (None, rest),
    };
    match auth.and_then(|a| a.split_once(':')) {
        Some((user, _)) => format!("{scheme}://{user}:***@{host}"),
        None => url.to_owned(),
    }
}

pub(crate) fn pg_err(target: &str) -> impl Fn(postgres::Error) -> StoreError + '_ {
    move |source| {
        let mut detail = source.to_string();
        let mut cause = std::error::Error::source(&source);
        while let Some(c) = cause {
            detail.push_str(": ");
            detail.push_str(&c.to_string());
            cause = c.source();
        }
        if let Some(hint) = tls_hint(&detail) {
            detail.push_str(hint);
        }
        StoreError::Postgres {
            target: target.to_owned(),
            detail,
            source,
        }
    }
}

/// What a TLS alert from the server means here, where the alert's name alone is cryptic.
fn tls_hint(detail: &str) -> Option<&'static str> {
    if detail.contains("fatal alert: UnknownCA") {
        Some(" (the server does not trust the issuer of the client certificate: sslcert must be signed by a CA of the server's ssl_ca_file)")
    } else if detail.contains("fatal alert: CertificateRequired") {
        Some(" (the server wants a client certificate: give sslcert and sslkey)")
    } else {
        None
    }
}
