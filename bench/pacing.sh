#!/usr/bin/env bash
# Inter-departure error of paced UDP senders: sonde against iperf3, side by side, in one run.
#
# Two network namespaces joined by a veth pair; both servers in one, both clients in the other.
# For each rate (1, 8, 20, 100 k datagrams/s of 64 B) each client sends for DURATION seconds
# while `departure_gaps` (crates/sonde-runtime/examples) records the kernel receive timestamp
# of every datagram on the receiving veth. On veth the receive timestamp is taken inside the
# sender's system call, so receive gaps are departure gaps. Printed per tool and rate: achieved
# datagrams/s, the error of each gap against the ideal 1/rate (p50, p99, µs) and the share of
# gaps under a quarter of the ideal (datagrams sent back to back), and the sending client's CPU
# (from its -J document): what exact pacing costs.
#
# Needs root, iproute2, iperf3 and python3. Namespaces are removed on exit, Ctrl-C included.
#   sudo bench/pacing.sh                 # 5 s per tool and rate: about 1 minute
#   DURATION=2 sudo bench/pacing.sh
#   sudo bench/pacing.sh --write         # also append the table to bench/RESULTS.md
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

DURATION=${DURATION:-5}
RATES=${RATES:-"1000 8000 20000 100000"}
LEN=64
TX=sonde-bench-tx-$$
RX=sonde-bench-rx-$$

[[ $(id -u) == 0 ]] || { echo "bench/pacing.sh needs root (network namespaces)" >&2; exit 1; }
command -v iperf3 >/dev/null || { echo "iperf3 is missing (apt-get install -y iperf3)" >&2; exit 1; }

cargo build --release -q -p sonde
cargo build --release -q -p sonde-runtime --example departure_gaps
SONDE=$PWD/target/release/sonde
GAPS=$PWD/target/release/examples/departure_gaps

cleanup() {
    ip netns pids "$RX" 2>/dev/null | xargs -r kill 2>/dev/null || true
    ip netns pids "$TX" 2>/dev/null | xargs -r kill 2>/dev/null || true
    ip netns del "$TX" 2>/dev/null || true
    ip netns del "$RX" 2>/dev/null || true
}
trap cleanup EXIT INT TERM

ip netns add "$TX"
ip netns add "$RX"
ip -n "$TX" link add veth0 type veth peer name veth0 netns "$RX"
ip -n "$TX" addr add 198.18.0.1/30 dev veth0
ip -n "$RX" addr add 198.18.0.2/30 dev veth0
for ns in "$TX" "$RX"; do
    ip -n "$ns" link set lo up
    ip -n "$ns" link set veth0 up
done

ip netns exec "$RX" "$SONDE" server -p 5201 >/dev/null 2>&1 &
ip netns exec "$RX" iperf3 -s -p 5202 >/dev/null 2>&1 &
sleep 1

rows=()
for pps in $RATES; do
    rate=$((pps * LEN * 8))
    for tool in sonde iperf3; do
        if [[ $tool == sonde ]]; then
            port=5201
            cmd=("$SONDE" client 198.18.0.2 -p 5201 -u -l $LEN -b "$rate" -t "$DURATION" -J)
        else
            port=5202
            cmd=(iperf3 -c 198.18.0.2 -p 5202 -u -l $LEN -b "$rate" -t "$DURATION" -J)
        fi
        out=$(mktemp)
        ip netns exec "$RX" "$GAPS" veth0 $port "$((DURATION + 2))" "$pps" $LEN >"$out" &
        meter=$!
        sleep 0.3
        ip netns exec "$TX" "${cmd[@]}" >"$out.json" 2>/dev/null || echo "warning: $tool at $pps/s failed" >&2
        wait $meter || true
        # The sender's CPU (the client's own, percent of one core) from its -J document.
        cpu=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["end"]["cpu_utilization_percent"]["host_total"])' "$out.json" 2>/dev/null || echo nan)
        rows+=("$pps $tool $cpu $(cat "$out")")
        rm -f "$out" "$out.json"
    done
done

table=$(python3 - "${rows[@]}" <<'EOF'
import json, sys
print("| datagrams/s asked | tool | achieved /s | gap error p50 (µs) | p99 (µs) | back to back (%) | sender CPU (% of a core) |")
print("|---|---|---|---|---|---|---|")
for row in sys.argv[1:]:
    pps, tool, cpu, doc = row.split(" ", 3)
    d = json.loads(doc)
    print(f"| {int(pps):,} | {tool} | {d['pps']:,.0f} | {d['err_p50_us']:.1f} | {d['err_p99_us']:.1f} | {d['back_to_back_pct']:.1f} | {float(cpu):.1f} |")
EOF
)
echo "$table"
if [[ ${1:-} == --write ]]; then
    {
        echo
        echo "## Pacing: inter-departure error, $(date -u +%Y-%m-%d), $(nproc) cores, kernel $(uname -r), $(iperf3 --version | head -1)"
        echo
        echo "64 B datagrams, ${DURATION} s per tool and rate, veth between two namespaces (bench/pacing.sh)."
        echo
        echo "$table"
    } >>bench/RESULTS.md
fi
