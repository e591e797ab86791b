//! The client's own certificate, for PostgreSQL servers that authenticate clients by
//! certificate (`hostssl ... cert` in `pg_hba.conf`): an operator who runs PostgreSQL that way
//! has already given each host its `sslcert` and `sslkey`, and the agent must use them as
//! every other client of that server does.
//!
//! They are found as libpq finds them: `sslcert` and `sslkey` in the URL, or else
//! `~/.postgresql/postgresql.crt` and `~/.postgresql/postgresql.key` when that certificate
//! file exists (without it, no certificate is offered). A key that others may read is refused,
//! as libpq refuses it: no group or world access when the key is the user's own, no more than
//! group read when root owns it. Keys protected by a passphrase (`sslpassword`) are not
//! read: they are refused with the command that writes the key in the clear.

use std::path::{Path, PathBuf};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::error::StoreError;

/// What the client shows a server that asks for a certificate.
#[derive(Debug)]
pub struct ClientCert {
    /// The client's certificate first, then any intermediates, as in the file.
    pub chain: Vec<CertificateDer<'static>>,
    pub key: PrivateKeyDer<'static>,
    /// Where they were read, for messages.
    pub cert_path: PathBuf,
    pub key_path: PathBuf,
}

/// The certificate and key of `sslcert` and `sslkey`, or libpq's defaults; `None` when
/// neither is given and `~/.postgresql/postgresql.crt` does not exist.
///
/// # Errors
/// [`StoreError::BadUrl`] naming the file that is missing, unreadable, holds nothing usable,
/// or (the key) is open to others.
pub fn load(
    cert: Option<&str>,
    key: Option<&str>,
    target: &str,
) -> Result<Option<ClientCert>, StoreError> {
    let bad = |what: String| StoreError::BadUrl {
        target: target.to_owned(),
        what,
    };
    let cert_path = match cert {
        Some(file) => PathBuf::from(file),
        None => {
            let default = in_home("postgresql.crt");
            if !default.exists() {
                return match key {
                    Some(k) => Err(bad(format!(
                        "sslkey {k} without sslcert (and no {} to go with it)",
                        default.display()
                    ))),
                    None => Ok(None),
                };
            }
            default
        }
    };
    let key_path = key.map_or_else(|| in_home("postgresql.key"), PathBuf::from);
    let chain = read_chain(&cert_path).map_err(&bad)?;
    check_key_access(&key_path).map_err(&bad)?;
    let key = read_key(&key_path).map_err(&bad)?;
    Ok(Some(ClientCert {
        chain,
        key,
        cert_path,
        key_path,
    }))
}

/// `~/.postgresql/NAME` (relative to the working directory without `HOME`, as libpq).
fn in_home(name: &str) -> PathBuf {
    let dir = std::env::var_os("HOME")
        .map(|h| Path::new(&h).join(".postgresql"))
        .unwrap_or_else(|| PathBuf::from(".postgresql"));
    dir.join(name)
}

fn read_chain(path: &Path) -> Result<Vec<CertificateDer<'static>>, String> {
    let shown = path.display();
    let chain = CertificateDer::pem_file_iter(path)
        .map_err(|e| format!("sslcert {shown}: {e}"))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("sslcert {shown}: {e}"))?;
    if chain.is_empty() {
        return Err(format!("sslcert {shown}: no certificate in it"));
    }
    Ok(chain)
}

fn read_key(path: &Path) -> Result<PrivateKeyDer<'static>, String> {
    let shown = path.display();
    let text = std::fs::read(path).map_err(|e| format!("sslkey {shown}: {e}"))?;
    // PKCS#8's encrypted form, or the older PEM headers of an encrypted RSA or EC key.
    let marks: [&[u8]; 2] = [
        b"-----BEGIN ENCRYPTED PRIVATE KEY-----",
        b"Proc-Type: 4,ENCRYPTED",
    ];
    if marks.iter().any(|m| text.windows(m.len()).any(|w| w == *m)) {
        return Err(format!(
            "sslkey {shown}: the key is protected by a passphrase, which sonde does not read \
             (sslpassword); write it in the clear, readable by its owner alone: \
             openssl pkey -in KEY -out KEY.plain && chmod 600 KEY.plain"
        ));
    }
    PrivateKeyDer::from_pem_slice(&text)
        .map_err(|e| format!("sslkey {shown}: no private key in it ({e})"))
}

/// libpq's rule for a private key file: the user's own key (root's too) is readable by
/// nobody else; a key root owns for another user may be readable by its group (services
/// sharing a key), no more.
fn check_key_access(path: &Path) -> Result<(), String> {
    use std::os::unix::fs::MetadataExt;
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("sslkey {shown}: {e}"))?;
    let mode = meta.mode() & 0o777;
    let me = sonde_platform::user::effective_uid();
    let too_open = if meta.uid() == me {
        mode & 0o077 != 0
    } else if meta.uid() == 0 {
        mode & 0o037 != 0
    } else {
        false
    };
    if too_open {
        return Err(format!(
            "sslkey {shown}: mode {mode:03o} lets others read the private key; it must be 600 \
             or less (640 or less when root owns it): chmod 600 {shown}"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_key_others_may_read_is_refused_with_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let key = dir.path().join("client.key");
        std::fs::write(&key, "key").unwrap();
        for (mode, ok) in [(0o600, true), (0o400, true), (0o640, false), (0o604, false)] {
            std::fs::set_permissions(&key, std::fs::Permissions::from_mode(mode)).unwrap();
            let got = check_key_access(&key);
            assert_eq!(got.is_ok(), ok, "mode {mode:o}: {got:?}");
            if let Err(e) = got {
                assert!(e.contains("chmod 600") && e.contains("client.key"), "{e}");
            }
        }
    }

    #[test]
    fn missing_unusable_and_encrypted_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let p = |name: &str| dir.path().join(name).display().to_string();
        let e = load(Some(&p("none.crt")), Some(&p("none.key")), "t").unwrap_err();
        assert!(e.to_string().contains("none.crt"), "{e}");
        std::fs::write(p("empty.crt"), "not a certificate\n").unwrap();
        let e = load(Some(&p("empty.crt")), None, "t").unwrap_err();
        assert!(e.to_string().contains("no certificate"), "{e}");
        let locked =
            "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIB\n-----END ENCRYPTED PRIVATE KEY-----\n";
        std::fs::write(p("locked.key"), locked).unwrap();
        std::fs::set_permissions(p("locked.key"), std::fs::Permissions::from_mode(0o600)).unwrap();
        let e = read_key(Path::new(&p("locked.key"))).unwrap_err();
        assert!(
            e.contains("passphrase") && e.contains("openssl pkey"),
            "{e}"
        );
        std::fs::write(p("junk.key"), "junk\n").unwrap();
        let e = read_key(Path::new(&p("junk.key"))).unwrap_err();
        assert!(e.contains("no private key"), "{e}");
    }
}
