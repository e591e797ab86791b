#!/usr/bin/env bash
# Loopback latency: sonde against ping, irtt and sockperf (Debian packages), in the same run.
#
#   bench/latency.sh            # 10 s per tool at 10 ms, then 5 s at 1 ms for the schedule error
#   SECS=3 bench/latency.sh     # quicker, noisier
#   bench/latency.sh --write    # also append the table to bench/RESULTS.md
#
# Prints median and p99 RTT of each tool (UDP probes every 10 ms; ping uses ICMP, so it is a
# reference, not a like-for-like figure) and the schedule (timer) error of sonde and irtt at a
# 1 ms interval. Needs python3, irtt, sockperf and iputils-ping (apt-get install -y irtt sockperf
# iputils-ping); ping below 200 ms intervals needs root. Servers are stopped on exit.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

SECS=${SECS:-10}
WRITE=0
[[ "${1:-}" == "--write" ]] && WRITE=1
SONDE_PORT=5398
IRTT_PORT=5397
SP_PORT=5396
TMP=$(mktemp -d)
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    rm -rf "$TMP"
}
trap cleanup EXIT INT TERM

for tool in irtt sockperf ping python3; do
    command -v "$tool" >/dev/null || { echo "missing $tool (apt-get install -y irtt sockperf iputils-ping)" >&2; exit 1; }
done

cargo build --release -q -p sonde
SONDE=target/release/sonde

$SONDE server -B 127.0.0.1 -p $SONDE_PORT >"$TMP/sonde-server.log" 2>&1 & PIDS+=($!)
irtt server -i 0 -b 127.0.0.1:$IRTT_PORT >"$TMP/irtt-server.log" 2>&1 & PIDS+=($!)
sockperf server -i 127.0.0.1 -p $SP_PORT >"$TMP/sockperf-server.log" 2>&1 & PIDS+=($!)
sleep 1

N=$((SECS * 100))
echo "== ${SECS} s per tool, 10 ms interval, 127.0.0.1"
$SONDE latency 127.0.0.1 -p $SONDE_PORT -i 10ms -t "$SECS" -J >"$TMP/sonde.json"
irtt client -q -i 10ms -d "${SECS}s" -o "$TMP/irtt.json" 127.0.0.1:$IRTT_PORT >/dev/null
sockperf ping-pong -i 127.0.0.1 -p $SP_PORT -t "$SECS" --mps=100 --full-rtt >"$TMP/sockperf.txt" 2>&1
ping -c "$N" -i 0.01 -q 127.0.0.1 >/dev/null 2>&1 || true
ping -c "$N" -i 0.01 127.0.0.1 >"$TMP/ping.txt" 2>&1 || true

echo "== schedule error at 1 ms, 5 s each"
$SONDE latency 127.0.0.1 -p $SONDE_PORT -i 1ms -t 5 -J >"$TMP/sonde-1ms.json"
irtt client -q -i 1ms -d 5s -o "$TMP/irtt-1ms.json" 127.0.0.1:$IRTT_PORT >/dev/null

python3 - "$TMP" "$SECS" "$WRITE" <<'EOF'
import json, re, statistics, subprocess, sys, datetime, os
tmp, secs, write = sys.argv[1], sys.argv[2], sys.argv[3] == "1"

def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(round(q * (len(v) - 1))))]

rows = []
s = json.load(open(f"{tmp}/sonde.json"))["end"]
rows.append(("sonde latency (UDP)", s["rtt"]["median_ms"] * 1e3, s["rtt"]["p99_ms"] * 1e3, s["loss"]["sent"]))
i = json.load(open(f"{tmp}/irtt.json"))
rt = [r["delay"]["rtt"] / 1e3 for r in i["round_trips"] if r.get("lost") == "false" and "rtt" in r.get("delay", {})]
rows.append(("irtt (UDP)", statistics.median(rt), pct(rt, 0.99), len(i["round_trips"])))
sp = open(f"{tmp}/sockperf.txt").read()
def sp_pct(p):
    m = re.search(r"percentile %s\s*=\s*([\d.]+)" % re.escape(p), sp)
    return float(m.group(1)) if m else float("nan")
obs = re.search(r"Total (\d+) observations", sp)
rows.append(("sockperf ping-pong --full-rtt (UDP)", sp_pct("50.000"), sp_pct("99.000"), int(obs.group(1)) if obs else 0))
pt = [float(x) * 1e3 for x in re.findall(r"time=([\d.]+) ms", open(f"{tmp}/ping.txt").read())]
if pt:
    rows.append(("ping (ICMP, reference)", statistics.median(pt), pct(pt, 0.99), len(pt)))

s1 = json.load(open(f"{tmp}/sonde-1ms.json"))["end"]["schedule"]
i1 = json.load(open(f"{tmp}/irtt-1ms.json"))["stats"]
sched = [("sonde", s1["error_percent"], s1["mean_error_us"]),
         ("irtt", i1["timer_err_percent"], i1["timer_error"]["mean"] / 1e3)]

ver = subprocess.run(["sh", "-c", "irtt version 2>/dev/null | head -1; sockperf --version 2>/dev/null | head -1 | tr -d '\\n'"], capture_output=True, text=True).stdout.split("\n")
out = []
out.append(f"- date: {datetime.datetime.utcnow():%Y-%m-%d %H:%M} UTC; cores: {os.cpu_count()}; kernel: {os.uname().release}")
out.append(f"- {secs} s per tool, one probe every 10 ms, 127.0.0.1; RTT in microseconds")
out.append("")
out.append("| tool | probes | median RTT (us) | p99 RTT (us) |")
out.append("|---|---|---|---|")
for name, med, p99, n in rows:
    out.append(f"| {name} | {n} | {med:.1f} | {p99:.1f} |")
med = {r[0].split()[0]: r[1] for r in rows}
out.append("")
out.append(f"sonde / irtt median: {med['sonde'] / med['irtt']:.2f}x; sonde / sockperf median: {med['sonde'] / med['sockperf']:.2f}x")
out.append("")
out.append("| schedule at 1 ms interval | mean error (us) | error % of interval |")
out.append("|---|---|---|")
for name, pcnt, mean in sched:
    out.append(f"| {name} | {mean:.1f} | {pcnt:.2f} |")
text = "\n".join(out)
print(text)
if write:
    with open("bench/RESULTS.md", "a") as f:
        f.write("\n## Latency on loopback: sonde vs irtt, sockperf, ping (bench/latency.sh)\n\n" + text + "\n")
EOF
