//! PostgreSQL as a results database: the same tables as SQLite, reached with the `postgres`
//! driver.
//!
//! Why a copy from SQLite rather than writing PostgreSQL directly: a measurement must never
//! be lost because the database is away. The local SQLite database is always written first
//! (one transaction per test, as without PostgreSQL) and is the buffer; [`Remote::sync`]
//! then copies to PostgreSQL whatever it lacks, run by run in one transaction each. When
//! PostgreSQL is down the copy fails, the results stay in SQLite, and the next sync (after
//! the next test, the next run, or the agent's next round) writes them; nothing is written
//! twice because a run is found again by its identity (host, scenario, seed, start time) and
//! a test by its matrix id and end time.
//!
//! A [`Remote`] remembers, per local run, the [`WriteMark`] its copies have reached on the
//! current connection, so later syncs look only at tests written since (a handful of rows)
//! rather than comparing every test of the run on both sides, whose cost grew with an
//! agent's history (14 ms at 2,200 tests, 104 ms at 20,000). Every new connection, and so every
//! sync after an outage, starts with one full comparison.
//!
//! Rows travel as JSON objects keyed by column name (`json_populate_record` on the way in,
//! `row_to_json` on the way out), so one generic copy serves every table and the column list
//! lives in the schema alone. The report reads PostgreSQL by copying it into an in-memory
//! SQLite database ([`crate::Store::open_read_only`] with a `postgres://` URL) and reading that
//! with the same code as a file.

mod answer;
mod client_cert;
mod endpoint;
mod liveness;
mod rows;
pub(crate) mod schema;
mod tls;
mod url;

use std::collections::HashMap;
use std::time::Duration;

use postgres::Client;
use serde_json::{Map, Value};

use crate::error::StoreError;
use crate::retain::WriteMark;
use crate::store::Store;

pub use endpoint::{postgres_endpoint, postgres_url_via, PostgresEndpoint};
pub use url::is_postgres_url;
use url::{pg_err, redact};

/// How long a connection attempt may take before the sync gives up until next time.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// Checks that `url` is a PostgreSQL URL the driver accepts, without connecting: so that a
/// long-running process refuses a malformed URL at once, yet starts while the server is away.
///
/// # Errors
/// [`StoreError::Postgres`] naming what the driver refused (the password hidden);
/// [`StoreError::BadUrl`] when `url` is not a `postgres://` or `postgresql://` URL at all,
/// its `sslmode` is not libpq's, or the trust file of a verifying mode cannot be read.
pub fn check_postgres_url(url: &str) -> Result<(), StoreError> {
    let target = redact(url);
    if !is_postgres_url(url) {
        return Err(StoreError::BadUrl {
            target,
            what: "not a postgres:// or postgresql:// URL".into(),
        });
    }
    let (_, settings) = tls::parse(url)?;
    // The trust file of a verifying mode is read now: a missing one is a bad URL too.
    tls::connector(&settings, &target).map(|_| ())
}

/// Time the server has to answer once the socket is connected (the start-up exchange and
/// the migration), on top of the connect time-out.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

/// Connects to `url` (with a 5 s connect time-out unless the URL sets one) and migrates,
/// waiting at most the connect time-out plus [`ANSWER_TIMEOUT`] in all (see [`answer`]).
///
/// # Errors
/// [`StoreError::Postgres`] when the URL is invalid or the server refuses or is away;
/// [`StoreError::PostgresSilent`] when it does not answer in time;
/// [`StoreError::TooNew`] when a newer sonde wrote the schema.
pub(crate) fn connect(url: &str) -> Result<Client, StoreError> {
    let target = redact(url);
    let (mut config, settings) = tls::parse(url)?;
    liveness::apply_defaults(&mut config, &settings.url_keys);
    let tls = tls::connector(&settings, &target)?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(CONNECT_TIMEOUT);
    }
    let limit = config
        .get_connect_timeout()
        .copied()
        .unwrap_or(CONNECT_TIMEOUT)
        + ANSWER_TIMEOUT;
    let for_helper = target.clone();
    answer::within(&target, limit, move || {
        connect_now(config, tls, &for_helper)
    })
}

