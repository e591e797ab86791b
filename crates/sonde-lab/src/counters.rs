//! Interface counters of a node, for a test's "link send rate" and "link receive rate".
//!
//! Read with `ip -s -j link show` inside the namespace: the kernel's 64-bit counters as JSON,
//! the same numbers `/sys/class/net/*/statistics` shows from inside the namespace, without
//! needing that namespace's sysfs mounted. The lab turns segmentation offloads and GRO off on
//! every interface ([`crate::offload`]), so these count frames as they crossed the link: a
//! TCP sender's interface and the receiver's agree, rather than the sender counting 64 KiB
//! super-packets. On a veth pair one end's `rx` is the other end's `tx`.

use crate::cmd;
use crate::error::LabError;

/// One interface's counters at one instant.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct IfCounters {
    /// The interface name.
    pub name: String,
    /// Frames received.
    pub rx_packets: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Frames received but dropped by the kernel.
    pub rx_dropped: u64,
    /// Frames sent.
    pub tx_packets: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
    /// Frames dropped on send.
    pub tx_dropped: u64,
}

impl IfCounters {
    /// `self - earlier`, per counter (saturating: a counter never runs backwards on one
    /// interface, but a recreated interface starts again from zero).
    pub fn since(&self, earlier: &IfCounters) -> IfCounters {
        IfCounters {
            name: self.name.clone(),
            rx_packets: self.rx_packets.saturating_sub(earlier.rx_packets),
            rx_bytes: self.rx_bytes.saturating_sub(earlier.rx_bytes),
            rx_dropped: self.rx_dropped.saturating_sub(earlier.rx_dropped),
            tx_packets: self.tx_packets.saturating_sub(earlier.tx_packets),
            tx_bytes: self.tx_bytes.saturating_sub(earlier.tx_bytes),
            tx_dropped: self.tx_dropped.saturating_sub(earlier.tx_dropped),
        }
    }
}

/// Parses `ip -s -j link show` output.
///
/// # Errors
/// A reason when the text is not the expected JSON.
pub fn parse(json: &str) -> Result<Vec<IfCounters>, String> {
    let v: serde_json::Value = serde_json::from_str(json).map_err(|e| e.to_string())?;
    let links = v.as_array().ok_or("not a JSON array")?;
    links
        .iter()
        .map(|l| {
            let name = l["ifname"].as_str().ok_or("an entry without ifname")?;
            let s = &l["stats64"];
            let num = |dir: &str, key: &str| s[dir][key].as_u64().unwrap_or(0);
            if s.is_null() {
                return Err(format!("{name}: no stats64 (was -s given?)"));
            }
            Ok(IfCounters {
                name: name.to_owned(),
                rx_packets: num("rx", "packets"),
                rx_bytes: num("rx", "bytes"),
                rx_dropped: num("rx", "dropped"),
                tx_packets: num("tx", "packets"),
                tx_bytes: num("tx", "bytes"),
                tx_dropped: num("tx", "dropped"),
            })
        })
        .collect()
}

/// The counters of every interface in namespace `netns`, loopback included.
///
/// # Errors
/// [`LabError::Command`] when `ip` fails, [`LabError::Output`] when its output is not parsable.
pub fn read(netns: &str) -> Result<Vec<IfCounters>, LabError> {
    let args = ["-s", "-j", "link", "show"];
    let out = cmd::ip_in(netns, &args)?;
    parse(&out).map_err(|reason| LabError::Output {
        command: cmd::display("ip", &["-n", netns, "-s", "-j", "link", "show"]),
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ip_json() {
        let json = r#"[{"ifindex":2,"ifname":"s-wan","stats64":{"rx":{"bytes":100,"packets":2,
            "errors":0,"dropped":1},"tx":{"bytes":300,"packets":3,"errors":0,"dropped":0}}}]"#;
        let c = parse(json).unwrap_or_default();
        assert_eq!(c.len(), 1);
        assert_eq!(
            (c[0].rx_packets, c[0].rx_bytes, c[0].rx_dropped),
            (2, 100, 1)
        );
        assert_eq!((c[0].tx_packets, c[0].tx_bytes), (3, 300));
        let later = IfCounters {
            tx_bytes: 1300,
            ..c[0].clone()
        };
        assert_eq!(later.since(&c[0]).tx_bytes, 1000);
        assert!(parse("{}").is_err());
        assert!(parse(r#"[{"ifname":"x"}]"#).is_err());
    }
}
