#!/usr/bin/env bash
# The fuzz campaign: builds every target and runs each, one after another, for EXECS
# executions (default 10 000 000) from its committed seeds, then prints executions, exec/s,
# coverage (cov = edges, ft = features) and duration per target.
#
#   fuzz/campaign.sh [EXECS] [TARGET...]
#
# Environment:
#   SONDE_FUZZ_SECONDS  stop each target after this many seconds as well (CI's smoke run)
#   SONDE_FUZZ_RSS_MB   resident memory limit per target, default 1024
#   SONDE_FUZZ_MALLOC_MB  largest single allocation allowed, default 256
#
# Each target runs at the idle scheduling policy (chrt --idle, where chrt exists): it then
# yields a core at once to any other task. A CI run with a merely niced fuzzer (nice 19)
# beside it failed a pacing test whose senders fell behind by up to 4-5 ms
# (bench/RESULTS.md, third fuzz pass).
#
# Exits 1 on any crash, leak, timeout or out-of-memory (the reproducer is left in
# fuzz/artifacts/<target>/ and named in the output), 2 when nightly or cargo-fuzz is missing.
# New corpus entries go to fuzz/corpus/<target>/ (git-ignored); fuzz/seeds/ is never written.
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"
execs="${1:-10000000}"
shift || true
rss="${SONDE_FUZZ_RSS_MB:-1024}"
malloc="${SONDE_FUZZ_MALLOC_MB:-256}"

if ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    echo "campaign: no nightly toolchain (rustup toolchain install nightly); libFuzzer needs it" >&2
    exit 2
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "campaign: cargo-fuzz is missing (cargo install cargo-fuzz)" >&2
    exit 2
fi

if [[ $# -gt 0 ]]; then
    targets=("$@")
else
    mapfile -t targets < <(cargo +nightly fuzz list)
fi

echo "== building ${#targets[@]} targets (nightly, sanitizer coverage, debug assertions)"
cargo +nightly fuzz build --release || exit 1
host="$(rustc +nightly -vV | sed -n 's/^host: //p')"
bin_dir="target/$host/release"

# Input size caps (libFuzzer's -max_len; the default lets inputs grow to 4096 bytes). These
# targets walk their input byte by byte or record by record, so an input's cost grows with
# its length, while what they can reach does not: every path of the serial deframer and
# receiver and of the switching session is reached by inputs well under 1 KiB (a serial
# frame's payload bound of 4096 bytes is checked from its declared length, not by sending
# that many bytes). A cap keeps their later executions as cheap as their first.
declare -A max_len=([serial_frames]=1024 [serial_receiver]=1024 [switch_session]=1024)

mkdir -p logs
failed=()
idle=()
if command -v chrt >/dev/null 2>&1 && chrt --idle 0 true 2>/dev/null; then
    idle=(chrt --idle 0)
fi
printf '%-18s %12s %9s %7s %7s %8s  %s\n' target execs exec/s cov ft seconds result
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t" "artifacts/$t" "seeds/$t"
    limit=()
    if [[ -n "${SONDE_FUZZ_SECONDS:-}" ]]; then
        limit=("-max_total_time=$SONDE_FUZZ_SECONDS")
    fi
    if [[ -n "${max_len[$t]:-}" ]]; then
        limit+=("-max_len=${max_len[$t]}")
    fi
    start=$(date +%s.%N)
    "${idle[@]}" "$bin_dir/$t" -runs="$execs" "${limit[@]}" -rss_limit_mb="$rss" -malloc_limit_mb="$malloc" \
        -timeout=10 -print_final_stats=1 -artifact_prefix="artifacts/$t/" \
        "corpus/$t" "seeds/$t" >"logs/$t.log" 2>&1
    rc=$?
    secs=$(echo "$(date +%s.%N) - $start" | bc)
    ran=$(sed -n 's/^stat::number_of_executed_units: *//p' "logs/$t.log" | tail -1)
    rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "logs/$t.log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "logs/$t.log" | tail -1 | cut -d' ' -f2)
    ft=$(grep -o 'ft: [0-9]*' "logs/$t.log" | tail -1 | cut -d' ' -f2)
    result=ok
    if [[ $rc -ne 0 ]]; then
        art=$(grep -o "artifacts/$t/[a-z-]*[0-9a-f]*" "logs/$t.log" | tail -1)
        result="FAILED (exit $rc) ${art:-see fuzz/logs/$t.log}"
        failed+=("$t")
    fi
    printf '%-18s %12s %9s %7s %7s %8.0f  %s\n' "$t" "${ran:-?}" "${rate:-?}" "${cov:-?}" \
        "${ft:-?}" "$secs" "$result"
done

if [[ ${#failed[@]} -gt 0 ]]; then
    echo "campaign: ${#failed[@]} target(s) failed: ${failed[*]} (logs in fuzz/logs/)" >&2
    exit 1
fi
echo "campaign: all ${#targets[@]} targets ran without a finding"
