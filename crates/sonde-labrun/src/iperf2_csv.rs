//! A lab test that runs iperf 2's own client (`iperf -c ... -y C`) prints CSV lines, not a
//! document; this turns them into the few keys of iperf3's schema that the store and the
//! report read (`end.sum_sent`), so iperf 2 sits in the same tables as sonde and iperf3
//! (scenario 4's comparison). Pure text work.
//!
//! iperf 2's lines are `timestamp,src,src_port,dst,dst_port,id,start-end,bytes,bits_per_second`
//! (UDP adds its report's columns). The summary is the lines that span the whole test, from
//! 0.0 to the latest end; with `-P` iperf 2.1.8 writes no sum line, so the streams' lines are
//! added (a sum line, id -1, is used as it is when there is one).

use serde_json::{json, Value};

/// One line's figures.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Line {
    id: i64,
    start: f64,
    end: f64,
    bytes: u64,
    bits_per_second: f64,
}

fn parse_line(line: &str) -> Option<Line> {
    let f: Vec<&str> = line.trim().split(',').collect();
    if f.len() < 9 {
        return None;
    }
    let (start, end) = f[6].split_once('-')?;
    Some(Line {
        id: f[5].parse().ok()?,
        start: start.parse().ok()?,
        end: end.parse().ok()?,
        bytes: f[7].parse().ok()?,
        bits_per_second: f[8].parse().ok()?,
    })
}

/// The document of what an `iperf -y C` client printed; None when no line reads as iperf 2's
/// CSV. `udp` says whether the test was `-u`.
pub fn document(text: &str, udp: bool) -> Option<Value> {
    let lines: Vec<Line> = text.lines().filter_map(parse_line).collect();
    let end = lines
        .iter()
        .filter(|l| l.start == 0.0)
        .map(|l| l.end)
        .fold(f64::NAN, f64::max);
    if end.is_nan() {
        return None;
    }
    let whole: Vec<&Line> = lines
        .iter()
        .filter(|l| l.start == 0.0 && l.end == end)
        .collect();
    let sums: Vec<&Line> = whole.iter().copied().filter(|l| l.id == -1).collect();
    let pick = if sums.is_empty() { whole } else { sums };
    let bytes: u64 = pick.iter().map(|l| l.bytes).sum();
    let bits: f64 = pick.iter().map(|l| l.bits_per_second).sum();
    let streams = pick.len().max(1);
    Some(json!({
        "start": {"test_start": {
            "protocol": if udp { "UDP" } else { "TCP" },
            "num_streams": streams,
            "duration": end,
        }},
        "end": {"sum_sent": {
            "start": 0.0,
            "end": end,
            "seconds": end,
            "bytes": bytes,
            "bits_per_second": bits,
            "sender": true,
        }},
        "converted_from": "iperf 2 -y C (the client's own view: bytes written)",
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What Debian's iperf 2.1.8 printed for `iperf -c 127.0.0.1 -t 1 -y C`.
    const ONE: &str =
        "19700101000000,127.0.0.1,49142,127.0.0.1,25001,1,0.0-1.0,1518075964,12044971706\n";
    /// `-P 4 -y C`: four streams, no sum line.
    const FOUR: &str = "\
19700101000000,127.0.0.1,40888,127.0.0.1,25001,1,0.0-1.0,1113980988,8889969688
19700101000000,127.0.0.1,40868,127.0.0.1,25001,3,0.0-1.0,1555169340,12416422543
19700101000000,127.0.0.1,40856,127.0.0.1,25001,2,0.0-1.0,1268252732,10125558103
19700101000000,127.0.0.1,40876,127.0.0.1,25001,4,0.0-1.0,933494844,7446557346
";

    #[test]
    fn one_stream_is_its_summary() {
        let d = document(ONE, false).unwrap();
        assert_eq!(d["end"]["sum_sent"]["bytes"], 1_518_075_964u64);
        assert_eq!(d["end"]["sum_sent"]["bits_per_second"], 12_044_971_706.0);
        assert_eq!(d["start"]["test_start"]["protocol"], "TCP");
    }

    #[test]
    fn streams_without_a_sum_line_are_added() {
        let d = document(FOUR, false).unwrap();
        assert_eq!(
            d["end"]["sum_sent"]["bytes"],
            1_113_980_988u64 + 1_555_169_340 + 1_268_252_732 + 933_494_844
        );
        assert_eq!(d["start"]["test_start"]["num_streams"], 4);
    }

    #[test]
    fn intervals_are_left_out_and_a_sum_line_is_taken_as_it_is() {
        let text = "\
20261204190000,10.0.0.1,1,10.0.0.2,5001,1,0.0-1.0,100,800
20261204190001,10.0.0.1,1,10.0.0.2,5001,1,1.0-2.0,200,1600
20261204190001,10.0.0.1,1,10.0.0.2,5001,1,0.0-2.0,300,1200
20261204190001,10.0.0.1,2,10.0.0.2,5001,2,0.0-2.0,300,1200
20261204190001,10.0.0.1,2,10.0.0.2,5001,-1,0.0-2.0,600,2400
";
        let d = document(text, false).unwrap();
        assert_eq!(d["end"]["sum_sent"]["bytes"], 600u64);
        assert_eq!(d["end"]["sum_sent"]["seconds"], 2.0);
    }

    #[test]
    fn text_that_is_not_iperf2_csv_gives_nothing() {
        assert!(document("", false).is_none());
        assert!(document("[  1] 0.0-1.0 sec 1.2 GBytes\n", false).is_none());
        assert!(document("a,b,c,d,e,f,g,h,i\n", true).is_none());
    }
}
