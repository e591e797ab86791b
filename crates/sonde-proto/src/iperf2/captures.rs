//! Bytes captured from Debian's iperf 2.1.8 on loopback, as hex: the literal vectors of this
//! module's tests, the seeds of its fuzz targets and the examples of its documentation.
//!
//! Each was taken by relaying a real `iperf -c 127.0.0.1` to a real `iperf -s` through a
//! recording relay; the option lists name the client's flags.

/// Bytes of a hex string; whitespace is skipped, and so is anything that is not two hex digits.
pub fn hex(s: &str) -> Vec<u8> {
    let digits: Vec<u8> = s
        .bytes()
        .filter_map(|b| (b as char).to_digit(16))
        .map(|d| d as u8)
        .collect();
    digits.chunks_exact(2).map(|p| (p[0] << 4) | p[1]).collect()
}

/// `iperf -c 127.0.0.1 -p 16000 -t 1` (identical with `-e`, which changes only the output).
pub const TCP_DEFAULT: &str = "40010078 00000001 00003e80 00000000 00000000 ffffff9c 00000000 \
    00000000 00000000 00020001 00080003 00000000 00000000 00000000 00000000";

/// `-d -t 1`: dual test, connect back to port 16000 at once.
pub const TCP_DUAL: &str = "c0010079 00000001 00003e80 00000000 00000000 ffffff9c 00000000 \
    00000000 00000000 00020001 00080003 00000000 00000000 00000000 00000000";

/// `-r -t 1`: tradeoff.
pub const TCP_TRADEOFF: &str = "c0010078 00000001 00003e80 00000000 00000000 ffffff9c 00000000 \
    00000000 00000000 00020001 00080003 00000000 00000000 00000000 00000000";

/// `-R -t 1`: reverse.
pub const TCP_REVERSE: &str = "44010078 00000001 00003e80 00000000 00000000 ffffff9c 00000000 \
    00000000 04000000 00020001 00080003 00000000 00000000 00000000 00000000";

/// `--full-duplex -t 1`.
pub const TCP_FULL_DUPLEX: &str = "44010078 00000001 00003e80 00000000 00000000 ffffff9c 00000000 \
    00000000 08000000 00020001 00080003 00000000 00000000 00000000 00000000";

/// `-n 100000 -l 1000 -P 2` (each of the two streams sends this).
pub const TCP_BYTES: &str = "40010078 00000002 00003e80 000003e8 00000000 000186a0 00000000 \
    00000000 00000000 00020001 00080003 00000000 00000000 00000000 00000000";

/// `--trip-times -t 1`: 80 bytes, with the start-time block.
pub const TCP_TRIP: &str = "400100a0 00000001 00003e80 00000000 00000000 ffffff9c 00000000 \
    00000000 00100000 00020001 00080003 00000000 00000000 00000000 00000000 00000000 \
    6b1229ca 000cd9b8 00000000 00000000";

/// `-u -b 1m -t 1`: the first datagram's 76 header bytes (the same with `-e`).
pub const UDP_1M: &str = "00000001 6b12293b 000c2dc0 00000000 48010098 00000001 00003e80 \
    00000000 00000000 ffffff9c 00000000 00000000 00000000 00020001 00080003 00000000 \
    000f4240 00000000 00000000";

/// `-u -d -b 1m -t 1`.
pub const UDP_DUAL: &str = "00000001 6b12296e 000111e1 00000000 c8010099 00000001 00003e80 \
    00000000 00000000 ffffff9c 00000000 00000000 00000000 00020001 00080003 00000000 \
    000f4240 00000000 00000000";

/// `-u -b 100pps -t 1` (a later datagram: sequence 7). 2.1.8 sets no pps flag here.
pub const UDP_PPS: &str = "00000007 6b1229a3 000c1d97 00000000 48010098 00000001 00003e80 \
    00000000 00000000 ffffff9c 00000000 00000000 00000000 00020001 00080003 00000000 \
    00000064 00000000 00000000";

/// `iperf -c 127.0.0.1 -u -b 1m -t 1` (2.1.8): the first datagram's header.
pub const UDP_FIRST: &str = "00000001 6b12293b 000c2dc0 00000000";

/// The same test's final datagram: sequence 89 negated, in both halves.
pub const UDP_FINAL: &str = "ffffffa7 6b12293c 000c8892 ffffffff";

/// What `iperf -s -u` (2.1.8) sent `iperf -c -u -b 1m -t 1`: 89 datagrams, none lost,
/// 1.022431 s, 58 us of jitter.
pub const SERVER_REPORT: &str = "00000000 00000000 00000000 00000000 88000000 00000000 0001ff0e \
    00000001 0000579f 00000000 00000000 00000059 00000000 0000003a 00000000 00000014 \
    00000000 00000354 00000000 00002001 00000000 0000005c 001165dd 00091631 00000000 \
    ffffffc5 00000059 00000057 00000001 00000000 00000000 00000000";

/// The same from `iperf -s -u -e`: the extension flag set.
pub const SERVER_REPORT_E: &str = "00000000 00000000 00000000 00000000 c8000000 00000000 0001ff0e \
    00000001 00005a15 00000000 00000000 00000059 00000000 00000028 00000000 0000000f \
    00000000 00000146 00000000 00001938 00000000 00000048 000494a6 000057c7 00000000 \
    fffffff6 00000059 00000056 00000001 00000000 00000000 00000000";

/// `iperf -c 127.0.0.1 --bounceback -t 1` (2.1.8): the first request's header.
pub const BOUNCEBACK_REQUEST: &str =
    "00800000 00000064 00000001 80005a5a 00000000 6b122966 0006d02b \
    ffffffff ffffffff ffffffff ffffffff 00000000 5a5a5a5a 5a5a5a5a 5a5a5a5a";

