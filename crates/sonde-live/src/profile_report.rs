//! Renders a traffic-profile run ([`ProfileReport`]): a table per stream with its bursts that
//! were incomplete or late, and the JSON document of `sonde profile run -J`: the report
//! mapped onto its typed model ([`sonde_schema::profile`], which `sonde report` reads), field
//! for field as the report's own serde form.

use sonde_profile::result::{BurstRecord, DelayBasis, DelaySummary, ProfileReport, StreamResult};
use sonde_schema::profile as schema;
use std::fmt::Write;

/// Most incomplete or late bursts listed per stream in the table (`-J` has them all).
pub const TABLE_BURSTS: usize = 10;

/// The human table.
pub fn table(r: &ProfileReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Profile {}: ran {:.2} of {:.0} s",
        r.profile, r.ran_s, r.planned_s
    );
    if let Some(why) = &r.ended_early {
        let _ = writeln!(out, "Ended early: {why}");
    }
    let _ = writeln!(
        out,
        "{:<3} {:<14} {:<11} {:>16} {:>8} {:>8} {:>7} {:>8} {:>6} {:>5} {:>6} {:>13}",
        "ID",
        "Stream",
        "Direction",
        "Plan",
        "Sent",
        "Received",
        "Lost",
        "Loss",
        "Late",
        "Reord",
        "Dup",
        "Bursts whole"
    );
    for s in &r.streams {
        let plan = format!("{}Bx{}/{}ms", s.size, s.burst, s.period_ms);
        let _ = writeln!(
            out,
            "{:<3} {:<14} {:<11} {:>16} {:>8} {:>8} {:>7} {:>7.3}% {:>6} {:>5} {:>6} {:>13}",
            s.id,
            s.name,
            s.direction.as_str(),
            plan,
            s.sent,
            s.received,
            s.lost,
            s.loss_percent(),
            s.late,
            s.out_of_order,
            s.duplicates,
            format!("{}/{}", s.bursts_complete, s.bursts_sent)
        );
    }
    delay_table(&mut out, r);
    spacing_table(&mut out, r);
    for s in &r.streams {
        bursts(&mut out, s);
    }
    out
}

fn delay_table(out: &mut String, r: &ProfileReport) {
    let Some(basis) = r
        .streams
        .iter()
        .find_map(|s| s.delay.as_ref().map(|d| d.basis))
    else {
        return;
    };
    let _ = writeln!(out, "{}, ms:", basis.label());
    if let (DelayBasis::OffsetEstimated, Some(o)) = (basis, r.clock_offset) {
        let _ = writeln!(
            out,
            "(clock offset, server - client: {:+.3} ms, right to within {:.3} ms, from {} probes; assumes a symmetric path)",
            o.offset_ns as f64 / 1e6,
            o.uncertainty_ns as f64 / 1e6,
            o.probes
        );
    }
    let _ = writeln!(
        out,
        "{:<3} {:<14} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}",
        "ID", "Stream", "min", "mean", "p50", "p99", "max", "late>"
    );
    for s in &r.streams {
        if let Some(d) = &s.delay {
            let _ = writeln!(
                out,
                "{:<3} {:<14} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9}",
                s.id, s.name, d.min_ms, d.mean_ms, d.p50_ms, d.p99_ms, d.max_ms, s.late_ms
            );
        }
    }
}

/// The gap each spaced stream's plan asks for beside the spacing its receiver measured; none
/// when every stream's bursts go back to back.
fn spacing_table(out: &mut String, r: &ProfileReport) {
    if r.streams.iter().all(|s| s.gap_ms == 0.0) {
        return;
    }
    let _ = writeln!(
        out,
        "Spacing inside bursts, ms (the plan's gap; measured: mean between consecutive arrivals):"
    );
    let _ = writeln!(
        out,
        "{:<3} {:<14} {:>9} {:>9}",
        "ID", "Stream", "gap", "measured"
    );
    for s in &r.streams {
        let measured = s
            .burst_spacing_ms
            .map_or_else(|| "-".into(), |m| format!("{m:.3}"));
        let _ = writeln!(
            out,
            "{:<3} {:<14} {:>9.3} {:>9}",
            s.id, s.name, s.gap_ms, measured
        );
    }
}

fn bursts(out: &mut String, s: &StreamResult) {
    if s.exceptions.is_empty() {
        return;
    }
    let total = s.exceptions.len() as u64 + s.exceptions_dropped;
    let _ = writeln!(
        out,
        "Stream {} ({}): {total} bursts incomplete or late{}",
        s.id,
        s.name,
        if total as usize > TABLE_BURSTS {
            format!(", the first {TABLE_BURSTS} (all in -J)")
        } else {
            String::new()
        }
    );
    for b in s.exceptions.iter().take(TABLE_BURSTS) {
        let delay = b
            .last_delay_ms
            .map(|d| format!("last datagram {d:.3} ms"))
            .unwrap_or_else(|| "none arrived".into());
        let _ = writeln!(
            out,
            "  burst {:>6} at {:>9.3} s: {:>4}/{:<4} arrived, {delay}{}",
            b.index,
            b.at_s,
            b.received,
            b.expected,
            if b.late { " (late)" } else { "" }
        );
    }
}

