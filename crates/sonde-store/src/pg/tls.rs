//! TLS to PostgreSQL, with libpq's `sslmode` and `sslrootcert` meaning what they mean to
//! every other PostgreSQL client, since an operator's URL comes from there.
//!
//! The driver knows `sslmode` `disable`, `prefer` (its default, as libpq's) and `require`, and
//! leaves checking the server's certificate to the TLS connector. So the URL's TLS parameters
//! are taken out here: the driver is given `require` for `verify-ca` and `verify-full`, and
//! the connector (rustls, with `ring`: a C compiler is all it needs to build) checks what the
//! mode asks for:
//!
//! - `prefer`, `require`: encrypted, the certificate not checked (libpq's behaviour: these
//!   modes protect against eavesdropping, not against an impostor);
//! - `verify-ca`: the certificate chains to a root of `sslrootcert`;
//! - `verify-full`: and it names the host of the URL.
//!
//! `sslrootcert` is a PEM file, or `system` for the system's roots; without it the verifying
//! modes read `~/.postgresql/root.crt`, as libpq does. `sslcert` and `sslkey`, the client's own
//! certificate for servers that ask for one, are read in [`client_cert`]. One more of libpq's
//! parameters is translated here because the driver reads it in another unit:
//! `tcp_user_timeout`, milliseconds to libpq, seconds to the driver.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore};
use tokio_postgres_rustls::MakeRustlsConnect;

use super::client_cert;
use super::url::{pg_err, redact};
use crate::error::StoreError;

/// The system's roots on Debian and its derivatives (and where most distributions link it).
const SYSTEM_ROOTS: &str = "/etc/ssl/certs/ca-certificates.crt";

/// How much of the server's certificate is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verify {
    /// Nothing (no TLS, or TLS against eavesdropping only).
    Nothing,
    /// The chain, to a root of the trust file.
    Chain,
    /// The chain, and the host name.
    ChainAndName,
}

/// A URL's TLS wishes, apart from what the driver reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsSettings {
    pub verify: Verify,
    /// `sslrootcert` as written (`system`, or a file).
    pub root_cert: Option<String>,
    /// `sslcert` and `sslkey`: the client's certificate and key files, for servers that
    /// authenticate clients by certificate (libpq's defaults when not given).
    pub client_cert: Option<String>,
    pub client_key: Option<String>,
    /// Every parameter key the URL's query names, decoded: what the URL sets itself, which
    /// defaults must leave alone (crate::pg::liveness).
    pub url_keys: Vec<String>,
}

/// A URL split into the driver's configuration and the TLS settings it cannot hold.
///
/// # Errors
/// [`StoreError::Postgres`] when the driver refuses the rest of the URL;
/// [`StoreError::BadUrl`] for an `sslmode` that is not one of libpq's.
pub fn parse(url: &str) -> Result<(postgres::Config, TlsSettings), StoreError> {
    let target = redact(url);
    let mut settings = TlsSettings {
        verify: Verify::Nothing,
        root_cert: None,
        client_cert: None,
        client_key: None,
        url_keys: Vec::new(),
    };
    let (base, query) = url.split_once('?').unwrap_or((url, ""));
    let mut kept = Vec::new();
    let mut user_timeout_ms = None;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        let (key, value) = (decoded(key, &target)?, decoded(value, &target)?);
        settings.url_keys.push(key.clone());
        match (key.as_str(), value.as_str()) {
            // libpq's unit, milliseconds (the driver reads seconds): set on the
            // configuration below.
            ("tcp_user_timeout", v) => {
                user_timeout_ms = Some(v.parse::<u64>().map_err(|_| StoreError::BadUrl {
                    target: target.clone(),
                    what: format!("tcp_user_timeout={v}: expected milliseconds, as in libpq"),
                })?);
            }
            ("sslrootcert", v) => settings.root_cert = Some(v.to_owned()),
            ("sslcert", v) => settings.client_cert = Some(v.to_owned()),
            ("sslkey", v) => settings.client_key = Some(v.to_owned()),
            ("sslpassword", _) => {
                return Err(StoreError::BadUrl {
                    target,
                    what: "sslpassword: keys protected by a passphrase are not read; give sslkey a key in the clear, readable by its owner alone".into(),
                })
            }
            ("sslmode", "verify-ca") => {
                settings.verify = Verify::Chain;
                kept.push("sslmode=require".to_owned());
            }
            ("sslmode", "verify-full") => {
                settings.verify = Verify::ChainAndName;
                kept.push("sslmode=require".to_owned());
            }
            ("sslmode", "allow") => {
                return Err(StoreError::BadUrl {
                    target,
                    what: "sslmode=allow (plain first) is not offered: use prefer, require, verify-ca or verify-full".into(),
                })
            }
            ("sslmode", "disable" | "prefer" | "require") => kept.push(pair.to_owned()),
            ("sslmode", other) => {
                return Err(StoreError::BadUrl {
                    target,
                    what: format!(
                        "sslmode={other}: expected disable, prefer, require, verify-ca or verify-full"
                    ),
                })
            }
            _ => kept.push(pair.to_owned()),
        }
    }
    let rest = if kept.is_empty() {
        base.to_owned()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    let mut config: postgres::Config = rest.parse().map_err(pg_err(&target))?;
    if let Some(ms) = user_timeout_ms.filter(|&ms| ms > 0) {
        config.tcp_user_timeout(std::time::Duration::from_millis(ms));
    }
    Ok((config, settings))
}

