//! Writes the report of a results database or of sonde `-J` documents, as `sonde report` will:
//! `cargo run -p sonde-report --example report -- OUT_DIR RESULTS...`.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let Some((out, inputs)) = args.split_first() else {
        eprintln!("usage: report OUT_DIR RESULTS...");
        return ExitCode::from(2);
    };
    let written = sonde_report::Inputs::from_paths(inputs)
        .and_then(|i| sonde_report::write_report(&i, out, &sonde_report::Format::ALL));
    match written {
        Ok(paths) => {
            for p in paths {
                println!("{}", p.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("report: {e}");
            ExitCode::FAILURE
        }
    }
}
