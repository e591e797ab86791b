//! The switch test's table: one line per switch with both ends' view (the client's setup,
//! the server's stall, time to data and duplicates), the policy's decisions, the totals and
//! the hash check.

use crate::client::Outcome;
use crate::document::{hex, ms};

fn fmt_ms(v: Option<f64>) -> String {
    v.map_or_else(|| "-".into(), |x| format!("{x:.2}"))
}

/// The table's lines.
pub fn lines(o: &Outcome) -> Vec<String> {
    let server = o.server.as_ref().map_or(&[][..], |s| &s.switches[..]);
    let mut out =
        vec!["  #      at s  to    setup ms  stall ms  to-data ms  replayed B  dup B".to_string()];
    for (i, r) in o.client.switches.iter().enumerate() {
        let s = server.get(i);
        out.push(format!(
            "{:>3} {:>9.3}  {:<4} {:>9} {:>9} {:>11} {:>11} {:>6}",
            i + 1,
            r.at.as_secs_f64(),
            r.to.name(),
            fmt_ms(ms(r.setup)),
            fmt_ms(s.and_then(|s| s.stall_ms)),
            fmt_ms(s.and_then(|s| s.first_received_ms)),
            r.replayed,
            s.map_or(0, |s| s.duplicates),
        ));
    }
    out.extend(o.policy.lines());
    let c = &o.client;
    out.push(format!(
        "{} bytes in {:.2} s = {:.1} Mbit/s, {} switches; sent IPv4 {} B, IPv6 {} B; replayed {} B",
        o.bytes,
        o.secs,
        o.bytes as f64 * 8.0 / o.secs.max(1e-9) / 1e6,
        c.switches.len(),
        c.sent_by_family[0],
        c.sent_by_family[1],
        c.replayed
    ));
    if let Some(e) = &o.error {
        out.push(format!(
            "partial: the transfer ended early ({e}); no server figures, no hash check"
        ));
        return out;
    }
    if o.interrupted {
        out.push(format!(
            "partial: interrupted after {:.2} s; the hash covers what was sent",
            o.secs
        ));
    }
    out.push(format!(
        "SHA-256 sent {} / received {} ({} bytes): {}",
        hex(&o.sha),
        hex(&o.server_sha),
        o.server_bytes,
        if o.hash_equal() { "equal" } else { "DIFFERENT" }
    ));
    out
}
