#!/usr/bin/env bash
# sonde's iperf 2 server (`sonde server --iperf2`) against iperf 2's own (`iperf -s`), serving
# the same iperf 2 client (`iperf -c`) on loopback: TCP with 1 and 4 streams, UDP at 64 and
# 1448 bytes. Runs alternate (sonde, iperf, sonde, ...), RUNS of each; each row gives the
# medians and the min-max spread of what the server received and of the server's CPU over
# the test (user + system of the server process, from /proc, per second of the test).
#
# iperf 2.1.8's UDP server crashes on its second test (a segmentation fault, seen here on
# Debian's package), so every run starts its server anew, for both servers alike.
#
# Usage: bench/iperf2_server.sh [RUNS] [SECONDS]     (defaults 5 and 3)
# Needs: iperf (2.x), python3, and sonde built (SONDE=path, default target/release/sonde).
set -euo pipefail

RUNS="${1:-5}"
SECS="${2:-3}"
SONDE="${SONDE:-$(dirname "$0")/../target/release/sonde}"
command -v iperf >/dev/null || { echo "iperf (2.x) is not installed" >&2; exit 1; }
[[ -x "$SONDE" ]] || { echo "no sonde at $SONDE (cargo build --release -p sonde)" >&2; exit 1; }
PORT=25901
work="$(mktemp -d)"
trap 'rm -rf "$work"; kill $(jobs -p) 2>/dev/null || true' EXIT

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# One run: server kind ($1: sonde|iperf), client arguments ($2...). Prints "bits/s cpu%".
one_run() {
    local kind="$1"; shift
    if [[ "$kind" == sonde ]]; then
        "$SONDE" server -p $((PORT + 100)) --iperf2 "$PORT" -J >"$work/server.out" 2>"$work/server.err" &
    else
        local u=""; [[ " $* " == *" -u "* ]] && u="-u"
        iperf -s $u -p "$PORT" -y C >"$work/server.out" 2>"$work/server.err" &
    fi
    local pid=$!
    sleep 0.5
    local t0; t0=$(cpu_ticks "$pid")
    iperf -c 127.0.0.1 -p "$PORT" -t "$SECS" "$@" >"$work/client.out" 2>&1 || true
    sleep 0.5
    local t1; t1=$(cpu_ticks "$pid")
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    python3 - "$kind" "$work/server.out" "$t0" "$t1" "$SECS" "$(getconf CLK_TCK)" <<'EOF'
import json, sys
kind, path, t0, t1, secs, hz = sys.argv[1:]
text = open(path).read()
bits = 0.0
if kind == "sonde":
    dec, i = json.JSONDecoder(), 0
    while text[i:].strip():
        s = text[i:].lstrip()
        doc, n = dec.raw_decode(s)
        i = len(text) - len(s) + n
        end = doc.get("end", {})
        for key in ("sum_received", "sum"):
            if key in end:
                bits += end[key]["bits_per_second"]
                break
else:
    # iperf -s -y C: per-stream lines, and a sum line (id -1) with -P; UDP lines carry more
    # columns. The sum line when there is one, else the one stream's.
    rows = [l.split(",") for l in text.splitlines() if l.count(",") >= 8]
    sums = [r for r in rows if r[5] == "-1"]
    pick = sums if sums else rows
    bits = sum(float(r[8]) for r in pick)
cpu = (int(t1) - int(t0)) / int(hz) / float(secs) * 100
print(f"{bits:.0f} {cpu:.1f}")
EOF
}

row() {
    local label="$1"; shift
    : >"$work/sonde.rows"; : >"$work/iperf.rows"
    for _ in $(seq "$RUNS"); do
        one_run sonde "$@" >>"$work/sonde.rows"
        one_run iperf "$@" >>"$work/iperf.rows"
    done
    python3 - "$label" "$work/sonde.rows" "$work/iperf.rows" <<'EOF'
import statistics, sys
label, a, b = sys.argv[1:]
def load(p):
    rows = [tuple(map(float, l.split())) for l in open(p) if l.strip()]
    return [r[0] for r in rows], [r[1] for r in rows]
def fmt(v, scale, unit):
    v = [x / scale for x in v]
    return f"{statistics.median(v):.2f} {unit} ({min(v):.2f}-{max(v):.2f})"
sr, sc = load(a)
ir, ic = load(b)
ratio = statistics.median(sr) / statistics.median(ir) if statistics.median(ir) else float("nan")
print(f"| {label} | {fmt(sr, 1e9, 'Gbit/s')} | {fmt(sc, 1, '%')} | {fmt(ir, 1e9, 'Gbit/s')} | {fmt(ic, 1, '%')} | {ratio:.2f} |")
EOF
}

echo "iperf 2 client against sonde's iperf 2 server and iperf -s, $RUNS alternating runs of $SECS s"
echo "$(uname -r), $(nproc) cores, $(iperf -v 2>&1 | head -1)"
echo
echo "| case | sonde server received | sonde server CPU | iperf -s received | iperf -s CPU | received, sonde/iperf |"
echo "|---|---|---|---|---|---|"
row "TCP, 1 stream" -i 1
row "TCP, 4 streams" -P 4
row "UDP 64 B, -b 100m" -u -l 64 -b 100m
row "UDP 1448 B, -b 1g" -u -l 1448 -b 1g
