//! Flags of `sonde serial` (phase one: parse and validate; the device is opened later).

use clap::{ArgGroup, Args};
use std::path::PathBuf;
use std::time::Duration;

/// `sonde serial DEVICE`: a file in blocks over a serial line, each block acknowledged.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("role").required(true).args(["file", "serve"])))]
pub struct SerialArgs {
    /// The terminal device: a UART (/dev/ttyS0), a USB serial or CDC-ACM port (/dev/ttyUSB0,
    /// /dev/ttyACM0), or a pseudo-terminal
    pub device: PathBuf,
    /// Send this file, once per block size (it is read into memory: 64 MiB at most)
    #[arg(long, value_name = "FILE")]
    pub file: Option<PathBuf>,
    /// Block sizes in bytes, comma-separated, each 1..=4096
    #[arg(long, value_name = "LIST", value_delimiter = ',', default_value = "8,16,32,64,128,256", value_parser = parse_block)]
    pub block: Vec<usize>,
    /// Baud rate the device is set to (a pseudo-terminal accepts and ignores it)
    #[arg(long, value_name = "RATE", default_value_t = 115200, value_parser = parse_baud)]
    pub baud: u32,
    /// Resends of one frame before the transfer gives up
    #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u32).range(0..=1000))]
    pub retries: u32,
    /// How long to wait for each frame's acknowledgement, ms (at low baud rates allow for the
    /// time a block takes on the line)
    #[arg(long, value_name = "MS", default_value = "1000", value_parser = crate::flags::values::parse_ms_arg)]
    pub timeout: Duration,
    /// The device echoes what it receives (a loopback plug, an echo firmware): every frame
    /// must come back intact and identical, and the echoed file's SHA-256 is checked here
    #[arg(long, requires = "file")]
    pub loopback: bool,
    /// Be the far end: receive, acknowledge, check each file's length and SHA-256, until Ctrl-C
    #[arg(long, conflicts_with_all = ["file", "loopback"])]
    pub serve: bool,
    /// With --serve, store each file that arrives intact in this directory, under the name the
    /// sender gives (a transfer that fails its check is not kept)
    #[arg(long, value_name = "DIR", requires = "serve")]
    pub out: Option<PathBuf>,
    /// One JSON document (with --serve: one JSON object per line per transfer)
    #[arg(short = 'J', long)]
    pub json: bool,
}

fn parse_block(s: &str) -> Result<usize, String> {
    match s.trim().parse::<usize>() {
        Ok(b) if (1..=sonde_serial::frame::MAX_PAYLOAD).contains(&b) => Ok(b),
        _ => Err(format!(
            "\"{s}\" is not a block size of 1 to {} bytes",
            sonde_serial::frame::MAX_PAYLOAD
        )),
    }
}

fn parse_baud(s: &str) -> Result<u32, String> {
    let known = || {
        let all: Vec<String> = sonde_serial::tty::BAUD_RATES
            .iter()
            .map(|(b, _)| b.to_string())
            .collect();
        format!(
            "\"{s}\" is not a baud rate this system can set; use one of {}",
            all.join(", ")
        )
    };
    let baud = s.parse::<u32>().map_err(|_| known())?;
    sonde_serial::tty::baud_rate(baud)
        .map(|_| baud)
        .ok_or_else(known)
}