/// The connect and migration themselves, unbounded (run by [`connect`] on a helper thread).
fn connect_now(
    config: postgres::Config,
    tls: tokio_postgres_rustls::MakeRustlsConnect,
    target: &str,
) -> Result<Client, StoreError> {
    let mut client = config.connect(tls).map_err(pg_err(target))?;
    // Floating-point values out of PostgreSQL must read back bit for bit (times, CPU shares):
    // ask for the exact shortest form whatever the server's default.
    client
        .batch_execute("SET extra_float_digits = 3")
        .map_err(pg_err(target))?;
    schema::migrate(&mut client, target)?;
    Ok(client)
}

/// What one [`Remote::sync`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SyncOutcome {
    /// Runs created in PostgreSQL.
    pub runs_created: u64,
    /// Tests written (new or replaced).
    pub tests_written: u64,
}

/// A PostgreSQL database that a local SQLite database is copied to.
pub struct Remote {
    url: String,
    target: String,
    client: Option<Client>,
    /// Per local run id, the mark up to which its tests are in PostgreSQL by this
    /// connection's copies; empty after every (re)connect.
    copied: HashMap<i64, WriteMark>,
    /// The local store the marks are of.
    copied_from: String,
}

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Remote")
            .field("target", &self.target)
            .field("connected", &self.client.is_some())
            .finish()
    }
}

impl Remote {
    /// A remote for `url`; nothing is connected until the first sync.
    pub fn new(url: &str) -> Remote {
        Remote {
            url: url.to_owned(),
            target: redact(url),
            client: None,
            copied: HashMap::new(),
            copied_from: String::new(),
        }
    }

    /// The URL without its password.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// Connects now (and migrates): to fail early on a wrong URL.
    ///
    /// # Errors
    /// As [`Remote::sync`].
    pub fn connect(&mut self) -> Result<(), StoreError> {
        if self.client.as_ref().is_none_or(|c| c.is_closed()) {
            self.copied.clear();
            self.client = Some(connect(&self.url)?);
        }
        Ok(())
    }

    /// Copies to PostgreSQL every run and test of `local` that it lacks or that changed
    /// (a run's status and end; a test recorded again). Each run is one transaction. On
    /// failure the connection is dropped, to be made again by the next sync; `local` keeps
    /// everything meanwhile.
    ///
    /// # Errors
    /// [`StoreError::Postgres`] when PostgreSQL is away or refuses;
    /// [`StoreError::Sqlite`] when `local` cannot be read.
    pub fn sync(&mut self, local: &Store) -> Result<SyncOutcome, StoreError> {
        let result = self.try_sync(local);
        if result.is_err() {
            self.client = None;
        }
        result
    }

    fn try_sync(&mut self, local: &Store) -> Result<SyncOutcome, StoreError> {
        self.connect()?;
        let target = self.target.clone();
        let Some(client) = self.client.as_mut() else {
            return Ok(SyncOutcome::default());
        };
        if self.copied_from != local.path() {
            self.copied.clear();
            local.path().clone_into(&mut self.copied_from);
        }
        let mut outcome = SyncOutcome::default();
        for run in rows::sqlite_rows(local, "SELECT * FROM runs ORDER BY id", [])? {
            let local_id = column(&run, "id").as_i64().unwrap_or(0);
            let known = self.copied.get(&local_id).copied();
            let mark = sync_run(client, &target, local, run, known, &mut outcome)?;
            self.copied.insert(local_id, mark);
        }
        Ok(outcome)
    }
}

fn column<'a>(row: &'a Map<String, Value>, name: &str) -> &'a Value {
    row.get(name).unwrap_or(&Value::Null)
}

const RUN_IDENTITY: &str = "SELECT id FROM runs WHERE hostname = $1 AND scenario_name = $2 \
    AND seed = $3 AND started_unix = $4";