/// `iperf -s`'s reply to it.
pub const BOUNCEBACK_REPLY: &str =
    "00800000 00000064 00000001 80005a5a 00000000 6b122966 0006d02b \
    6b122966 0006d47f 6b122966 0006d505 00000000 5a5a5a5a 5a5a5a5a 5a5a5a5a";

/// `-b 10m -S 0x10 -t 1`: TOS 0x10 at offset 46, 10 000 000 in the rate's low word.
pub const TCP_RATE_TOS: &str = "40010078 00000001 00003e80 00000000 00000000 ffffff9c 00000000 \
    00000000 00000000 00020001 00080003 00000010 00989680 00000000 00000000";

/// `-u -l 64 -b 1m -t 1`: the buffer length in the header (the first datagram is still the 76
/// bytes the header needs).
pub const UDP_LEN64: &str = "00000001 6b122ba3 000870f5 00000000 48010098 00000001 00003e80 \
    00000040 00000000 ffffff9c 00000000 00000000 00000000 00020001 00080003 00000000 \
    000f4240 00000000 00000000";

/// The report `iperf -s -u` sent for `-u -l 64 -b 1m -t 1`: 1956 datagrams, 8 us of jitter.
pub const SERVER_REPORT_LEN64: &str = "00000000 00000000 00000000 00000000 88000000 00000000 \
    0001e90c 00000001 00000197 00000000 00000000 000007a4 00000000 00000008 00000000 0000000a \
    00000000 000000a4 00000000 000081e7 00000000 00000011 00017938 000f3046 00000000 00000000 \
    000007a4 000007a3 00000001 00000000 00000000 00000000";

/// What `iperf -s` (2.1.8) writes back on every TCP test connection after reading the
/// client header: the 28-byte header acknowledgement.
pub const CLIENT_HDR_ACK: &str = "00000002 0000001c 00000000 00020001 00080003 00000000 00000000";

/// `-X -t 1`: peer detection (flags add version 2 and peer detect).
pub const TCP_PEER_DETECT: &str = "46010078 00000001 00003e80 00000000 00000000 ffffff9c \
    00000000 00000000 00000000 00020001 00080003 00000000 00000000 00000000 00000000";

/// `--bounceback --bounceback-hold 5 -t 1`: the hold in microseconds (5000).
pub const BOUNCEBACK_HOLD5: &str = "00800000 00000064 00000001 80005a5a 00000000 6b122c13 \
    000cc8d8 ffffffff ffffffff ffffffff ffffffff 00001388 5a5a5a5a 5a5a5a5a 5a5a5a5a";

/// `--bounceback --bounceback-no-quickack -t 1`: the quick-ack flag cleared.
pub const BOUNCEBACK_NO_QUICKACK: &str = "00800000 00000064 00000001 00005a5a 00000000 6b122c1c \
    00073cd6 ffffffff ffffffff ffffffff ffffffff 00000000 5a5a5a5a 5a5a5a5a 5a5a5a5a";

/// `-w 256k -t 2`: the window is not in the header (2.1.8 leaves the field 0); -200 is 2 s.
pub const TCP_WINDOW_2S: &str = "40010078 00000001 00003e80 00000000 00000000 ffffff38 \
    00000000 00000000 00000000 00020001 00080003 00000000 00000000 00000000 00000000";

/// `-u -P 4 -t 1`: four streams, each saying so, at the default 1 048 576 bit/s.
pub const UDP_P4: &str = "00000001 6b122c5b 000a8502 00000000 48010098 00000004 00003e80 \
    00000000 00000000 ffffff9c 00000000 00000000 00000000 00020001 00080003 00000000 \
    00100000 00000000 00000000";

// ---- Every capture above once, by the decoder that reads it (in the order they were
// taken): the fuzz targets' seeds and the hostile-input tests take them from here.

/// The TCP tests' client headers (`client_hdr::ClientHeader`).
pub const TCP_CLIENT_HEADERS: &[&str] = &[
    TCP_DEFAULT,
    TCP_DUAL,
    TCP_TRADEOFF,
    TCP_REVERSE,
    TCP_FULL_DUPLEX,
    TCP_BYTES,
    TCP_TRIP,
    TCP_RATE_TOS,
    TCP_PEER_DETECT,
    TCP_WINDOW_2S,
];

/// The UDP tests' first datagrams: a datagram header, then the client header
/// (`client_hdr::UdpClientHeader`).
pub const UDP_CLIENT_HEADERS: &[&str] = &[UDP_1M, UDP_DUAL, UDP_PPS, UDP_LEN64, UDP_P4];

/// UDP datagram headers with no client header after them (`udp::UdpDatagram`, which also
/// reads the start of each of [`UDP_CLIENT_HEADERS`]).
pub const UDP_DATAGRAMS: &[&str] = &[UDP_FIRST, UDP_FINAL];

/// The UDP server's reports (`server_report::ServerReport`).
pub const SERVER_REPORTS: &[&str] = &[SERVER_REPORT, SERVER_REPORT_E, SERVER_REPORT_LEN64];

/// Bounceback requests and replies (`bounceback::BouncebackHeader`).
pub const BOUNCEBACKS: &[&str] = &[
    BOUNCEBACK_REQUEST,
    BOUNCEBACK_REPLY,
    BOUNCEBACK_HOLD5,
    BOUNCEBACK_NO_QUICKACK,
];

/// The server's acknowledgements of a client header (`ack::ClientHdrAck`).
pub const CLIENT_HDR_ACKS: &[&str] = &[CLIENT_HDR_ACK];
