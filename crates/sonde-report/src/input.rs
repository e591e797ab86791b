//! What a report is made from: one lab run from a results database, or sonde `-J` documents.
//!
//! Everything is read and checked here, before rendering, so a malformed file fails with its
//! name and the renderer itself cannot fail on input. A database is recognised by SQLite's
//! magic header, not its extension; a directory is searched for one database (the lab's
//! `--out DIR`).
//!
//! A database may hold several runs (`sonde lab run --new`, `--resume` of an older one): a
//! report is of one run, the one asked for or else the newest (the highest id), and
//! [`list_runs`] says what there is to choose from.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;
use sonde_store::{LoadedRun, RunId, RunRecord, Store};

use crate::error::DocError;

/// One result document given on the command line.
#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    /// How the report names it (the path as given).
    pub name: String,
    /// The parsed JSON.
    pub value: Value,
}

/// The inputs of a report.
#[derive(Debug, Clone, PartialEq)]
pub enum Inputs {
    /// One lab run, with the path of its database and the ids of every run it holds.
    Run {
        path: String,
        run: Box<LoadedRun>,
        all_runs: Vec<RunId>,
    },
    /// Result documents, in the order given.
    Documents(Vec<Document>),
}

const SQLITE_MAGIC: &[u8] = b"SQLite format 3\0";

fn is_sqlite(path: &Path) -> Result<bool, DocError> {
    let io = |source| DocError::Io {
        path: path.display().to_string(),
        source,
    };
    let mut f = fs::File::open(path).map_err(io)?;
    let mut head = [0u8; 16];
    let mut got = 0;
    while got < head.len() {
        let n = f.read(&mut head[got..]).map_err(io)?;
        if n == 0 {
            break;
        }
        got += n;
    }
    Ok(got == head.len() && head == SQLITE_MAGIC)
}

/// The database inside a directory (`*.db`, `*.sqlite`, `*.sqlite3`), when there is one.
fn database_in(dir: &Path) -> Result<PathBuf, DocError> {
    let io = |source| DocError::Io {
        path: dir.display().to_string(),
        source,
    };
    let mut found: Vec<PathBuf> = fs::read_dir(dir)
        .map_err(io)?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            matches!(
                p.extension().and_then(|e| e.to_str()),
                Some("db" | "sqlite" | "sqlite3")
            )
        })
        .collect();
    found.sort();
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(DocError::NotAResult {
            path: dir.display().to_string(),
            why: "a directory without a results database (*.db)".into(),
        }),
        _ => Err(DocError::NotAResult {
            path: dir.display().to_string(),
            why: format!(
                "a directory with {} databases: name one of them",
                found.len()
            ),
        }),
    }
}

/// The database `p` names: `p` itself when it is one (a file, or a `postgres://` URL), the one
/// inside when `p` is a directory.
fn database_at(p: &Path) -> Result<Option<PathBuf>, DocError> {
    if p.to_str().is_some_and(sonde_store::is_postgres_url) {
        Ok(Some(p.to_path_buf()))
    } else if p.is_dir() {
        Ok(Some(database_in(p)?))
    } else if is_sqlite(p)? {
        Ok(Some(p.to_path_buf()))
    } else {
        Ok(None)
    }
}

/// A run in a few words, for an error: `"2 (lossy-link, completed, 2026-11-22 00:27:22 UTC)"`.
fn run_words(r: &RunRecord) -> String {
    format!(
        "{} ({}, {}, {})",
        r.id,
        r.scenario_name,
        status_name(r),
        crate::fmt::date(r.started_unix)
    )
}

