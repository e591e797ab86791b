#!/usr/bin/env bash
# Two builds of sonde side by side on loopback: did a change make the data path slower?
#
# Usage: bench/compare-builds.sh BEFORE_BINARY AFTER_BINARY
#   RUNS=4       runs per build and case, alternating before / after
#   DURATION=3   seconds per run
#   ONLY=REGEX   only the cases whose name matches
#
# Each run starts that build's own server and client (both ends the same version) on
# 127.0.0.1 and reads one figure from the client's -J document: received Mbit/s for the
# throughput cases (end.sum_received for TCP, end.sum for UDP), the median round trip in ms
# for the UDP latency flood, and transactions per second for the TCP request/response case.
# Prints a Markdown table: each build's median (min-max) and the ratio after / before
# (above 1 is faster, except for the round trip, where below 1 is faster).
set -euo pipefail

if [[ $# -ne 2 || ! -x "$1" || ! -x "$2" ]]; then
    sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
fi
BEFORE="$1"
AFTER="$2"
RUNS="${RUNS:-4}"
DURATION="${DURATION:-3}"
ONLY="${ONLY:-.}"
PORT=5297
WORK="$(mktemp -d "${TMPDIR:-/tmp}/sonde-compare.XXXXXX")"
SERVER_PID=""
cleanup() {
    if [[ -n "$SERVER_PID" ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
        kill "$SERVER_PID" 2>/dev/null || true
        wait "$SERVER_PID" 2>/dev/null || true
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT

# name | client arguments | figure (a Python expression over the document d)
CASES=(
    "TCP, 1 stream|-t $DURATION|d['end']['sum_received']['bits_per_second']/1e6"
    "TCP, -P 4|-t $DURATION -P 4|d['end']['sum_received']['bits_per_second']/1e6"
    "UDP -l 1448 -b 0 (GSO)|-t $DURATION -u -b 0 -l 1448|d['end']['sum']['bits_per_second']/1e6"
    "UDP -l 1448 -b 0 --no-gso|-t $DURATION -u -b 0 -l 1448 --no-gso|d['end']['sum']['bits_per_second']/1e6"
    "UDP -l 64 -b 0 (GSO)|-t $DURATION -u -b 0 -l 64|d['end']['sum']['bits_per_second']/1e6"
    "UDP -l 64 -b 0 --no-gso|-t $DURATION -u -b 0 -l 64 --no-gso|d['end']['sum']['bits_per_second']/1e6"
    "latency, UDP flood, median RTT ms|latency --flood -t $DURATION|d['end']['rtt']['median_ms']"
    "latency --tcp-rr, transactions/s|latency --tcp-rr -t $DURATION|d['end']['rate_per_second']"
)

one_run() { # binary, client arguments, figure expression -> prints the figure
    local bin="$1" args="$2" expr="$3"
    "$bin" server -B 127.0.0.1 -p "$PORT" >"$WORK/server.log" 2>&1 &
    SERVER_PID=$!
    # Ready once it says it listens (at most 5 s), not after a guessed pause.
    local waited=0
    until grep -q "listening" "$WORK/server.log"; do
        ((waited++ < 500)) || { echo "the server of $bin never listened:" >&2; cat "$WORK/server.log" >&2; exit 1; }
        sleep 0.01
    done
    local sub=(client)
    [[ "$args" == latency* ]] && sub=()
    # shellcheck disable=SC2086 # the arguments are words by design
    "$bin" "${sub[@]}" $args 127.0.0.1 -p "$PORT" -J >"$WORK/doc.json" 2>"$WORK/client.log" || true
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($expr)" "$WORK/doc.json" ||
        { echo "run failed: $bin $args" >&2; cat "$WORK/client.log" >&2; exit 1; }
}

stats() { # figures... -> "median (min-max)" and the median alone on the second line
    python3 -c 'import statistics,sys; v=[float(x) for x in sys.argv[1:]]; m=statistics.median(v)
f=lambda x: f"{x:,.4f}" if x < 1 else (f"{x:,.3f}" if x < 10 else f"{x:,.1f}")
print(f"{f(m)} ({f(min(v))}-{f(max(v))})"); print(m)' "$@"
}

echo "| case | before, median (runs) | after, median (runs) | after / before |"
echo "|---|---|---|---|"
for case in "${CASES[@]}"; do
    IFS='|' read -r name args expr <<<"$case"
    [[ "$name" =~ $ONLY ]] || continue
    before=() after=()
    for _ in $(seq "$RUNS"); do
        before+=("$(one_run "$BEFORE" "$args" "$expr")")
        after+=("$(one_run "$AFTER" "$args" "$expr")")
    done
    mapfile -t b < <(stats "${before[@]}")
    mapfile -t a < <(stats "${after[@]}")
    ratio="$(python3 -c "import sys; print(f'{float(sys.argv[2])/float(sys.argv[1]):.2f}')" "${b[1]}" "${a[1]}")"
    echo "| $name | ${b[0]} | ${a[0]} | $ratio |"
done
