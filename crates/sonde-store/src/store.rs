//! [`Store`]: an open SQLite results database, and writing to it (opening and migrating,
//! runs, link settings, tests and their counters).
//!
//! The type is defined here, below every module that adds to it: reading runs back
//! ([`crate::load`]), write marks and pruning ([`crate::retain`]), the PostgreSQL copy
//! ([`crate::pg`]) and opening for reading, which may go through PostgreSQL
//! ([`crate::read_only`]). None of them is imported here.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OpenFlags};

use crate::error::StoreError;
use crate::records::{Cpu, LinkSettingsRecord, NewRun, RunId, RunStatus, TestRecord};
use crate::schema::{self, LATEST as SCHEMA_VERSION};

/// An open results database.
pub struct Store {
    conn: Connection,
    path: String,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store").field("path", &self.path).finish()
    }
}

/// SQLite integers are signed: seeds (u64) are stored bit for bit as i64.
fn seed_to_sql(seed: u64) -> i64 {
    i64::from_ne_bytes(seed.to_ne_bytes())
}

pub(crate) fn seed_from_sql(v: i64) -> u64 {
    u64::from_ne_bytes(v.to_ne_bytes())
}

/// Counters above i64::MAX cannot be stored; they saturate (no real interface gets there).
fn count_to_sql(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn json_text(v: &serde_json::Value) -> String {
    v.to_string()
}

impl Store {
    /// Opens (creating if needed) the database at `path` and brings its schema up to date.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] when the file cannot be opened or is not a database;
    /// [`StoreError::TooNew`] when a newer sonde wrote it.
    pub fn open(path: impl AsRef<Path>) -> Result<Store, StoreError> {
        Self::open_with(path.as_ref(), false)
    }

    /// A new, empty database in memory, named `name` in messages.
    pub(crate) fn open_memory(name: &str) -> Result<Store, StoreError> {
        let sql = |source| StoreError::Sqlite {
            path: name.to_owned(),
            source,
        };
        let mut conn = Connection::open_in_memory().map_err(sql)?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(sql)?;
        schema::migrate(&mut conn, name)?;
        Ok(Store {
            conn,
            path: name.to_owned(),
        })
    }

    pub(crate) fn open_with(path: &Path, read_only: bool) -> Result<Store, StoreError> {
        let name = path.display().to_string();
        let sql = |source| StoreError::Sqlite {
            path: name.clone(),
            source,
        };
        let mut conn = if read_only {
            Self::open_for_reading(path).map_err(sql)?
        } else {
            let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
                | OpenFlags::SQLITE_OPEN_CREATE
                | OpenFlags::SQLITE_OPEN_NO_MUTEX;
            Connection::open_with_flags(path, flags).map_err(sql)?
        };
        conn.busy_timeout(std::time::Duration::from_secs(5))
            .map_err(sql)?;
        if read_only {
            let store = Store { conn, path: name };
            store.check_version()?;
            return Ok(store);
        }
        // WAL: a reader (the report) never blocks the lab's writes; NORMAL sync keeps every
        // committed test across a crash of the process.
        conn.pragma_update(None, "journal_mode", "WAL")
            .map_err(sql)?;
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(sql)?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(sql)?;
        schema::migrate(&mut conn, &name)?;
        Ok(Store { conn, path: name })
    }

    /// A connection that never writes. A read-only connection to a WAL database leaves its
    /// `-wal` and `-shm` files behind when it closes (it may not checkpoint or delete them), so
    /// the file is opened for writing (never created) with every write refused
    /// (`query_only`): the last connection to close then removes them. A file this user may
    /// not write is opened read-only, as before.
    fn open_for_reading(path: &Path) -> rusqlite::Result<Connection> {
        let rw = OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let ro = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, rw)
            .or_else(|_| Connection::open_with_flags(path, ro))?;
        conn.pragma_update(None, "query_only", "ON")?;
        Ok(conn)
    }

    fn check_version(&self) -> Result<(), StoreError> {
        let v: Result<i64, _> =
            self.conn
                .query_row("SELECT max(version) FROM schema_version", [], |r| r.get(0));
        match v {
            Ok(v) if v == i64::from(SCHEMA_VERSION) => Ok(()),
            Ok(v) if v > i64::from(SCHEMA_VERSION) => Err(StoreError::TooNew {
                path: self.path.clone(),
                found: u32::try_from(v).unwrap_or(u32::MAX),
                supported: SCHEMA_VERSION,
            }),
            Ok(v) => Err(self.corrupt(format!(
                "schema version {v} is older than {SCHEMA_VERSION}: open it with `sonde lab` once to migrate"
            ))),
            Err(e) => Err(self.corrupt(format!("not a sonde results database ({e})"))),
        }
    }

    pub(crate) fn sql(&self, source: rusqlite::Error) -> StoreError {
        StoreError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    pub(crate) fn corrupt(&self, what: String) -> StoreError {
        StoreError::Corrupt {
            path: self.path.clone(),
            what,
        }
    }

    /// The path the store was opened with.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The schema version of the open database (always [`SCHEMA_VERSION`] after `open`).
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] when the query fails.
    pub fn schema_version(&self) -> Result<u32, StoreError> {
        let v: i64 = self
            .conn
            .query_row("SELECT max(version) FROM schema_version", [], |r| r.get(0))
            .map_err(|e| self.sql(e))?;
        Ok(u32::try_from(v).unwrap_or(0))
    }

    /// Records the start of a run and its link settings; returns its id.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] when the insert fails (nothing is stored then).
    pub fn begin_run(&mut self, run: &NewRun) -> Result<RunId, StoreError> {
        let path = self.path.clone();
        let sql = |source| StoreError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self.conn.transaction().map_err(sql)?;
        tx.execute(
            "INSERT INTO runs (scenario_name, scenario_toml, sonde_version, hostname, kernel,
                host_info_json, seed, started_unix, status)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 'running')",
            params![
                run.scenario_name,
                run.scenario_toml,
                run.sonde_version,
                run.hostname,
                run.kernel,
                json_text(&run.host_info),
                seed_to_sql(run.seed),
                run.started_unix,
            ],
        )
        .map_err(sql)?;
        let id = RunId(tx.last_insert_rowid());
        insert_settings(&tx, id, &run.settings, "INSERT").map_err(sql)?;
        tx.commit().map_err(sql)?;
        Ok(id)
    }

    /// Adds link settings to a run begun before (an agent's peers added by a reload); a
    /// name the run has already is left as it is. Copies to PostgreSQL bring them over.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] when the insert fails (none of them is stored then).
    pub fn add_settings(
        &mut self,
        run: RunId,
        settings: &[LinkSettingsRecord],
    ) -> Result<(), StoreError> {
        let path = self.path.clone();
        let sql = |source| StoreError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self.conn.transaction().map_err(sql)?;
        insert_settings(&tx, run, settings, "INSERT OR IGNORE").map_err(sql)?;
        tx.commit().map_err(sql)
    }

    /// Marks a run as running again (for `--resume`).
    ///
    /// # Errors
    /// [`StoreError::NoSuchRun`] when there is no such run.
    pub fn resume_run(&mut self, run: RunId) -> Result<(), StoreError> {
        let n = self
            .conn
            .execute(
                "UPDATE runs SET status = 'running', ended_unix = NULL WHERE id = ?1",
                [run.0],
            )
            .map_err(|e| self.sql(e))?;
        self.expect_run(n, run)
    }

    fn expect_run(&self, rows: usize, run: RunId) -> Result<(), StoreError> {
        if rows == 0 {
            Err(StoreError::NoSuchRun {
                path: self.path.clone(),
                run,
            })
        } else {
            Ok(())
        }
    }

    /// Records one test (replacing an earlier record with the same matrix id, so a retried
    /// test keeps only its last outcome). One transaction.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] when the write fails (nothing of this test is stored then).
    pub fn record_test(&mut self, run: RunId, test: &TestRecord) -> Result<(), StoreError> {
        self.record_tests(run, std::slice::from_ref(test))
    }

    /// Records several tests in one transaction (all or none).
    ///
    /// # Errors
    /// As [`Store::record_test`].
    pub fn record_tests(&mut self, run: RunId, tests: &[TestRecord]) -> Result<(), StoreError> {
        let path = self.path.clone();
        let sql = |source| StoreError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self.conn.transaction().map_err(sql)?;
        {
            let mut del = tx
                .prepare_cached("DELETE FROM tests WHERE run_id = ?1 AND matrix_id = ?2")
                .map_err(sql)?;
            let mut ins = tx.prepare_cached(INSERT_TEST).map_err(sql)?;
            let mut ins_if = tx.prepare_cached(INSERT_COUNTERS).map_err(sql)?;
            for t in tests {
                del.execute(params![run.0, t.matrix_id]).map_err(sql)?;
                let cpu = |c: &Option<Cpu>| c.map(|c| (c.total, c.user, c.system)).unzip3();
                let (ct, cu, cs) = cpu(&t.client.cpu);
                let (st, su, ss) = cpu(&t.server.cpu);
                ins.execute(params![
                    run.0,
                    t.matrix_id,
                    t.ordinal,
                    t.settings,
                    t.test_name,
                    t.repetition,
                    seed_to_sql(t.seed),
                    t.kind,
                    t.protocol,
                    json_text(&t.parameters),
                    t.link_status.as_ref().map(json_text),
                    t.started_unix,
                    t.ended_unix,
                    t.status.as_str(),
                    t.failure_reason,
                    t.result_path,
                    t.result_json,
                    ct,
                    cu,
                    cs,
                    st,
                    su,
                    ss,
                    t.stage_stats.as_ref().map(json_text),
                ])
                .map_err(sql)?;
                for (endpoint, end) in [("client", &t.client), ("server", &t.server)] {
                    let Some(tr) = &end.traffic else { continue };
                    let (b, a) = (&tr.before, &tr.after);
                    ins_if
                        .execute(params![
                            run.0,
                            t.matrix_id,
                            endpoint,
                            tr.interface,
                            count_to_sql(b.rx_packets),
                            count_to_sql(b.rx_bytes),
                            count_to_sql(b.tx_packets),
                            count_to_sql(b.tx_bytes),
                            count_to_sql(a.rx_packets),
                            count_to_sql(a.rx_bytes),
                            count_to_sql(a.tx_packets),
                            count_to_sql(a.tx_bytes),
                        ])
                        .map_err(sql)?;
                }
            }
        }
        tx.commit().map_err(sql)
    }

    /// Records the end of a run.
    ///
    /// # Errors
    /// [`StoreError::NoSuchRun`] when there is no such run.
    pub fn finish_run(
        &mut self,
        run: RunId,
        status: RunStatus,
        ended_unix: f64,
    ) -> Result<(), StoreError> {
        let n = self
            .conn
            .execute(
                "UPDATE runs SET status = ?2, ended_unix = ?3 WHERE id = ?1",
                params![run.0, status.as_str(), ended_unix],
            )
            .map_err(|e| self.sql(e))?;
        self.expect_run(n, run)
    }

    /// The matrix ids already recorded in `run`, succeeded or failed: what `--resume` skips.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] when the query fails.
    pub fn completed_ids(&self, run: RunId) -> Result<BTreeSet<String>, StoreError> {
        let mut st = self
            .conn
            .prepare("SELECT matrix_id FROM tests WHERE run_id = ?1")
            .map_err(|e| self.sql(e))?;
        let rows = st
            .query_map([run.0], |r| r.get::<_, String>(0))
            .map_err(|e| self.sql(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.sql(e))
    }

    /// How many tests each run recorded and how many of those failed, as `(run, tests,
    /// failed)` by run id; a run without a recorded test is absent.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] when the query fails.
    pub fn test_counts(&self) -> Result<Vec<(RunId, u64, u64)>, StoreError> {
        let mut st = self
            .conn
            .prepare(
                "SELECT run_id, count(*), sum(status = 'failed') FROM tests
                 GROUP BY run_id ORDER BY run_id",
            )
            .map_err(|e| self.sql(e))?;
        let rows = st
            .query_map([], |r| {
                let (id, n, failed): (i64, i64, i64) = (r.get(0)?, r.get(1)?, r.get(2)?);
                let count = |v: i64| u64::try_from(v).unwrap_or(0);
                Ok((RunId(id), count(n), count(failed)))
            })
            .map_err(|e| self.sql(e))?;
        rows.collect::<Result<_, _>>().map_err(|e| self.sql(e))
    }

    /// Where the raw result of `matrix_id` goes under the output directory `dir`:
    /// `dir/raw/SETTINGS/TEST/REPETITION.json`. Each component is reduced to
    /// `[A-Za-z0-9._-]` (others become `_`; `.` and `..` become `_`), so a name in a scenario
    /// file can never point outside `dir/raw`.
    pub fn raw_path(dir: impl AsRef<Path>, matrix_id: &str) -> PathBuf {
        let mut p = dir.as_ref().join("raw");
        let parts: Vec<&str> = matrix_id.split('/').collect();
        for (i, part) in parts.iter().enumerate() {
            let mut clean: String = part
                .chars()
                .map(|c| {
                    if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            if clean.is_empty() || clean.chars().all(|c| c == '.') {
                clean = "_".into();
            }
            if i + 1 == parts.len() {
                clean.push_str(".json");
            }
            p.push(clean);
        }
        p
    }

    pub(crate) fn conn(&self) -> &Connection {
        &self.conn
    }

    pub(crate) fn conn_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }
}

/// Writes `settings` as `run`'s link settings with `verb` (`INSERT`, or `INSERT OR IGNORE`
/// to leave a name the run has as it is).
fn insert_settings(
    tx: &rusqlite::Transaction<'_>,
    run: RunId,
    settings: &[LinkSettingsRecord],
    verb: &str,
) -> rusqlite::Result<()> {
    let mut ins = tx.prepare(&format!(
        "{verb} INTO link_settings (run_id, name, ordinal, settings_json, backend_plan_json)
         VALUES (?1, ?2, ?3, ?4, ?5)"
    ))?;
    for s in settings {
        ins.execute(params![
            run.0,
            s.name,
            s.ordinal,
            json_text(&s.settings),
            s.backend_plan.as_ref().map(json_text),
        ])?;
    }
    Ok(())
}

const INSERT_TEST: &str = "INSERT INTO tests (run_id, matrix_id, ordinal, settings, test_name,
    repetition, seed, kind, protocol, parameters_json, link_status_json, started_unix,
    ended_unix, status, failure_reason, result_path, result_json, client_cpu_total,
    client_cpu_user, client_cpu_system, server_cpu_total, server_cpu_user, server_cpu_system,
    stage_stats_json)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
    ?19, ?20, ?21, ?22, ?23, ?24)";