/// Copies one run: the run row when PostgreSQL lacks it, its status and end, and its tests
/// that PostgreSQL lacks or holds in an older version. With `known`, only tests written at or
/// after that mark are looked at (at, not after: a test recorded again in place of the newest
/// row takes that row's rowid). Returns the mark the run's tests are copied up to.
fn sync_run(
    client: &mut Client,
    target: &str,
    local: &Store,
    run: Map<String, Value>,
    known: Option<WriteMark>,
    outcome: &mut SyncOutcome,
) -> Result<WriteMark, StoreError> {
    let err = pg_err(target);
    let local_id = column(&run, "id").as_i64().unwrap_or(0);
    let mut tx = client.transaction().map_err(&err)?;
    let remote_id = remote_run_id(&mut tx, target, &run, outcome)?;
    copy_link_settings(&mut tx, target, local, local_id, remote_id)?;
    tx.execute(
        "UPDATE runs SET status = j.status, ended_unix = j.ended_unix
         FROM json_populate_record(NULL::runs, $1::text::json) j WHERE runs.id = $2",
        &[&Value::Object(run.clone()).to_string(), &remote_id],
    )
    .map_err(&err)?;
    let local_tests = local_tests(local, local_id, known)?;
    let remote = remote_ended(&mut tx, target, remote_id, known, &local_tests)?;
    let mark = copied_mark(&local_tests, known);
    let mut batch = Batch::default();
    for id in stale_tests(&local_tests, &remote) {
        batch.add(local, local_id, remote_id, id)?;
        if batch.is_full() {
            outcome.tests_written += batch.write(&mut tx, target, remote_id)?;
        }
    }
    outcome.tests_written += batch.write(&mut tx, target, remote_id)?;
    tx.commit().map_err(&err)?;
    Ok(mark)
}

/// PostgreSQL's id of local `run`, found by its identity or inserted (counted in `outcome`).
fn remote_run_id(
    tx: &mut postgres::Transaction<'_>,
    target: &str,
    run: &Map<String, Value>,
    outcome: &mut SyncOutcome,
) -> Result<i64, StoreError> {
    let text = |c: &str| column(run, c).as_str().unwrap_or("").to_owned();
    let seed = column(run, "seed").as_i64().unwrap_or(0);
    let started = column(run, "started_unix").as_f64().unwrap_or(0.0);
    let found = tx
        .query_opt(
            RUN_IDENTITY,
            &[&text("hostname"), &text("scenario_name"), &seed, &started],
        )
        .map_err(pg_err(target))?;
    Ok(match found {
        Some(row) => row.get(0),
        None => {
            let mut fields = run.clone();
            fields.remove("id");
            let id = rows::insert(tx, target, "runs", &fields, true)?;
            outcome.runs_created += 1;
            id
        }
    })
}

/// Copies the run's link settings PostgreSQL lacks: all of a new run's, and those added to a
/// run since its last copy (an agent's peers added by a reload).
fn copy_link_settings(
    tx: &mut postgres::Transaction<'_>,
    target: &str,
    local: &Store,
    local_id: i64,
    remote_id: i64,
) -> Result<(), StoreError> {
    let remote_names: Vec<String> = tx
        .query(
            "SELECT name FROM link_settings WHERE run_id = $1",
            &[&remote_id],
        )
        .map_err(pg_err(target))?
        .iter()
        .map(|r| r.get(0))
        .collect();
    let settings = rows::sqlite_rows(
        local,
        "SELECT * FROM link_settings WHERE run_id = ?1",
        [local_id],
    )?;
    for mut s in settings {
        let name = column(&s, "name").as_str().unwrap_or("").to_owned();
        if remote_names.contains(&name) {
            continue;
        }
        s.insert("run_id".into(), remote_id.into());
        rows::insert(tx, target, "link_settings", &s, false)?;
    }
    Ok(())
}

