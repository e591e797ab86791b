//! The schema and its migrations.
//!
//! The schema is versioned by the single row of `schema_version`. [`MIGRATIONS`] is an ordered
//! list: migration *i* (0-based) takes the database from version *i* to version *i + 1*. At open,
//! every migration after the stored version runs in one transaction together with the version
//! update, so a crash mid-migration leaves the previous version intact. A database written by a
//! newer sonde (a version above [`LATEST`]) is refused rather than guessed at. Never edit a
//! released migration: append a new one. `SCHEMA.md` beside `Cargo.toml` documents every table.

use rusqlite::{Connection, OptionalExtension};

use crate::error::StoreError;

/// Version 1: runs, link settings, tests and interface counters.
const V1: &str = r#"
CREATE TABLE runs (
    id              INTEGER PRIMARY KEY,
    scenario_name   TEXT    NOT NULL,
    scenario_toml   TEXT    NOT NULL,
    sonde_version   TEXT    NOT NULL,
    hostname        TEXT    NOT NULL,
    kernel          TEXT    NOT NULL,
    host_info_json  TEXT    NOT NULL,
    seed            INTEGER NOT NULL,
    started_unix    REAL    NOT NULL,
    ended_unix      REAL,
    status          TEXT    NOT NULL
        CHECK (status IN ('running', 'completed', 'interrupted', 'failed'))
);

CREATE TABLE link_settings (
    run_id              INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    name                TEXT    NOT NULL,
    ordinal             INTEGER NOT NULL,
    settings_json       TEXT    NOT NULL,
    backend_plan_json   TEXT,
    PRIMARY KEY (run_id, name)
);

CREATE TABLE tests (
    run_id              INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
    matrix_id           TEXT    NOT NULL,
    ordinal             INTEGER NOT NULL,
    settings            TEXT    NOT NULL,
    test_name           TEXT    NOT NULL,
    repetition          INTEGER NOT NULL,
    seed                INTEGER NOT NULL,
    kind                TEXT    NOT NULL,
    protocol            TEXT,
    parameters_json     TEXT    NOT NULL,
    link_status_json    TEXT,
    started_unix        REAL    NOT NULL,
    ended_unix          REAL    NOT NULL,
    status              TEXT    NOT NULL CHECK (status IN ('ok', 'failed')),
    failure_reason      TEXT,
    result_path         TEXT,
    result_json         TEXT,
    client_cpu_total    REAL,
    client_cpu_user     REAL,
    client_cpu_system   REAL,
    server_cpu_total    REAL,
    server_cpu_user     REAL,
    server_cpu_system   REAL,
    stage_stats_json    TEXT,
    PRIMARY KEY (run_id, matrix_id)
);

CREATE INDEX tests_by_order ON tests (run_id, ordinal);

CREATE TABLE interface_counters (
    run_id          INTEGER NOT NULL,
    matrix_id       TEXT    NOT NULL,
    endpoint        TEXT    NOT NULL CHECK (endpoint IN ('client', 'server')),
    interface       TEXT    NOT NULL,
    before_rx_packets INTEGER NOT NULL,
    before_rx_bytes   INTEGER NOT NULL,
    before_tx_packets INTEGER NOT NULL,
    before_tx_bytes   INTEGER NOT NULL,
    after_rx_packets  INTEGER NOT NULL,
    after_rx_bytes    INTEGER NOT NULL,
    after_tx_packets  INTEGER NOT NULL,
    after_tx_bytes    INTEGER NOT NULL,
    PRIMARY KEY (run_id, matrix_id, endpoint),
    FOREIGN KEY (run_id, matrix_id) REFERENCES tests(run_id, matrix_id) ON DELETE CASCADE
);
"#;

/// The migrations, in order; the schema version is the number applied.
pub(crate) const MIGRATIONS: &[&str] = &[V1];

/// The schema version this build writes and reads.
pub const LATEST: u32 = MIGRATIONS.len() as u32;

/// The stored version: 0 for an empty database.
fn stored_version(conn: &Connection) -> rusqlite::Result<u32> {
    let has_table: Option<String> = conn
        .query_row(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    if has_table.is_none() {
        return Ok(0);
    }
    let v: Option<i64> = conn
        .query_row("SELECT max(version) FROM schema_version", [], |r| r.get(0))
        .optional()?
        .flatten();
    Ok(v.map_or(0, |v| u32::try_from(v).unwrap_or(u32::MAX)))
}

/// Brings the schema to [`LATEST`]; returns the version found before.
///
/// # Errors
/// [`StoreError::TooNew`] when the database has a later version than this build knows;
/// [`StoreError::Sqlite`] when a statement fails (the transaction is rolled back).
pub(crate) fn migrate(conn: &mut Connection, path: &str) -> Result<u32, StoreError> {
    let sql = |source| StoreError::Sqlite {
        path: path.to_owned(),
        source,
    };
    let tx = conn
        .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)
        .map_err(sql)?;
    let found = stored_version(&tx).map_err(sql)?;
    if found > LATEST {
        return Err(StoreError::TooNew {
            path: path.to_owned(),
            found,
            supported: LATEST,
        });
    }
    if found == LATEST {
        return Ok(found);
    }
    if found == 0 {
        tx.execute_batch("CREATE TABLE schema_version (version INTEGER NOT NULL)")
            .map_err(sql)?;
        tx.execute("INSERT INTO schema_version (version) VALUES (0)", [])
            .map_err(sql)?;
    }
    for (i, m) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        tx.execute_batch(m).map_err(sql)?;
        tx.execute("UPDATE schema_version SET version = ?1", [i as i64 + 1])
            .map_err(sql)?;
    }
    tx.commit().map_err(sql)?;
    Ok(found)
}