fn status_name(r: &RunRecord) -> String {
    serde_json::to_value(r.status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

/// One run of a results database, as `sonde report DIR --list-runs` shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct RunLine {
    pub id: RunId,
    pub scenario: String,
    /// `running`, `completed`, `interrupted` or `failed`.
    pub status: String,
    pub started_unix: f64,
    pub ended_unix: Option<f64>,
    /// Tests recorded, and how many of them failed.
    pub tests: u64,
    pub failed: u64,
}

/// The runs of the results database `path` names (the file, or the directory holding it),
/// oldest first, with the database's path.
///
/// # Errors
/// [`DocError::NotADatabase`] when `path` is neither; [`DocError::Io`] or
/// [`DocError::Store`] when it cannot be read.
pub fn list_runs(path: &Path) -> Result<(PathBuf, Vec<RunLine>), DocError> {
    let db = database_at(path)?.ok_or_else(|| DocError::NotADatabase {
        path: path.display().to_string(),
    })?;
    let store = Store::open_read_only(&db)?;
    let counts = store.test_counts()?;
    let lines = store
        .runs()?
        .iter()
        .map(|r| {
            let (tests, failed) = counts
                .iter()
                .find(|c| c.0 == r.id)
                .map_or((0, 0), |c| (c.1, c.2));
            RunLine {
                id: r.id,
                scenario: r.scenario_name.clone(),
                status: status_name(r),
                started_unix: r.started_unix,
                ended_unix: r.ended_unix,
                tests,
                failed,
            }
        })
        .collect();
    Ok((db, lines))
}

impl Inputs {
    /// Reads the inputs named on the command line: one results database (or a directory
    /// holding one), or one or more JSON result documents.
    ///
    /// # Errors
    /// [`DocError::NoInputs`] for an empty list; [`DocError::Io`], [`DocError::Json`] or
    /// [`DocError::NotAResult`] naming the file that could not be read; [`DocError::Mixed`]
    /// when a database is given with other inputs; [`DocError::Store`] or
    /// [`DocError::EmptyDatabase`] for a database without a readable run.
    pub fn from_paths(paths: &[PathBuf]) -> Result<Inputs, DocError> {
        Inputs::from_paths_for_run(paths, None)
    }

    /// As [`Inputs::from_paths`], with the run of the database to report on (`None`: the
    /// newest).
    ///
    /// # Errors
    /// As [`Inputs::from_paths`]; [`DocError::NoSuchRun`] when the database has no run `run`;
    /// [`DocError::RunWithoutDatabase`] when a run is asked of result documents.
    pub fn from_paths_for_run(paths: &[PathBuf], run: Option<RunId>) -> Result<Inputs, DocError> {
        if paths.is_empty() {
            return Err(DocError::NoInputs);
        }
        let mut docs = Vec::new();
        for p in paths {
            if let Some(db) = database_at(p)? {
                if paths.len() > 1 {
                    return Err(DocError::Mixed {
                        path: db.display().to_string(),
                    });
                }
                return Inputs::from_database(&db, run);
            }
            let name = p.display().to_string();
            let text = fs::read_to_string(p).map_err(|source| DocError::Io {
                path: name.clone(),
                source,
            })?;
            docs.push(Inputs::parse_document(&name, &text)?);
        }
        if let Some(run) = run {
            return Err(DocError::RunWithoutDatabase { run });
        }
        Ok(Inputs::Documents(docs))
    }

    /// Reads one run of a results database: `run`, or the newest when `None`.
    ///
    /// # Errors
    /// [`DocError::Store`] when the database cannot be read (named in the message);
    /// [`DocError::EmptyDatabase`] when it holds no run; [`DocError::NoSuchRun`], listing the
    /// runs it holds, when it has no run `run`.
    pub fn from_database(path: &Path, run: Option<RunId>) -> Result<Inputs, DocError> {
        let store = Store::open_read_only(path)?;
        let runs = store.runs()?;
        let all_runs: Vec<RunId> = runs.iter().map(|r| r.id).collect();
        let newest = all_runs.last().copied();
        let id = match (run, newest) {
            (_, None) => {
                return Err(DocError::EmptyDatabase {
                    path: path.display().to_string(),
                })
            }
            (Some(id), _) if !all_runs.contains(&id) => {
                return Err(DocError::NoSuchRun {
                    path: path.display().to_string(),
                    run: id,
                    runs: runs.iter().map(run_words).collect::<Vec<_>>().join("; "),
                })
            }
            (Some(id), _) | (None, Some(id)) => id,
        };
        Ok(Inputs::Run {
            path: path.display().to_string(),
            run: Box::new(store.load_run(id)?),
            all_runs,
        })
    }

    /// Parses one JSON result document held in memory (named `name` in errors and in the
    /// report).
    ///
    /// # Errors
    /// [`DocError::Json`] when it is not JSON; [`DocError::NotAResult`] when it is JSON but
    /// not a sonde throughput or latency document.
    pub fn parse_document(name: &str, text: &str) -> Result<Document, DocError> {
        let value: Value = serde_json::from_str(text).map_err(|source| DocError::Json {
            path: name.to_owned(),
            source,
        })?;
        crate::result::read(&value).map_err(|why| DocError::NotAResult {
            path: name.to_owned(),
            why,
        })?;
        Ok(Document {
            name: name.to_owned(),
            value,
        })
    }
}