/// A URL parameter's key or value percent-decoded, as the driver decodes the others (a trust
/// file's path may hold a space, written `%20`).
fn decoded(text: &str, target: &str) -> Result<String, StoreError> {
    percent_encoding::percent_decode_str(text)
        .decode_utf8()
        .map(|s| s.into_owned())
        .map_err(|_| StoreError::BadUrl {
            target: target.to_owned(),
            what: format!("{text}: not UTF-8 once percent-decoded"),
        })
}

/// The connector for `settings`; its trust file read now, so a missing one is told at once.
///
/// # Errors
/// [`StoreError::BadUrl`] naming the trust file when it cannot be read or holds no
/// certificate.
pub fn connector(settings: &TlsSettings, target: &str) -> Result<MakeRustlsConnect, StoreError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| tls_err(target, format!("TLS set-up: {e}")))?;
    let chain = match settings.verify {
        Verify::Nothing => None,
        Verify::Chain | Verify::ChainAndName => {
            let roots = roots(settings.root_cert.as_deref(), target)?;
            let webpki =
                WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                    .build()
                    .map_err(|e| tls_err(target, format!("TLS set-up: {e}")))?;
            Some(webpki)
        }
    };
    let checker = Checker {
        provider,
        chain,
        names_too: settings.verify == Verify::ChainAndName,
    };
    let builder = builder
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(checker));
    let client = client_cert::load(
        settings.client_cert.as_deref(),
        settings.client_key.as_deref(),
        target,
    )?;
    let config = match client {
        None => builder.with_no_client_auth(),
        Some(c) => builder.with_client_auth_cert(c.chain, c.key).map_err(|e| {
            tls_err(
                target,
                format!(
                    "sslcert {} with sslkey {}: not usable together ({e})",
                    c.cert_path.display(),
                    c.key_path.display()
                ),
            )
        })?,
    };
    Ok(MakeRustlsConnect::new(config))
}

fn tls_err(target: &str, what: String) -> StoreError {
    StoreError::BadUrl {
        target: target.to_owned(),
        what,
    }
}

/// The trust file `sslrootcert` names (`system`, a PEM file, or libpq's default).
fn roots(root_cert: Option<&str>, target: &str) -> Result<RootCertStore, StoreError> {
    let path: PathBuf = match root_cert {
        Some("system") => PathBuf::from(SYSTEM_ROOTS),
        Some(file) => PathBuf::from(file),
        None => std::env::var_os("HOME")
            .map(|h| Path::new(&h).join(".postgresql/root.crt"))
            .unwrap_or_else(|| PathBuf::from(".postgresql/root.crt")),
    };
    let shown = path.display();
    let certs = CertificateDer::pem_file_iter(&path)
        .map_err(|e| tls_err(target, format!("sslrootcert {shown}: {e}")))?;
    let mut store = RootCertStore::empty();
    for cert in certs {
        let cert = cert.map_err(|e| tls_err(target, format!("sslrootcert {shown}: {e}")))?;
        store
            .add(cert)
            .map_err(|e| tls_err(target, format!("sslrootcert {shown}: {e}")))?;
    }
    if store.is_empty() {
        return Err(tls_err(
            target,
            format!("sslrootcert {shown}: no certificate in it"),
        ));
    }
    Ok(store)
}

