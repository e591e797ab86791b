//! The schema in PostgreSQL's dialect, and its migrations.
//!
//! The migrations are SQLite's (`crate::schema`, documented in `SCHEMA.md`), translated by
//! [`dialect`]: SQLite's `INTEGER` becomes `BIGINT` (seeds and counters are 64-bit), `REAL`
//! becomes `DOUBLE PRECISION` (PostgreSQL's `REAL` is 32-bit and would round times), and the
//! run id is a `BIGSERIAL`. One version number therefore means one schema on both.
//!
//! A transaction-level advisory lock, taken before anything else, makes sondes connecting at
//! once migrate one after the other: a fleet of agents started together against a fresh
//! database would otherwise race on the first `CREATE TABLE` (PostgreSQL's `IF NOT EXISTS`
//! does not serialise concurrent creators; the loser fails on `pg_type`'s unique index).

use postgres::Client;

use super::url::pg_err;
use crate::error::StoreError;
use crate::schema::MIGRATIONS;

/// A migration of the SQLite schema spelt for PostgreSQL: the run id becomes a `BIGSERIAL`,
/// `INTEGER` becomes `BIGINT` and `REAL` becomes `DOUBLE PRECISION`. The schema is written
/// once, in SQLite's dialect, so the two cannot drift apart.
pub(crate) fn dialect(sqlite: &str) -> String {
    sqlite
        .replace("INTEGER PRIMARY KEY", "BIGSERIAL PRIMARY KEY")
        .replace(" INTEGER", " BIGINT")
        .replace(" REAL", " DOUBLE PRECISION")
}

/// The advisory lock key of migrations ("sonde" in ASCII).
const MIGRATION_LOCK: i64 = 0x73_6f_6e_64_65;

/// Brings the PostgreSQL schema to the latest version, in one transaction.
///
/// # Errors
/// [`StoreError::TooNew`] when a newer sonde wrote the database; [`StoreError::Postgres`]
/// when a statement fails (the transaction is rolled back).
pub(crate) fn migrate(client: &mut Client, target: &str) -> Result<u32, StoreError> {
    let latest = MIGRATIONS.len() as u32;
    let mut tx = client.transaction().map_err(pg_err(target))?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .map_err(pg_err(target))?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS schema_version (version BIGINT NOT NULL);
         LOCK TABLE schema_version IN EXCLUSIVE MODE;",
    )
    .map_err(pg_err(target))?;
    let row = tx
        .query_one("SELECT max(version) FROM schema_version", &[])
        .map_err(pg_err(target))?;
    let stored: Option<i64> = row.get(0);
    let found = u32::try_from(stored.unwrap_or(0)).unwrap_or(u32::MAX);
    if found > latest {
        return Err(StoreError::TooNew {
            path: target.to_owned(),
            found,
            supported: latest,
        });
    }
    if stored.is_none() {
        tx.execute("INSERT INTO schema_version (version) VALUES (0)", &[])
            .map_err(pg_err(target))?;
    }
    for (i, m) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        tx.batch_execute(&dialect(m)).map_err(pg_err(target))?;
        tx.execute("UPDATE schema_version SET version = $1", &[&(i as i64 + 1)])
            .map_err(pg_err(target))?;
    }
    tx.commit().map_err(pg_err(target))?;
    Ok(found)
}

#[cfg(test)]
mod tests {
    #[test]
    fn no_sqlite_only_types_remain() {
        for m in crate::schema::MIGRATIONS {
            let pg = super::dialect(m);
            for word in pg.split(|c: char| !c.is_ascii_alphanumeric()) {
                assert!(word != "INTEGER" && word != "REAL", "{word} left in {pg}");
            }
            assert!(pg.contains("id              BIGSERIAL PRIMARY KEY"));
        }
    }
}
