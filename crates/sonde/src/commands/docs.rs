//! `sonde completions SHELL` and `sonde man`: shell completions and the man page, generated
//! from the same flag definitions the parser uses, so they cannot drift from the CLI.

use super::exit;
use crate::cli_parse::command;
use std::io::Write;

/// Prints the completion script for `shell`.
pub fn completions(shell: clap_complete::Shell) -> i32 {
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut command(), "sonde", &mut buf);
    write_out(&buf)
}

/// Prints the man page (roff).
pub fn man() -> i32 {
    let mut buf = Vec::new();
    if let Err(e) = clap_mangen::Man::new(command()).render(&mut buf) {
        eprintln!("sonde: error - cannot render the man page: {e}");
        return exit::FAILED;
    }
    write_out(&buf)
}

fn write_out(bytes: &[u8]) -> i32 {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|_| out.flush()) {
        Ok(()) => exit::OK,
        Err(e) => {
            crate::output::write_failed(&e);
            exit::FAILED
        }
    }
}