/// What a mode checks of the server's certificate: nothing (`prefer`, `require`), its chain
/// by webpki (`verify-ca`: a certificate that chains but names another host passes), or its
/// chain and name (`verify-full`). The handshake's signatures are checked in every mode.
#[derive(Debug)]
struct Checker {
    provider: Arc<CryptoProvider>,
    chain: Option<Arc<WebPkiServerVerifier>>,
    names_too: bool,
}

impl ServerCertVerifier for Checker {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let Some(chain) = &self.chain else {
            return Ok(ServerCertVerified::assertion());
        };
        match chain.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) if !self.names_too => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        verify_tls12_signature(message, cert, dss, algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        let algorithms = &self.provider.signature_verification_algorithms;
        verify_tls13_signature(message, cert, dss, algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use postgres::config::SslMode;

    #[test]
    fn libpq_modes_split_into_the_drivers_and_the_check() {
        let (c, s) = parse("postgres://u@h/db").unwrap();
        assert_eq!(
            (c.get_ssl_mode(), s.verify),
            (SslMode::Prefer, Verify::Nothing)
        );
        let (c, s) = parse("postgres://u@h/db?sslmode=require&connect_timeout=3").unwrap();
        assert_eq!(
            (c.get_ssl_mode(), s.verify),
            (SslMode::Require, Verify::Nothing)
        );
        let (c, s) = parse("postgres://u@h/db?sslmode=verify-ca&sslrootcert=/ca.pem").unwrap();
        assert_eq!(
            (c.get_ssl_mode(), s.verify),
            (SslMode::Require, Verify::Chain)
        );
        assert_eq!(s.root_cert.as_deref(), Some("/ca.pem"));
        let (c, s) = parse("postgres://u@h/db?sslmode=verify-full").unwrap();
        assert_eq!(
            (c.get_ssl_mode(), s.verify),
            (SslMode::Require, Verify::ChainAndName)
        );
        let (c, s) =
            parse("postgres://u@h/db?ssl%6Dode=verify%2Dfull&sslrootcert=/my%20certs/ca.pem")
                .unwrap();
        assert_eq!(
            (c.get_ssl_mode(), s.verify),
            (SslMode::Require, Verify::ChainAndName)
        );
        assert_eq!(s.root_cert.as_deref(), Some("/my certs/ca.pem"));
        let (c, s) = parse("postgres://u@h/db?sslcert=/c/me.crt&sslkey=/c/me%20.key").unwrap();
        assert_eq!(c.get_ssl_mode(), SslMode::Prefer);
        assert_eq!(
            (s.client_cert.as_deref(), s.client_key.as_deref()),
            (Some("/c/me.crt"), Some("/c/me .key"))
        );
        let e = parse("postgres://u@h/db?sslpassword=x").unwrap_err();
        assert!(e.to_string().contains("passphrase"), "{e}");
        let e = parse("postgres://u@h/db?sslrootcert=%FF").unwrap_err();
        assert!(e.to_string().contains("UTF-8"), "{e}");
        let (c, _) = parse("postgres://u@h/db?sslmode=disable").unwrap();
        assert_eq!(c.get_ssl_mode(), SslMode::Disable);
        for bad in ["sslmode=allow", "sslmode=always"] {
            let e = parse(&format!("postgres://u@h/db?{bad}")).unwrap_err();
            assert!(e.to_string().contains("sslmode"), "{bad}: {e}");
        }
    }

    #[test]
    fn a_trust_file_that_cannot_be_used_is_named() {
        let settings = |f: &str| TlsSettings {
            verify: Verify::ChainAndName,
            root_cert: Some(f.into()),
            client_cert: None,
            client_key: None,
            url_keys: Vec::new(),
        };
        let e = connector(&settings("/nonexistent/ca.pem"), "t")
            .err()
            .unwrap();
        assert!(e.to_string().contains("/nonexistent/ca.pem"), "{e}");
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let e = connector(&settings(&empty.display().to_string()), "t")
            .err()
            .unwrap();
        assert!(e.to_string().contains("no certificate"), "{e}");
        let plain = TlsSettings {
            verify: Verify::Nothing,
            root_cert: None,
            client_cert: None,
            client_key: None,
            url_keys: Vec::new(),
        };
        assert!(connector(&plain, "t").is_ok());
    }
}
