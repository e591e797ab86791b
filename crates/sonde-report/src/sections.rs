//! The per-kind tables of one test, with a heading and a note each, for the document kinds
//! that have more than one table (a sweep, a capacity estimate, a compare-ip run, the
//! stress shapes). Each kind builds its own in its module; this only picks the module, so
//! both renderers show the same tables in the same order.

use crate::model::TestView;
use crate::result::ResultDoc;
use crate::table::Section;

/// The sections of one test, in page order (empty for the kinds without any).
pub fn for_test(t: &TestView) -> Vec<Section> {
    match &t.result {
        Some(ResultDoc::Sweep(s)) => crate::sweep_report::sections(s),
        Some(ResultDoc::Capacity(c)) => crate::capacity_report::sections(c),
        Some(ResultDoc::CompareIp(c)) => crate::compare_ip_report::sections(c),
        Some(ResultDoc::Stress(s)) => crate::stress_tables::sections(s),
        Some(ResultDoc::Rrul(r)) => crate::rrul_report::sections(r),
        Some(ResultDoc::Btc(b)) => crate::btc_report::sections(b),
        Some(ResultDoc::Serial(s)) => crate::serial_report::sections(s),
        _ => Vec::new(),
    }
}
