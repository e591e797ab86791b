//! Reading runs back. Every stored JSON value and status is checked as it is read, so a
//! hand-edited or damaged database gives an error naming the file and the row, not a panic.

use rusqlite::{Row, Statement};
use serde_json::Value;

use crate::error::StoreError;
use crate::records::*;
use crate::store::{seed_from_sql, Store};

impl Store {
    /// Every run in the database, oldest first.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] or [`StoreError::Corrupt`] when a row cannot be read.
    pub fn runs(&self) -> Result<Vec<RunRecord>, StoreError> {
        runs(self)
    }

    /// The most recent run, if any (what `--resume` and `sonde report DB` pick by default).
    ///
    /// # Errors
    /// As [`Store::runs`].
    pub fn latest_run(&self) -> Result<Option<RunId>, StoreError> {
        Ok(self.runs()?.last().map(|r| r.id))
    }

    /// A run with its settings and tests, in report order.
    ///
    /// # Errors
    /// [`StoreError::NoSuchRun`]; [`StoreError::Corrupt`] when a stored JSON value or status
    /// does not parse.
    pub fn load_run(&self, run: RunId) -> Result<LoadedRun, StoreError> {
        self::run(self, run)
    }
}

fn parse_json(store: &Store, text: &str, what: &str) -> Result<Value, StoreError> {
    serde_json::from_str(text).map_err(|e| store.corrupt(format!("{what}: invalid JSON ({e})")))
}

fn opt_json(store: &Store, text: Option<String>, what: &str) -> Result<Option<Value>, StoreError> {
    text.map(|t| parse_json(store, &t, what)).transpose()
}

/// Reads a row's columns; SQL errors are kept for the caller to wrap.
fn query_all<T>(
    store: &Store,
    st: &mut Statement<'_>,
    params: impl rusqlite::Params,
    f: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
) -> Result<Vec<T>, StoreError> {
    let rows = st.query_map(params, f).map_err(|e| store.sql(e))?;
    rows.collect::<Result<_, _>>().map_err(|e| store.sql(e))
}

type RawRun = (
    i64,
    String,
    String,
    String,
    String,
    String,
    String,
    i64,
    f64,
    Option<f64>,
    String,
);

pub(crate) fn runs(store: &Store) -> Result<Vec<RunRecord>, StoreError> {
    let mut st = store
        .conn()
        .prepare(
            "SELECT id, scenario_name, scenario_toml, sonde_version, hostname, kernel,
                host_info_json, seed, started_unix, ended_unix, status FROM runs ORDER BY id",
        )
        .map_err(|e| store.sql(e))?;
    let raw: Vec<RawRun> = query_all(store, &mut st, [], |r| {
        Ok((
            r.get(0)?,
            r.get(1)?,
            r.get(2)?,
            r.get(3)?,
            r.get(4)?,
            r.get(5)?,
            r.get(6)?,
            r.get(7)?,
            r.get(8)?,
            r.get(9)?,
            r.get(10)?,
        ))
    })?;
    raw.into_iter()
        .map(
            |(id, name, toml, ver, host, kernel, info, seed, start, end, status)| {
                let what = format!("run {id}");
                Ok(RunRecord {
                    id: RunId(id),
                    scenario_name: name,
                    scenario_toml: toml,
                    sonde_version: ver,
                    hostname: host,
                    kernel,
                    host_info: parse_json(store, &info, &format!("{what} host_info_json"))?,
                    seed: seed_from_sql(seed),
                    started_unix: start,
                    ended_unix: end,
                    status: RunStatus::parse(&status).ok_or_else(|| {
                        store.corrupt(format!("{what}: unknown status {status:?}"))
                    })?,
                })
            },
        )
        .collect()
}

fn settings(store: &Store, run: RunId) -> Result<Vec<LinkSettingsRecord>, StoreError> {
    let mut st = store
        .conn()
        .prepare(
            "SELECT name, ordinal, settings_json, backend_plan_json FROM link_settings
             WHERE run_id = ?1 ORDER BY ordinal, name",
        )
        .map_err(|e| store.sql(e))?;
    let raw: Vec<(String, u32, String, Option<String>)> =
        query_all(store, &mut st, [run.0], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
        })?;
    raw.into_iter()
        .map(|(name, ordinal, s, plan)| {
            let what = format!("settings {name:?}");
            Ok(LinkSettingsRecord {
                settings: parse_json(store, &s, &what)?,
                backend_plan: opt_json(store, plan, &what)?,
                name,
                ordinal,
            })
        })
        .collect()
}

/// The text columns of a test row that hold JSON or enums, checked after the query.
struct RawTest {
    rec: TestRecord,
    parameters: String,
    link_status: Option<String>,
    status: String,
    stage_stats: Option<String>,
}

