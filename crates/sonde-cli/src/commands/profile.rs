//! `sonde profile`: list and show profiles, and run one against a sonde server. Exit 0 when
//! the run went to its end (whatever it measured), 1 when it failed or ended early.

use super::exit;
use crate::flags::profile::{ProfileCommand, ProfileRunArgs};
use crate::output::{self, outln};
use sonde_live::profile_report;
use sonde_profile::{builtin, Profile};
use sonde_proto::message::ProfileRequest;
use sonde_runtime::error::RunError;
use sonde_runtime::profile::ProfileConfig;
use sonde_runtime::profile_run;
use sonde_stats::sink::{FnSink, ProgressNote};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

pub fn run(c: ProfileCommand, interrupt: &AtomicBool) -> i32 {
    match c {
        ProfileCommand::List => {
            for (name, what) in builtin::list() {
                outln!("{name:<20} {what}");
            }
            exit::OK
        }
        ProfileCommand::Show { profile } => match load_text(&profile) {
            Ok(text) => {
                outln!("{}", text.trim_end());
                exit::OK
            }
            Err(e) => usage(&e),
        },
        ProfileCommand::Run(a) => run_profile(&a, interrupt),
    }
}

fn usage(e: &str) -> i32 {
    eprintln!("sonde: {e}");
    exit::USAGE
}

/// A built-in's text, or a file's (checked: it must be a valid profile).
fn load_text(name: &str) -> Result<String, String> {
    if let Some(t) = builtin::text(name) {
        return Ok(t.to_string());
    }
    let text = std::fs::read_to_string(name).map_err(|e| {
        format!("\"{name}\" is neither a built-in profile (see `sonde profile list`) nor a readable file: {e}")
    })?;
    Profile::from_toml(&text).map_err(|e| format!("{name}: {e}"))?;
    Ok(text)
}

/// Phase two: the run configuration from validated flags.
fn config(a: &ProfileRunArgs) -> Result<ProfileConfig, String> {
    let text = load_text(&a.profile)?;
    let mut p = Profile::from_toml(&text).map_err(|e| format!("{}: {e}", a.profile))?;
    if let Some(t) = a.time {
        p = p.with_duration(t);
        p.validate()
            .map_err(|e| format!("{} with -t {t}: {e}", a.profile))?;
    }
    Ok(ProfileConfig {
        host: a.host.clone(),
        port: a.port,
        family: a.ip.family(),
        local: super::auth::keyed_sockets(&a.psk)?,
        connect_timeout: Duration::from_secs_f64(a.connect_timeout),
        request: ProfileRequest {
            profile: p,
            clock_synced: a.clock_synced,
            clock_offset: None,
        },
    })
}

fn run_profile(a: &ProfileRunArgs, interrupt: &AtomicBool) -> i32 {
    let cfg = match config(a) {
        Ok(c) => c,
        Err(e) => return usage(&e),
    };
    let (json, lines) = (a.json, a.json_stream);
    let progress = crate::progress::Progress::start("profile run");
    let p = &cfg.request.profile;
    progress.phase(&format!(
        "profile \"{}\": {} streams for {} s",
        p.name,
        p.streams.len(),
        p.duration_s
    ));
    let mut notes = FnSink(|ProgressNote(note): &ProgressNote| {
        progress.suspend(|| {
            if lines {
                outln!(
                    "{}",
                    profile_report::json_line("note", note.as_str().into())
                );
            } else if !json {
                outln!("{note}");
            }
        });
    });
    let outcome = profile_run::run(&cfg, interrupt, &mut notes);
    progress.finish();
    let error = outcome.error.as_ref().map(|e| e.to_string());
    match (&outcome.report, lines, json) {
        (Some(r), true, _) => match profile_report::json_lines(r, error.as_deref()) {
            Ok(all) => all.iter().for_each(|l| outln!("{l}")),
            Err(e) => eprintln!("sonde: cannot write the JSON lines: {e}"),
        },
        (None, true, _) => outln!(
            "{}",
            profile_report::json_line("end", serde_json::json!({ "error": error }))
        ),
        (Some(r), false, false) => outln!("{}", profile_report::table(r).trim_end()),
        (Some(r), false, true) => match profile_report::json(r, error.as_deref()) {
            Ok(doc) => output::written_whole(std::io::stdout(), |w| writeln!(w, "{doc}")),
            Err(e) => eprintln!("sonde: cannot write the JSON document: {e}"),
        },
        // No report: the run failed (or was stopped) before it measured.
        (None, false, true) => output::document(
            std::io::stdout(),
            &profile_report::failed_document(error.as_deref()),
        ),
        (None, false, false) => {}
    }
    if let Some(e) = &outcome.error {
        output::run_error(e, matches!(e, RunError::Interrupted));
        return exit::FAILED;
    }
    if outcome
        .report
        .as_ref()
        .is_some_and(|r| r.ended_early.is_some())
    {
        return exit::FAILED;
    }
    exit::OK
}
