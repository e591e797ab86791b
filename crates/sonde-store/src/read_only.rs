//! Opening a results database for reading (the report): a SQLite file, or a PostgreSQL
//! database copied into memory.
//!
//! Above both the SQLite [`Store`] and [`crate::pg`]: the PostgreSQL copy fills a `Store`, so
//! the choice between the two cannot sit in `Store`'s own module without a circle.

use std::path::Path;

use crate::error::StoreError;
use crate::pg::{self, is_postgres_url};
use crate::store::Store;

impl Store {
    /// Opens an existing database for reading only (the report). Never creates or migrates;
    /// a database of an older schema version is refused with [`StoreError::Corrupt`] naming
    /// the version (open it once with [`Store::open`] to migrate).
    ///
    /// # Errors
    /// As [`Store::open`]; also when the file does not exist.
    ///
    /// A `postgres://` or `postgresql://` URL instead of a path reads that PostgreSQL database
    /// (migrating it when needed, as any sonde connecting does): its runs are copied into an
    /// in-memory database, which is what the returned store reads.
    pub fn open_read_only(path: impl AsRef<Path>) -> Result<Store, StoreError> {
        if let Some(url) = path.as_ref().to_str().filter(|s| is_postgres_url(s)) {
            return pg::snapshot(url);
        }
        Self::open_with(path.as_ref(), true)
    }
}