/// The `-J` document.
///
/// # Errors
/// A serialisation error (not expected for a report).
pub fn json(r: &ProfileReport, error: Option<&str>) -> serde_json::Result<String> {
    serde_json::to_string_pretty(&document(r, error))
}

/// The `-J` document as a JSON value: the [`sonde_schema::profile`] model.
pub fn document(r: &ProfileReport, error: Option<&str>) -> serde_json::Value {
    sonde_schema::to_value(&model(r, error))
}

/// The `-J` document of a run that failed before it measured: the envelope alone.
pub fn failed_document(error: Option<&str>) -> serde_json::Value {
    sonde_schema::to_value(&sonde_schema::Envelope::new("profile", true, error))
}

/// The document's model. `ended_early` stays (older readers); the envelope says it the
/// common way.
pub fn model(r: &ProfileReport, error: Option<&str>) -> schema::ProfileDocument {
    schema::ProfileDocument {
        profile: r.profile.clone(),
        planned_s: Some(r.planned_s),
        ran_s: Some(r.ran_s),
        clock_synced: r.clock_synced,
        clock_offset: r.clock_offset.map(|o| schema::ClockOffset {
            offset_ns: o.offset_ns,
            uncertainty_ns: o.uncertainty_ns,
            probes: o.probes,
        }),
        ended_early: r.ended_early.clone(),
        streams: r.streams.iter().map(stream_model).collect(),
        envelope: sonde_schema::Envelope::new(
            "profile",
            r.ended_early.is_some(),
            error.or(r.ended_early.as_deref()),
        ),
    }
}

fn stream_model(s: &StreamResult) -> schema::ProfileStream {
    schema::ProfileStream {
        id: s.id,
        name: s.name.clone(),
        direction: s.direction.as_str().into(),
        size: Some(s.size),
        burst: Some(s.burst),
        gap_ms: Some(s.gap_ms),
        period_ms: Some(s.period_ms),
        offset_ms: s.offset_ms,
        late_ms: Some(s.late_ms),
        sent: s.sent,
        received: s.received,
        lost: s.lost,
        late: Some(s.late),
        out_of_order: Some(s.out_of_order),
        duplicates: Some(s.duplicates),
        foreign: Some(s.foreign),
        delay: s.delay.as_ref().map(delay_model),
        burst_spacing_ms: s.burst_spacing_ms,
        bursts_sent: Some(s.bursts_sent),
        bursts_complete: Some(s.bursts_complete),
        bursts_late: Some(s.bursts_late),
        exceptions: s.exceptions.iter().map(burst_model).collect(),
        exceptions_dropped: s.exceptions_dropped,
    }
}

fn delay_model(d: &DelaySummary) -> schema::Delay {
    schema::Delay {
        basis: match d.basis {
            DelayBasis::Synced => "synced",
            DelayBasis::AboveMinimum => "above-minimum",
            DelayBasis::OffsetEstimated => "offset-estimated",
        }
        .into(),
        samples: d.samples,
        min_ms: Some(d.min_ms),
        mean_ms: Some(d.mean_ms),
        p50_ms: Some(d.p50_ms),
        p99_ms: Some(d.p99_ms),
        max_ms: Some(d.max_ms),
        percentiles_ms: d.percentiles_ms.clone(),
    }
}

fn burst_model(b: &BurstRecord) -> schema::Burst {
    schema::Burst {
        index: b.index,
        at_s: b.at_s,
        received: b.received,
        expected: b.expected,
        last_delay_ms: b.last_delay_ms,
        late: b.late,
    }
}

/// One JSON line `{"event": EVENT, "data": DATA}` (`--json-stream`).
pub fn json_line(event: &str, data: serde_json::Value) -> String {
    serde_json::json!({ "event": event, "data": data }).to_string()
}

/// The figures as JSON lines, for loaders that read one record per line: a `stream` line per
/// stream (its `-J` object without the burst list), a `burst` line per incomplete or late
/// burst (with its stream's `id` and `name`), and an `end` line (the run's fields and
/// `error`). Progress notes are `note` lines written while the run goes.
///
/// # Errors
/// A serialisation error (not expected for a report).
pub fn json_lines(r: &ProfileReport, error: Option<&str>) -> serde_json::Result<Vec<String>> {
    let mut lines = Vec::new();
    for s in &r.streams {
        let mut v = sonde_schema::to_value(&stream_model(s));
        if let Some(o) = v.as_object_mut() {
            o.remove("exceptions");
        }
        lines.push(json_line("stream", v));
        for b in &s.exceptions {
            let mut v = sonde_schema::to_value(&burst_model(b));
            if let Some(o) = v.as_object_mut() {
                o.insert("id".into(), s.id.into());
                o.insert("stream".into(), s.name.clone().into());
            }
            lines.push(json_line("burst", v));
        }
    }
    let mut end = serde_json::to_value(r)?;
    if let Some(o) = end.as_object_mut() {
        o.remove("streams");
        o.insert("error".into(), error.into());
    }
    lines.push(json_line("end", end));
    Ok(lines)
}

