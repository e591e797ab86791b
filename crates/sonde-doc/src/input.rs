//! What a report is made from: one lab run from a results database, or sonde `-J` documents.
//!
//! Everything is read and checked here, before rendering, so a malformed file fails with its
//! name and the renderer itself cannot fail on input. A database is recognised by SQLite's
//! magic header, not its extension; a directory is searched for one database (the lab's
//! `--out DIR`).

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;
use sonde_store::{LoadedRun, RunId, Store};

use crate::DocError;

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
    /// One lab run, with the path of its database.
    Run { path: String, run: Box<LoadedRun> },
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
        if paths.is_empty() {
            return Err(DocError::NoInputs);
        }
        let mut docs = Vec::new();
        for p in paths {
            let db = if p.is_dir() {
                Some(database_in(p)?)
            } else if is_sqlite(p)? {
                Some(p.clone())
            } else {
                None
            };
            if let Some(db) = db {
                if paths.len() > 1 {
                    return Err(DocError::Mixed {
                        path: db.display().to_string(),
                    });
                }
                return Inputs::from_database(&db, None);
            }
            let name = p.display().to_string();
            let text = fs::read_to_string(p).map_err(|source| DocError::Io {
                path: name.clone(),
                source,
            })?;
            docs.push(Inputs::parse_document(&name, &text)?);
        }
        Ok(Inputs::Documents(docs))
    }

    /// Reads one run of a results database: `run`, or the latest when `None`.
    ///
    /// # Errors
    /// [`DocError::Store`] when the database cannot be read (named in the message);
    /// [`DocError::EmptyDatabase`] when it holds no run.
    pub fn from_database(path: &Path, run: Option<RunId>) -> Result<Inputs, DocError> {
        let store = Store::open_read_only(path)?;
        let id = match run {
            Some(id) => id,
            None => store.latest_run()?.ok_or_else(|| DocError::EmptyDatabase {
                path: path.display().to_string(),
            })?,
        };
        Ok(Inputs::Run {
            path: path.display().to_string(),
            run: Box::new(store.load_run(id)?),
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
