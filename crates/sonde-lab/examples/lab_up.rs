//! Builds a built-in scenario's lab with one settings entry and keeps it up for a while, for
//! looking around with `ip netns exec` (`cargo run --example lab_up -- quick loss-5 30`).

use std::time::Duration;

use sonde_lab::{Lab, LabOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let name = args.next().unwrap_or_else(|| "quick".into());
    let settings = args.next();
    let secs: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(10);
    let scenario = sonde_scenario::builtin(&name).ok_or("no such built-in scenario")?;
    let lab = Lab::build(&scenario, settings.as_deref(), LabOptions::default())?;
    println!("lab {} up for {secs} s:", lab.prefix());
    for ns in lab.layout().namespaces() {
        println!("  {ns}");
    }
    std::thread::sleep(Duration::from_secs(secs));
    let report = lab.finish();
    println!("{}", serde_json::to_string_pretty(&report)?);
    Ok(())
}
