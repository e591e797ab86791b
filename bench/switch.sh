#!/usr/bin/env bash
# Throughput through the switching library (crates/sonde-switch) against a plain TCP stream on
# loopback, in the same run: the same in-process sender and receiver (128 KiB writes, 256 KiB
# reads, no hashing) over one std TcpStream, then over the library's Conn (no switches), then
# over a plain stream whose sender also copies every buffer into an 8 MiB replay ring (the
# one copy any design that replays after a path change must make: what that copy alone costs).
#
#   bench/switch.sh             # 5 repetitions of 3 s per mode, alternating
#   REPS=9 SECS=5 bench/switch.sh
#   bench/switch.sh --write     # also append the table to bench/RESULTS.md
#
# Prints each run, the median of each mode and the ratios to plain. The modes
# alternate so that a burst of other work on the machine hits both alike.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

REPS=${REPS:-5}
SECS=${SECS:-3}
WRITE=0
[[ "${1:-}" == "--write" ]] && WRITE=1
command -v python3 >/dev/null || { echo "missing python3" >&2; exit 1; }
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT INT TERM

cargo build --release -q -p sonde --example switch_bench
BENCH=target/release/examples/switch_bench

for i in $(seq "$REPS"); do
    for mode in plain library replay-floor; do
        $BENCH "$mode" "$SECS" | tee -a "$TMP/runs"
    done
done

python3 - "$TMP/runs" "$REPS" "$SECS" "$WRITE" <<'PY'
import statistics, sys, datetime, platform, os
runs, reps, secs, write = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
by = {}
for line in open(runs):
    mode, _bytes, _took, bps = line.split()
    by.setdefault(mode, []).append(float(bps))
med = {m: statistics.median(v) for m, v in by.items()}
ratio = med["library"] / med["plain"]
floor = med["replay-floor"] / med["plain"]
def g(x): return f"{x / 1e9:.2f}"
rows = [f"| {m} | {g(med[m])} | {g(min(v))} - {g(max(v))} |" for m, v in by.items()]
table = "\n".join([
    f"{reps} alternating runs of {secs} s per mode, {datetime.date.today()}, "
    f"{os.cpu_count()} cores, kernel {platform.release()}:",
    "",
    "| mode | median Gbit/s | range Gbit/s |",
    "|---|---|---|",
    *rows,
    "",
    f"library / plain (medians): **{ratio:.2f}x**; replay-floor / plain: {floor:.2f}x",
])
print()
print(table)
if write:
    with open("bench/RESULTS.md", "a") as f:
        f.write("\n### bench/switch.sh run\n\n" + table + "\n")
PY
