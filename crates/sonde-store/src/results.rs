//! The one interface to "where results go": the local SQLite database, and optionally a
//! PostgreSQL database it is copied to.
//!
//! The lab and the agent write through [`Results`]: every record goes to SQLite first (so a
//! result survives PostgreSQL being away, the process being killed, or both), then
//! [`Results::sync`] copies what PostgreSQL lacks. Without a PostgreSQL URL, `sync` does
//! nothing and this is the SQLite store as before.

use std::path::Path;

use crate::error::StoreError;
use crate::pg::{is_postgres_url, Remote, SyncOutcome};
use crate::store::Store;

/// The local store and, when chosen, the PostgreSQL database it is copied to.
#[derive(Debug)]
pub struct Results {
    local: Store,
    remote: Option<Remote>,
}

impl Results {
    /// Opens the SQLite database at `local` (the buffer, and the store itself without
    /// PostgreSQL) and, when `store` is a `postgres://` URL, connects to it once to check the
    /// URL and migrate its schema.
    ///
    /// # Errors
    /// As [`Store::open`]; [`StoreError::Postgres`] when PostgreSQL cannot be reached at
    /// the start (so a wrong URL is told at once, not after an hour of tests);
    /// [`StoreError::Corrupt`] when `store` is neither `sqlite` nor a PostgreSQL URL.
    pub fn open(local: impl AsRef<Path>, store: Option<&str>) -> Result<Results, StoreError> {
        let remote = match store {
            None | Some("sqlite") => None,
            Some(url) if is_postgres_url(url) => {
                let mut r = Remote::new(url);
                r.connect()?;
                Some(r)
            }
            Some(other) => {
                return Err(StoreError::Corrupt {
                    path: other.to_owned(),
                    what: "a results store is `sqlite` or a postgres:// URL".into(),
                })
            }
        };
        Ok(Results {
            local: Store::open(local)?,
            remote,
        })
    }

    /// The local store, to write and read.
    pub fn local(&mut self) -> &mut Store {
        &mut self.local
    }

    /// The PostgreSQL database's URL without its password, when one is chosen.
    pub fn remote_target(&self) -> Option<&str> {
        self.remote.as_ref().map(Remote::target)
    }

    /// Copies what PostgreSQL lacks (nothing to do without PostgreSQL).
    ///
    /// # Errors
    /// As [`Remote::sync`]; the results stay in the local store and a later sync writes them.
    pub fn sync(&mut self) -> Result<SyncOutcome, StoreError> {
        match self.remote.as_mut() {
            Some(r) => r.sync(&self.local),
            None => Ok(SyncOutcome::default()),
        }
    }
}
