//! Rows as JSON objects keyed by column name: read from SQLite, written to PostgreSQL with
//! `json_populate_record` (which types each value by the table's column), and written back to
//! SQLite from PostgreSQL's `row_to_json`. Column names only ever come from the databases'
//! own rows, never from outside, and are checked to be plain identifiers before use.

use rusqlite::types::ValueRef;
use serde_json::{Map, Value};

use super::url::pg_err;
use crate::error::StoreError;
use crate::store::Store;

/// Every row of `query` on the local database, as JSON objects.
pub(super) fn sqlite_rows(
    store: &Store,
    query: &str,
    params: impl rusqlite::Params,
) -> Result<Vec<Map<String, Value>>, StoreError> {
    let mut st = store
        .conn()
        .prepare_cached(query)
        .map_err(|e| store.sql(e))?;
    let names: Vec<String> = st.column_names().iter().map(|s| s.to_string()).collect();
    let mut rows = st.query(params).map_err(|e| store.sql(e))?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(|e| store.sql(e))? {
        let mut m = Map::new();
        for (i, name) in names.iter().enumerate() {
            let v = match row.get_ref(i).map_err(|e| store.sql(e))? {
                ValueRef::Null => Value::Null,
                ValueRef::Integer(n) => n.into(),
                ValueRef::Real(x) => {
                    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
                }
                ValueRef::Text(t) | ValueRef::Blob(t) => {
                    Value::String(String::from_utf8_lossy(t).into_owned())
                }
            };
            m.insert(name.clone(), v);
        }
        out.push(m);
    }
    Ok(out)
}

fn identifier(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

fn column_list(store_name: &str, row: &Map<String, Value>) -> Result<String, StoreError> {
    if let Some(bad) = row.keys().find(|k| !identifier(k)) {
        return Err(StoreError::Corrupt {
            path: store_name.to_owned(),
            what: format!("unexpected column name {bad:?}"),
        });
    }
    Ok(row.keys().cloned().collect::<Vec<_>>().join(", "))
}

/// Inserts `row` into PostgreSQL table `table`; returns the new `id` when `returning_id`.
pub(super) fn insert(
    tx: &mut postgres::Transaction<'_>,
    target: &str,
    table: &str,
    row: &Map<String, Value>,
    returning_id: bool,
) -> Result<i64, StoreError> {
    let cols = column_list(target, row)?;
    let mut query = format!(
        "INSERT INTO {table} ({cols}) SELECT {cols} FROM json_populate_record(NULL::{table}, $1::text::json)"
    );
    let json = Value::Object(row.clone()).to_string();
    if returning_id {
        query.push_str(" RETURNING id");
        let r = tx.query_one(&query, &[&json]).map_err(pg_err(target))?;
        Ok(r.get(0))
    } else {
        tx.execute(&query, &[&json]).map_err(pg_err(target))?;
        Ok(0)
    }
}

/// Inserts `rows` into PostgreSQL table `table`, one statement per stretch of rows with the
/// same columns (every row of one `SELECT *` has the same): a backlog of tests costs a few
/// round trips, not two per row.
pub(super) fn insert_all(
    tx: &mut postgres::Transaction<'_>,
    target: &str,
    table: &str,
    rows: &[Map<String, Value>],
) -> Result<(), StoreError> {
    let mut rest = rows;
    while let Some(first) = rest.first() {
        let same = rest
            .iter()
            .take_while(|r| {
                r.len() == first.len() && r.keys().zip(first.keys()).all(|(a, b)| a == b)
            })
            .count();
        let (stretch, after) = rest.split_at(same);
        let cols = column_list(target, first)?;
        let query = format!(
            "INSERT INTO {table} ({cols}) SELECT {cols} FROM json_populate_recordset(NULL::{table}, $1::text::json)"
        );
        let json = serde_json::to_string(stretch).map_err(|e| StoreError::Corrupt {
            path: target.to_owned(),
            what: format!("{table}: rows not writable as JSON: {e}"),
        })?;
        tx.execute(&query, &[&json]).map_err(pg_err(target))?;
        rest = after;
    }
    Ok(())
}

/// About how many bytes `row` takes as JSON (its text and a few per value), to bound a batch.
pub(super) fn approximate_size(row: &Map<String, Value>) -> usize {
    row.iter()
        .map(|(k, v)| k.len() + 8 + v.as_str().map_or(24, str::len))
        .sum()
}

fn to_sqlite(v: &Value) -> rusqlite::types::Value {
    use rusqlite::types::Value as S;
    match v {
        Value::Null => S::Null,
        Value::Bool(b) => S::Integer(i64::from(*b)),
        Value::Number(n) => match n.as_i64() {
            Some(i) => S::Integer(i),
            None => S::Real(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => S::Text(s.clone()),
        other => S::Text(other.to_string()),
    }
}

/// Inserts `rows` into the local table `table` in one transaction.
pub(super) fn sqlite_insert_all(
    store: &mut Store,
    table: &str,
    rows: &[Map<String, Value>],
) -> Result<(), StoreError> {
    let name = store.path().to_owned();
    let tx = store
        .conn_mut()
        .transaction()
        .map_err(|source| StoreError::Sqlite {
            path: name.clone(),
            source,
        })?;
    for row in rows {
        let cols = column_list(&name, row)?;
        let marks = (1..=row.len())
            .map(|i| format!("?{i}"))
            .collect::<Vec<_>>()
            .join(", ");
        let values: Vec<rusqlite::types::Value> = row.values().map(to_sqlite).collect();
        tx.execute(
            &format!("INSERT INTO {table} ({cols}) VALUES ({marks})"),
            rusqlite::params_from_iter(values),
        )
        .map_err(|source| StoreError::Sqlite {
            path: name.clone(),
            source,
        })?;
    }
    tx.commit()
        .map_err(|source| StoreError::Sqlite { path: name, source })
}