/// The local run's tests to look at (`matrix_id`, `ended_unix`, `mark`): those written at or
/// after `known`, else all.
fn local_tests(
    local: &Store,
    local_id: i64,
    known: Option<WriteMark>,
) -> Result<Vec<Map<String, Value>>, StoreError> {
    // Incremental: by rowid from the mark (`+run_id` keeps SQLite off the run's index, which
    // would read every test of the run); full: by the run's index.
    match known {
        Some(m) => rows::sqlite_rows(
            local,
            "SELECT matrix_id, ended_unix, rowid AS mark FROM tests WHERE +run_id = ?1 AND rowid >= ?2",
            [local_id, m.0],
        ),
        None => rows::sqlite_rows(
            local,
            "SELECT matrix_id, ended_unix, rowid AS mark FROM tests WHERE run_id = ?1",
            [local_id],
        ),
    }
}

/// The end of each of remote run `remote_id`'s tests, by matrix id: all of them, or with
/// `known` those among `local_tests`.
fn remote_ended(
    tx: &mut postgres::Transaction<'_>,
    target: &str,
    remote_id: i64,
    known: Option<WriteMark>,
    local_tests: &[Map<String, Value>],
) -> Result<HashMap<String, f64>, StoreError> {
    let remote_rows = match known {
        None => tx.query(
            "SELECT matrix_id, ended_unix FROM tests WHERE run_id = $1",
            &[&remote_id],
        ),
        Some(_) => {
            let ids: Vec<&str> = local_tests
                .iter()
                .filter_map(|t| column(t, "matrix_id").as_str())
                .collect();
            tx.query(
                "SELECT matrix_id, ended_unix FROM tests WHERE run_id = $1 AND matrix_id = ANY($2)",
                &[&remote_id, &ids],
            )
        }
    };
    Ok(remote_rows
        .map_err(pg_err(target))?
        .into_iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect())
}

/// The mark the run's tests are copied up to once `local_tests` are: the highest of theirs,
/// else the one before.
fn copied_mark(local_tests: &[Map<String, Value>], known: Option<WriteMark>) -> WriteMark {
    local_tests
        .iter()
        .filter_map(|t| column(t, "mark").as_i64())
        .max()
        .map_or(known.unwrap_or(WriteMark::NONE), WriteMark)
}

/// The matrix ids of `local_tests` that PostgreSQL lacks or holds with another end (a test
/// recorded again), or that have no end yet.
fn stale_tests(local_tests: &[Map<String, Value>], remote: &HashMap<String, f64>) -> Vec<String> {
    local_tests
        .iter()
        .filter(|t| {
            let ended = column(t, "ended_unix").as_f64();
            let id = column(t, "matrix_id").as_str().unwrap_or("");
            ended.is_none() || remote.get(id).copied() != ended
        })
        .map(|t| column(t, "matrix_id").as_str().unwrap_or("").to_owned())
        .collect()
}

/// Tests to replace in PostgreSQL, with their counters, written together: a backlog of
/// thousands of tests (an outage's) took two round trips per statement and three statements
/// per test, which a distant database multiplies by its round-trip time.
#[derive(Default)]
struct Batch {
    ids: Vec<String>,
    tests: Vec<Map<String, Value>>,
    counters: Vec<Map<String, Value>>,
    bytes: usize,
}

impl Batch {
    /// Most tests in one batch, and about the most bytes of JSON (a throughput test's result
    /// document may be tens of kilobytes): bounded memory and statement size on the way.
    const MAX_TESTS: usize = 500;
    const MAX_BYTES: usize = 4 << 20;

    /// Reads local test `matrix_id` of run `local_id` and its counters into the batch.
    fn add(
        &mut self,
        local: &Store,
        local_id: i64,
        remote_id: i64,
        matrix_id: String,
    ) -> Result<(), StoreError> {
        let params = rusqlite::params![local_id, matrix_id];
        let tests = rows::sqlite_rows(
            local,
            "SELECT * FROM tests WHERE run_id = ?1 AND matrix_id = ?2",
            params,
        )?;
        let counters = rows::sqlite_rows(
            local,
            "SELECT * FROM interface_counters WHERE run_id = ?1 AND matrix_id = ?2",
            params,
        )?;
        for (into, found) in [(&mut self.tests, tests), (&mut self.counters, counters)] {
            for mut row in found {
                row.insert("run_id".into(), remote_id.into());
                self.bytes += rows::approximate_size(&row);
                into.push(row);
            }
        }
        self.ids.push(matrix_id);
        Ok(())
    }

