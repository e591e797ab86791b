//! Which frames an impairment box drops before its seeded stages: IPv6 multicast listener
//! discovery (MLD, RFC 2710 and RFC 3810) messages.
//!
//! A loss, duplication or reordering stage draws one random number per frame, so the same
//! seed drops the same test packets only if the stage sees the same frames in the same order
//! on every run. The lab's own configuration keeps everything else off the links (static
//! neighbours, no DAD, no router solicitations; see [`crate::lab`]), but Linux still sends
//! MLD reports when an interface comes up or joins a group, and repeats them, at moments that
//! vary from run to run. The box drops them on arrival, counted in
//! [`IoStats::mld_dropped`](super::IoStats), whether or not `nft` kept them off the link
//! already. Nothing in a lab relies on multicast listener state (there is no snooping
//! switch or multicast router).
//!
//! Matched: an untagged Ethernet frame to an IPv6 multicast MAC address (`33:33:...`,
//! RFC 2464), EtherType `0x86dd`, whose upper-layer header, after any hop-by-hop,
//! destination-options or routing extension headers (MLD carries a hop-by-hop Router Alert),
//! is ICMPv6 type 130 (query), 131 (v1 report), 132 (done) or 143 (v2 report). Everything
//! else passes, other IPv6 multicast included (a test may send its own), so the rule is
//! exactly "no MLD across an impaired link".

/// Byte layout of the headers read here.
mod field {
    use std::ops::Range;
    /// Ethernet destination address.
    pub const DST: Range<usize> = 0..6;
    /// EtherType of an untagged frame.
    pub const ETHERTYPE: Range<usize> = 12..14;
    /// Start of the IPv6 header.
    pub const IPV6: usize = 14;
    /// IPv6 Next Header, relative to [`IPV6`].
    pub const NEXT_HEADER: usize = 6;
    /// Length of the fixed IPv6 header.
    pub const IPV6_LEN: usize = 40;
}

const ETHERTYPE_IPV6: [u8; 2] = [0x86, 0xdd];
const HOP_BY_HOP: u8 = 0;
const ROUTING: u8 = 43;
const DEST_OPTIONS: u8 = 60;
const ICMPV6: u8 = 58;
const MLD_TYPES: [u8; 4] = [130, 131, 132, 143];

/// True when `frame` is an MLD message (see the module docs).
pub fn is_mld(frame: &[u8]) -> bool {
    let multicast_dst = frame
        .get(field::DST)
        .is_some_and(|d| d[..2] == [0x33, 0x33]);
    if !multicast_dst || frame.get(field::ETHERTYPE) != Some(&ETHERTYPE_IPV6[..]) {
        return false;
    }
    let Some(&first) = frame.get(field::IPV6 + field::NEXT_HEADER) else {
        return false;
    };
    let (mut next, mut at) = (first, field::IPV6 + field::IPV6_LEN);
    // Each extension header: next header, then its length in 8-octet units beyond the first.
    while matches!(next, HOP_BY_HOP | ROUTING | DEST_OPTIONS) {
        let (Some(&n), Some(&len)) = (frame.get(at), frame.get(at + 1)) else {
            return false;
        };
        next = n;
        at += (usize::from(len) + 1) * 8;
    }
    next == ICMPV6 && frame.get(at).is_some_and(|t| MLD_TYPES.contains(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An MLDv2 report as Linux sends it: to 33:33:00:00:00:16 (ff02::16), hop-by-hop with
    /// Router Alert and PadN, ICMPv6 type 143.
    fn mldv2_report() -> Vec<u8> {
        let mut f = vec![0x33, 0x33, 0x00, 0x00, 0x00, 0x16]; // dst
        f.extend([0x02, 0x5d, 0x00, 0x00, 0x01, 0x01]); // src
        f.extend([0x86, 0xdd]); // IPv6
        f.extend([0x60, 0, 0, 0, 0x00, 0x24, HOP_BY_HOP, 1]); // ver, len 36, next 0, hlim 1
        f.extend([
            0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0x5d, 0, 0xff, 0xfe, 0, 0x01, 0x01,
        ]);
        f.extend([0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x16]);
        f.extend([ICMPV6, 0, 0x05, 0x02, 0x00, 0x00, 0x01, 0x00]); // Router Alert, PadN
        f.extend([143, 0, 0x12, 0x34, 0, 0, 0, 1]); // type 143, one record
        f.extend([4, 0, 0, 0]);
        f.extend([
            0xff, 0x02, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01, 0xff, 0, 0x01, 0x01,
        ]);
        f
    }

    #[test]
    fn drops_mld_reports_and_dones() {
        let report = mldv2_report();
        assert!(is_mld(&report));
        for t in [130, 131, 132] {
            let mut f = report.clone();
            f[62] = t;
            assert!(is_mld(&f), "type {t}");
        }
    }

    #[test]
    fn passes_everything_else() {
        let report = mldv2_report();
        // Other ICMPv6 to a multicast address (a neighbour solicitation, type 135).
        let mut ns = report.clone();
        ns[62] = 135;
        assert!(!is_mld(&ns));
        // The same bytes to a unicast MAC address.
        let mut unicast = report.clone();
        unicast[..6].copy_from_slice(&[0x02, 0x5d, 0, 0, 1, 2]);
        assert!(!is_mld(&unicast));
        // UDP to a multicast group, no extension header.
        let mut udp = report.clone();
        udp[20] = 17;
        assert!(!is_mld(&udp));
        // IPv4 to a multicast MAC address.
        let mut v4 = report.clone();
        v4[12..14].copy_from_slice(&[0x08, 0x00]);
        assert!(!is_mld(&v4));
        // Cut before the ICMPv6 type: never a match, never a panic.
        for n in 0..=62 {
            assert!(!is_mld(&report[..n]), "truncated to {n}");
        }
        assert!(is_mld(&report[..63]));
    }

    #[test]
    fn walks_several_extension_headers() {
        let report = mldv2_report();
        // Insert an 8-byte destination-options header after the hop-by-hop one.
        let mut f = report[..54].to_vec();
        f.extend([DEST_OPTIONS, 0, 0x05, 0x02, 0, 0, 0x01, 0x00]);
        f.extend([ICMPV6, 0, 0x01, 0x04, 0, 0, 0, 0]);
        f.extend(&report[62..]);
        assert!(is_mld(&f));
    }
}
