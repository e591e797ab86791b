#!/usr/bin/env bash
# How far a short run's receiver rate strays from its sender rate on loopback, where both
# carried the same bytes: the test clocks of the two ends, not the path. Unpaced UDP of 0.3 s
# (the length of a `sonde sweep` step), RUNS times, with HOGS busy loops beside it (a loaded
# host: thread wake-ups then take milliseconds). Prints each lossless run's receiver/sender
# ratio, sorted, and the spread; runs with loss (a full socket buffer) are counted apart.
#
#   bench/short-run-skew.sh [RUNS] [HOGS]        # default 20 runs, 0 hogs
#   SONDE=/path/to/old/sonde bench/short-run-skew.sh 20 2
#
# Environment: SONDE (binary, default target/release/sonde), PORT (default 5391). Needs
# python3 (to read the JSON). A script for people, not a test: CI does not run it.
set -euo pipefail

RUNS=${1:-20}
HOGS=${2:-0}
SONDE=${SONDE:-target/release/sonde}
PORT=${PORT:-5391}
command -v python3 >/dev/null || { echo "short-run-skew: needs python3" >&2; exit 2; }
[ -x "$SONDE" ] || { echo "short-run-skew: no binary at $SONDE (cargo build --release -p sonde)" >&2; exit 2; }

work=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT INT TERM

"$SONDE" server -p "$PORT" >"$work/server.log" 2>&1 &
pids+=($!)
sleep 0.5
for _ in $(seq "$HOGS"); do
    (while :; do :; done) &
    pids+=($!)
done

echo "short-run-skew: $("$SONDE" --version), $RUNS runs of 0.3 s unpaced UDP, $HOGS busy loops"
for i in $(seq "$RUNS"); do
    if ! "$SONDE" client 127.0.0.1 -p "$PORT" -u -b 1000g -l 1400 -t 0.3 -J >"$work/run.json" 2>"$work/run.err"; then
        echo "run $i failed: $(tail -1 "$work/run.err")" >&2
        continue
    fi
    python3 - "$work/run.json" >>"$work/ratios" <<'EOF'
import json, sys
end = json.load(open(sys.argv[1]))["end"]
sent, rcvd = end["sum_sent"], end["sum_received"]
lossy = rcvd.get("lost_packets", 0) > 0
print("%s %.4f %.4f %.4f" % ("lossy" if lossy else "ok", rcvd["bits_per_second"] / sent["bits_per_second"],
                             sent["end"] - sent["start"], rcvd["end"] - rcvd["start"]))
EOF
done

python3 - "$work/ratios" <<'EOF'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
ok = sorted(float(r[1]) for r in rows if r[0] == "ok")
lossy = sum(1 for r in rows if r[0] == "lossy")
if not ok:
    print("no lossless runs"); sys.exit(1)
print("receiver/sender, lossless runs:", " ".join("%.4f" % x for x in ok))
print("lossless %d (min %.4f, median %.4f, max %.4f), lossy %d"
      % (len(ok), ok[0], ok[len(ok) // 2], ok[-1], lossy))
EOF