    fn is_full(&self) -> bool {
        self.ids.len() >= Self::MAX_TESTS || self.bytes >= Self::MAX_BYTES
    }

    /// Replaces the batch's tests of remote run `remote_id` (their old counters go with them)
    /// and empties the batch; returns how many tests it held.
    fn write(
        &mut self,
        tx: &mut postgres::Transaction<'_>,
        target: &str,
        remote_id: i64,
    ) -> Result<u64, StoreError> {
        if self.ids.is_empty() {
            return Ok(0);
        }
        tx.execute(
            "DELETE FROM tests WHERE run_id = $1 AND matrix_id = ANY($2)",
            &[&remote_id, &self.ids],
        )
        .map_err(pg_err(target))?;
        rows::insert_all(tx, target, "tests", &self.tests)?;
        rows::insert_all(tx, target, "interface_counters", &self.counters)?;
        let written = self.ids.len() as u64;
        *self = Batch::default();
        Ok(written)
    }
}

/// Copies every run of PostgreSQL `url` into a new in-memory SQLite store (for reading).
///
/// # Errors
/// As [`connect`]; [`StoreError::Sqlite`] when a row does not fit the local schema.
pub(crate) fn snapshot(url: &str) -> Result<Store, StoreError> {
    let target = redact(url);
    let mut client = connect(url)?;
    let mut store = Store::open_memory(&target)?;
    for table in ["runs", "link_settings", "tests", "interface_counters"] {
        let query = format!("SELECT row_to_json(t)::text FROM {table} t");
        let found = client.query(&query, &[]).map_err(pg_err(&target))?;
        let mut objects = Vec::with_capacity(found.len());
        for row in found {
            let text: String = row.get(0);
            match serde_json::from_str::<Value>(&text) {
                Ok(Value::Object(m)) => objects.push(m),
                _ => return Err(store.corrupt(format!("{table}: a row is not a JSON object"))),
            }
        }
        rows::sqlite_insert_all(&mut store, table, &objects)?;
    }
    Ok(store)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn test_row(id: &str, ended: Option<f64>, mark: i64) -> Map<String, Value> {
        let v = serde_json::json!({"matrix_id": id, "ended_unix": ended, "mark": mark});
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn stale_tests_and_the_mark_copied_up_to() {
        let local = [
            test_row("a", Some(1.0), 4),
            test_row("b", Some(2.0), 7),
            test_row("c", None, 5),
            test_row("d", Some(3.0), 6),
        ];
        // a as remote has it; b recorded again since (another end); c without an end; d new.
        let remote = HashMap::from([("a".to_owned(), 1.0), ("b".to_owned(), 1.5)]);
        assert_eq!(stale_tests(&local, &remote), ["b", "c", "d"]);
        assert_eq!(copied_mark(&local, Some(WriteMark(3))), WriteMark(7));
        // Nothing new: the mark stays where it was.
        assert_eq!(copied_mark(&[], Some(WriteMark(3))), WriteMark(3));
        assert_eq!(copied_mark(&[], None), WriteMark::NONE);
    }

    #[test]
    fn urls_are_told_and_passwords_hidden() {
        assert!(is_postgres_url("postgres://h/db"));
        assert!(is_postgres_url("postgresql://h/db"));
        assert!(!is_postgres_url("results.db"));
        assert_eq!(
            redact("postgres://u:secret@h:5/db"),
            "postgres://u:***@h:5/db"
        );
        assert_eq!(redact("postgres://h/db"), "postgres://h/db");
        assert_eq!(redact("postgres://u@h/db"), "postgres://u@h/db");
        assert!(check_postgres_url("postgres://u:pw@h:5432/db").is_ok());
        assert!(check_postgres_url("postgres://h:notaport/db").is_err());
        assert!(check_postgres_url("mysql://h/db").is_err());
    }
}