const INSERT_COUNTERS: &str = "INSERT INTO interface_counters (run_id, matrix_id, endpoint,
    interface, before_rx_packets, before_rx_bytes, before_tx_packets, before_tx_bytes,
    after_rx_packets, after_rx_bytes, after_tx_packets, after_tx_bytes)
    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)";

/// `Option<(a, b, c)>` into three options.
trait Unzip3<A, B, C> {
    fn unzip3(self) -> (Option<A>, Option<B>, Option<C>);
}

impl<A, B, C> Unzip3<A, B, C> for Option<(A, B, C)> {
    fn unzip3(self) -> (Option<A>, Option<B>, Option<C>) {
        match self {
            Some((a, b, c)) => (Some(a), Some(b), Some(c)),
            None => (None, None, None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_paths_stay_inside() {
        let p = Store::raw_path("/out", "loss-5/tcp-cubic/1");
        assert_eq!(p, PathBuf::from("/out/raw/loss-5/tcp-cubic/1.json"));
        let p = Store::raw_path("/out", "../../etc/x y/2");
        assert_eq!(p, PathBuf::from("/out/raw/_/_/etc/x_y/2.json"));
        assert_eq!(Store::raw_path("d", ""), PathBuf::from("d/raw/_.json"));
    }

    #[test]
    fn seeds_round_trip() {
        for s in [0, 1, u64::MAX, 1 << 63] {
            assert_eq!(seed_from_sql(seed_to_sql(s)), s);
        }
    }
}