#[cfg(test)]
mod tests {
    use super::*;
    use sonde_profile::builtin;
    use sonde_profile::receive::StreamReceiver;

    fn report() -> ProfileReport {
        let p = builtin::get("monitoring").unwrap().with_duration(1.0);
        let mut rx = StreamReceiver::new(3, &p.streams[2], 1.0);
        for seq in 1..=20 {
            rx.on_datagram(seq, 1_000, 1_000 + seq * 1_000_000);
        }
        ProfileReport {
            profile: p.name.clone(),
            planned_s: 1.0,
            ran_s: 1.0,
            clock_synced: false,
            clock_offset: None,
            ended_early: None,
            streams: vec![rx.finish(Some(25), DelayBasis::AboveMinimum, 0, 10)],
        }
    }

    #[test]
    fn table_shows_losses_bursts_and_the_delay_basis() {
        let t = table(&report());
        assert!(t.contains("bulk"), "{t}");
        assert!(t.contains("800Bx25/5000ms"), "{t}");
        assert!(t.contains("20.000%"), "{t}");
        assert!(t.contains("0/1"), "{t}");
        assert!(t.contains("estimate"), "{t}");
        assert!(
            t.contains("20/25   arrived, last datagram 19.000 ms"),
            "{t}"
        );
        // The bulk stream's 1 ms gap, and its arrivals 1 ms apart.
        assert!(t.contains("Spacing inside bursts"), "{t}");
        assert!(t.contains("bulk               1.000     1.000"), "{t}");
    }

    #[test]
    fn json_carries_every_figure_and_the_error() {
        let doc: serde_json::Value =
            serde_json::from_str(&json(&report(), Some("boom")).unwrap()).unwrap();
        crate::snapshot::check("profile_report_1", &doc);
        let s = &doc["streams"][0];
        assert_eq!(s["lost"], 5);
        assert_eq!(s["delay"]["basis"], "above-minimum");
        assert_eq!(s["exceptions"][0]["received"], 20);
        assert_eq!(doc["error"], "boom");
    }

    #[test]
    fn the_model_spells_the_report_key_for_key_as_its_serde_form() {
        let mut r = report();
        r.clock_offset = Some(sonde_profile::result::ClockOffset {
            offset_ns: -1_500,
            uncertainty_ns: 200,
            probes: 7,
        });
        r.ended_early = Some("interrupted".into());
        for (r, error) in [(report(), None), (r, Some("boom"))] {
            let mut want = serde_json::to_value(&r).unwrap();
            if let Some(o) = want.as_object_mut() {
                o.insert("kind".into(), "profile".into());
                o.insert("partial".into(), r.ended_early.is_some().into());
                o.insert("error".into(), error.or(r.ended_early.as_deref()).into());
            }
            crate::snapshot::check(
                &format!("profile_report_model_{}", error.is_some()),
                &document(&r, error),
            );
            assert_eq!(document(&r, error), want);
            let back: schema::ProfileDocument = sonde_schema::from_value("profile", want).unwrap();
            assert_eq!(back, model(&r, error));
        }
        let delays = ["synced", "above-minimum", "offset-estimated"];
        for (basis, name) in [
            DelayBasis::Synced,
            DelayBasis::AboveMinimum,
            DelayBasis::OffsetEstimated,
        ]
        .into_iter()
        .zip(delays)
        {
            assert_eq!(serde_json::to_value(basis).unwrap(), name);
            let mut r = report();
            if let Some(d) = r.streams[0].delay.as_mut() {
                d.basis = basis;
            }
            assert_eq!(document(&r, None)["streams"][0]["delay"]["basis"], name);
        }
        assert_eq!(
            failed_document(Some("refused")),
            serde_json::json!({"kind": "profile", "partial": true, "error": "refused"})
        );
    }

    #[test]
    fn json_lines_put_streams_bursts_and_the_end_on_lines_of_their_own() {
        let lines: Vec<serde_json::Value> = json_lines(&report(), None)
            .unwrap()
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let events: Vec<&str> = lines.iter().filter_map(|l| l["event"].as_str()).collect();
        assert_eq!(events, ["stream", "burst", "end"]);
        assert_eq!(lines[0]["data"]["lost"], 5);
        assert!(lines[0]["data"].get("exceptions").is_none());
        let burst = &lines[1]["data"];
        assert_eq!(
            (burst["id"].clone(), burst["stream"].clone()),
            (3.into(), "bulk".into())
        );
        assert_eq!(
            (burst["received"].clone(), burst["expected"].clone()),
            (20.into(), 25.into())
        );
        assert_eq!(lines[2]["data"]["profile"], "monitoring");
        assert!(lines[2]["data"]["error"].is_null());
        assert!(lines[2]["data"].get("streams").is_none());
    }
}
