//! The table a report shows, as plain text cells: [`Table`], a headed [`Section`] of one,
//! and the cell for a missing value.
//!
//! A leaf, as [`crate::svg`] is for charts: the summary tables (`tables`), the
//! stage tables and each kind's report module build tables with it, and the Markdown and
//! HTML renderers lay them out, so it knows nothing of the report model or of any kind.

/// Rows of text cells under a header.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

/// A missing value.
pub(crate) const DASH: &str = "–";

/// A count, or a dash when unknown.
pub(crate) fn count(v: Option<u64>) -> String {
    v.map_or_else(|| DASH.into(), |n| n.to_string())
}

impl Table {
    pub(crate) fn new(header: &[&str]) -> Table {
        Table {
            header: header.iter().map(|h| (*h).to_owned()).collect(),
            rows: Vec::new(),
        }
    }

    /// Drops columns whose every cell is a dash, except the first `keep` columns.
    pub(crate) fn drop_empty_columns(mut self, keep: usize) -> Table {
        let n = self.header.len();
        let empty: Vec<bool> = (0..n)
            .map(|c| c >= keep && self.rows.iter().all(|r| r.get(c).is_none_or(|v| v == DASH)))
            .collect();
        let filter = |cells: Vec<String>| -> Vec<String> {
            cells
                .into_iter()
                .zip(&empty)
                .filter(|(_, e)| !**e)
                .map(|(v, _)| v)
                .collect()
        };
        let header = std::mem::take(&mut self.header);
        self.header = filter(header);
        self.rows = std::mem::take(&mut self.rows)
            .into_iter()
            .map(filter)
            .collect();
        self
    }
}

/// One headed table.
#[derive(Debug, Clone, PartialEq)]
pub struct Section {
    pub heading: String,
    /// A sentence under the heading (what a figure means, where it stops).
    pub note: Option<String>,
    pub table: Table,
}

impl Section {
    pub(crate) fn new(heading: &str, note: Option<String>, table: Table) -> Section {
        Section {
            heading: heading.to_owned(),
            note,
            table,
        }
    }
}
