//! `sonde compare-ip`: IPv4 against IPv6 to one sonde server.
//!
//! Exit codes for scripts follow the verdict: 0 both families measured and neither is
//! better; 3 IPv4 better; 4 IPv6 better; 1 one or both families failed or the run was
//! interrupted (Ctrl-C prints what was measured, marked partial); 2 usage error.

use super::exit;
use crate::flags::compare_ip::{CompareIpArgs, DEFAULT_COUNT};
use crate::output;
use sonde_live::latency_table::write_compare;
use sonde_runtime::compare_ip::{run_compare, CompareConfig, ComparePhase};
use sonde_runtime::dual_stack::{BtcPlan, SizesPlan};
use sonde_runtime::latency::LatencyConfig;
use sonde_stats::sink::FnSink;
use sonde_stats::verdict::FamilyChoice;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// IPv4 is significantly better.
pub const IPV4_BETTER: i32 = 3;
/// IPv6 is significantly better.
pub const IPV6_BETTER: i32 = 4;

/// Phase two: the run configuration of validated flags.
fn config(a: &CompareIpArgs) -> Result<CompareConfig, String> {
    let mut probe = LatencyConfig::udp(&a.host, a.port);
    probe.psk = super::auth::client_psk(&a.psk)?;
    probe.size = a.size as usize;
    probe.count = Some(a.count.unwrap_or(DEFAULT_COUNT));
    probe.duration = None;
    probe.interval = a.interval.max(std::time::Duration::from_micros(100));
    let sizes = a.size_list().map(|sizes| SizesPlan {
        count: a.rounds(sizes.len()),
        sizes,
        every: a.every,
    });
    Ok(CompareConfig {
        probe,
        ipv4: a.ipv4_addr.map(Into::into),
        ipv6: a.ipv6_addr.map(Into::into),
        throughput_secs: a.throughput_time.as_secs_f64(),
        connect_timeout: a.connect_timeout,
        sizes,
        btc: (a.btc || a.all).then(|| BtcPlan {
            sizes: a.btc_sizes.clone(),
            every: a.btc_every,
        }),
        capacity: a.capacity || a.all,
    })
}

/// Runs the compare-ip command.
pub fn run(a: CompareIpArgs, interrupt: &Arc<AtomicBool>) -> i32 {
    if let Err(e) = a.validate() {
        eprintln!("sonde: usage error - {e}");
        return exit::USAGE;
    }
    let cfg = match config(&a) {
        Ok(c) => c,
        Err(e) => return super::auth::unusable_file(&e),
    };
    let out = match output::destination(&a.output) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("sonde: error - {e:#}");
            return exit::FAILED;
        }
    };
    let progress = crate::progress::Progress::start("compare-ip");
    let mut phases = FnSink(|phase: &ComparePhase| progress.phase(&phase.to_string()));
    let result = run_compare(&cfg, interrupt, &mut phases);
    progress.finish();
    let failed = family_error(&result);
    // Ended early: interrupted, or neither family measured. One family that failed (no
    // address of that family, say) leaves a complete comparison with its error.
    let none_measured = result.ipv4.error.is_some() && result.ipv6.error.is_some();
    let env = sonde_live::envelope::Envelope::new("compare-ip")
        .partial(result.partial || none_measured)
        .error(failed.as_deref());
    // The document is the typed model (`sonde report` reads it back); the stream's `end`
    // line is the runtime's result, as before.
    let data = if a.output.json {
        sonde_live::compare_ip_json::document(
            &result,
            result.partial || none_measured,
            failed.as_deref(),
        )
    } else {
        serde_json::to_value(&result).unwrap_or_default()
    };
    output::one_result(&out, &a.output, &env, data, |mut w| {
        write_compare(&mut w, &result)
    });
    if result.partial {
        // Interrupted: the figures so far are printed, marked partial; stderr says why.
        let why = failed.as_deref().unwrap_or("interrupted");
        output::run_error(&why, interrupt.load(Ordering::SeqCst));
        return exit::FAILED;
    }
    if failed.is_some() {
        // A family failed: the table or the document says which and why.
        return exit::FAILED;
    }
    match result.verdict.better {
        FamilyChoice::Ipv4 => IPV4_BETTER,
        FamilyChoice::Ipv6 => IPV6_BETTER,
        FamilyChoice::Neither => exit::OK,
    }
}

/// The envelope's `error`: each failed family's, named.
fn family_error(r: &sonde_stats::latency::model::CompareIpResult) -> Option<String> {
    let errors: Vec<String> = [("IPv4", &r.ipv4.error), ("IPv6", &r.ipv6.error)]
        .into_iter()
        .filter_map(|(f, e)| e.as_ref().map(|e| format!("{f}: {e}")))
        .collect();
    (!errors.is_empty()).then(|| errors.join("; "))
}
