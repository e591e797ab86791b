//! Keeping a long-lived store bounded: write marks and pruning of old tests.
//!
//! Why: an agent records a test row every few seconds for months (a latency run every 10 s is
//! about 8,600 rows and 35 MB a day), so its local database must drop what it no longer needs
//! or it fills the disk. What it may drop is decided by two facts, both cheap to ask:
//!
//! - **age**: a test that ended before a cut-off (now minus the retention);
//! - **written before a mark**: with PostgreSQL, only what a successful copy has already
//!   read. A [`WriteMark`] taken before a copy covers every test row that existed then: test
//!   rows sit in SQLite's rowid order, and a row written later gets a higher rowid than every
//!   row present (SQLite gives a new row the largest rowid plus one, and [`Store::prune_tests`]
//!   never deletes the newest row, so the largest never goes back). The one exception: a test
//!   recorded again in place of the newest row takes that row's rowid, equal to a mark taken
//!   before; its end time is new, so it is not old, and a copy that looks from its mark on
//!   (at, not after) finds it. An agent never records a test twice.
//!
//! Both walks go by rowid, the table's own key, so pruning costs what it deletes, not what
//! the store holds: no index and no schema change are needed.

use rusqlite::{params, OptionalExtension};

use crate::error::StoreError;
use crate::store::Store;

/// A point in the order test rows were written: every row written before it is at or under
/// it, every row written after it above (see the module docs). `WriteMark::NONE` is before
/// the first row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct WriteMark(pub i64);

impl WriteMark {
    /// Before any row.
    pub const NONE: WriteMark = WriteMark(0);
}

impl Store {
    /// The mark of the newest test row (or [`WriteMark::NONE`] when there is none).
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] when the query fails.
    pub fn write_mark(&self) -> Result<WriteMark, StoreError> {
        let max: Option<i64> = self
            .conn()
            .query_row("SELECT max(rowid) FROM tests", [], |r| r.get(0))
            .map_err(|e| self.sql(e))?;
        Ok(WriteMark(max.unwrap_or(0)))
    }

    /// How many test rows were written after `mark` (and are still held).
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] when the query fails.
    pub fn tests_after(&self, mark: WriteMark) -> Result<u64, StoreError> {
        let n: i64 = self
            .conn()
            .query_row(
                "SELECT count(*) FROM tests WHERE rowid > ?1",
                [mark.0],
                |r| r.get(0),
            )
            .map_err(|e| self.sql(e))?;
        Ok(u64::try_from(n).unwrap_or(0))
    }

    /// Deletes the tests (their interface counters go with them, by the schema's cascade)
    /// that ended before `ended_before`
    /// (Unix seconds), taking only rows at or under `written_up_to` when given, and never
    /// the newest row. Returns how many were deleted. One transaction.
    ///
    /// It walks from the oldest row and stops at the first that ended at or after the
    /// cut-off, so a row out of time order behind it waits for a later call: a test is
    /// never deleted before its time, at worst after it.
    ///
    /// # Errors
    /// [`StoreError::Sqlite`] when a statement fails (nothing is deleted then).
    pub fn prune_tests(
        &mut self,
        ended_before: f64,
        written_up_to: Option<WriteMark>,
    ) -> Result<u64, StoreError> {
        let path = self.path().to_owned();
        let sql = |source| StoreError::Sqlite {
            path: path.clone(),
            source,
        };
        let tx = self.conn_mut().transaction().map_err(sql)?;
        let newest: Option<i64> = tx
            .query_row("SELECT max(rowid) FROM tests", [], |r| r.get(0))
            .map_err(sql)?;
        let Some(newest) = newest else {
            return Ok(0);
        };
        let first_kept: Option<i64> = tx
            .query_row(
                "SELECT rowid FROM tests WHERE ended_unix >= ?1 ORDER BY rowid LIMIT 1",
                [ended_before],
                |r| r.get(0),
            )
            .optional()
            .map_err(sql)?;
        let mut bound = first_kept.unwrap_or(newest) - 1;
        if let Some(m) = written_up_to {
            bound = bound.min(m.0);
        }
        if bound < 1 {
            return Ok(0);
        }
        let n = tx
            .execute(
                "DELETE FROM tests WHERE rowid <= ?1 AND ended_unix < ?2",
                params![bound, ended_before],
            )
            .map_err(sql)?;
        tx.commit().map_err(sql)?;
        Ok(n as u64)
    }
}