fn cpu(r: &Row<'_>, at: usize) -> rusqlite::Result<Option<Cpu>> {
    let total: Option<f64> = r.get(at)?;
    let user: Option<f64> = r.get(at + 1)?;
    let system: Option<f64> = r.get(at + 2)?;
    Ok(total.map(|total| Cpu {
        total,
        user: user.unwrap_or(0.0),
        system: system.unwrap_or(0.0),
    }))
}

fn count(r: &Row<'_>, at: usize) -> rusqlite::Result<u64> {
    let v: i64 = r.get(at)?;
    Ok(u64::try_from(v).unwrap_or(0))
}

fn traffic(r: &Row<'_>, at: usize) -> rusqlite::Result<Option<InterfaceTraffic>> {
    let interface: Option<String> = r.get(at)?;
    let Some(interface) = interface else {
        return Ok(None);
    };
    let c = |i: usize| -> rusqlite::Result<IfCounters> {
        Ok(IfCounters {
            rx_packets: count(r, i)?,
            rx_bytes: count(r, i + 1)?,
            tx_packets: count(r, i + 2)?,
            tx_bytes: count(r, i + 3)?,
        })
    };
    Ok(Some(InterfaceTraffic {
        interface,
        before: c(at + 1)?,
        after: c(at + 5)?,
    }))
}

const IF_COLS: &str = "interface, before_rx_packets, before_rx_bytes, before_tx_packets, \
    before_tx_bytes, after_rx_packets, after_rx_bytes, after_tx_packets, after_tx_bytes";

fn test_rows(store: &Store, run: RunId) -> Result<Vec<RawTest>, StoreError> {
    let q = format!(
        "SELECT t.matrix_id, t.ordinal, t.settings, t.test_name, t.repetition, t.seed, t.kind,
            t.protocol, t.parameters_json, t.link_status_json, t.started_unix, t.ended_unix,
            t.status, t.failure_reason, t.result_path, t.result_json,
            t.client_cpu_total, t.client_cpu_user, t.client_cpu_system,
            t.server_cpu_total, t.server_cpu_user, t.server_cpu_system, t.stage_stats_json,
            c.*, s.*
         FROM tests t
         LEFT JOIN (SELECT run_id, matrix_id, {IF_COLS} FROM interface_counters
                    WHERE endpoint = 'client') c
           ON c.run_id = t.run_id AND c.matrix_id = t.matrix_id
         LEFT JOIN (SELECT run_id, matrix_id, {IF_COLS} FROM interface_counters
                    WHERE endpoint = 'server') s
           ON s.run_id = t.run_id AND s.matrix_id = t.matrix_id
         WHERE t.run_id = ?1 ORDER BY t.ordinal, t.matrix_id"
    );
    let mut st = store.conn().prepare(&q).map_err(|e| store.sql(e))?;
    // Columns: 23 of tests, then (run_id, matrix_id, 9 counter columns) twice.
    query_all(store, &mut st, [run.0], |r| {
        Ok(RawTest {
            rec: TestRecord {
                matrix_id: r.get(0)?,
                ordinal: r.get(1)?,
                settings: r.get(2)?,
                test_name: r.get(3)?,
                repetition: r.get(4)?,
                seed: seed_from_sql(r.get(5)?),
                kind: r.get(6)?,
                protocol: r.get(7)?,
                parameters: Value::Null,
                link_status: None,
                started_unix: r.get(10)?,
                ended_unix: r.get(11)?,
                status: TestStatus::Ok,
                failure_reason: r.get(13)?,
                result_path: r.get(14)?,
                result_json: r.get(15)?,
                client: EndRecord {
                    cpu: cpu(r, 16)?,
                    traffic: traffic(r, 25)?,
                },
                server: EndRecord {
                    cpu: cpu(r, 19)?,
                    traffic: traffic(r, 36)?,
                },
                stage_stats: None,
            },
            parameters: r.get(8)?,
            link_status: r.get(9)?,
            status: r.get(12)?,
            stage_stats: r.get(22)?,
        })
    })
}

pub(crate) fn run(store: &Store, id: RunId) -> Result<LoadedRun, StoreError> {
    let run = runs(store)?
        .into_iter()
        .find(|r| r.id == id)
        .ok_or_else(|| StoreError::NoSuchRun {
            path: store.path().to_owned(),
            run: id,
        })?;
    let settings = settings(store, id)?;
    let tests = test_rows(store, id)?
        .into_iter()
        .map(|raw| {
            let mut rec = raw.rec;
            let what = format!("test {:?}", rec.matrix_id);
            rec.parameters = parse_json(store, &raw.parameters, &what)?;
            rec.link_status = opt_json(store, raw.link_status, &what)?;
            rec.stage_stats = opt_json(store, raw.stage_stats, &what)?;
            rec.status = TestStatus::parse(&raw.status)
                .ok_or_else(|| store.corrupt(format!("{what}: unknown status {:?}", raw.status)))?;
            Ok(rec)
        })
        .collect::<Result<_, StoreError>>()?;
    Ok(LoadedRun {
        run,
        settings,
        tests,
    })
}
