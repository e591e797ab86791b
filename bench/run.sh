#!/usr/bin/env bash
# Loopback benchmark: sonde against Debian's iperf3, side by side.
#
# Usage: bench/run.sh [--write]
#   RUNS=5       runs per tool and case (alternating sonde / iperf3)
#   DURATION=5   seconds per run
#   ONLY=REGEX   only the cases whose name matches
#   --write      also write the table and the machine description to bench/RESULTS.md
#
# Prints a markdown table of medians (Mbit/s, packets/s, loss %, sender and receiver CPU %) and
# the ratio sonde / iperf3 for: TCP 1 stream (sonde also with --skip-rx-copy), TCP -P 4, UDP
# -l 1448 -b 0, UDP -l 64 -b 0 (the UDP cases twice: sonde with GSO, and with --no-gso where
# every datagram is its own packet).
# Servers listen on 127.0.0.1 only: iperf3 on port 5299, sonde on 5298. See bench/README.md.
set -euo pipefail

RUNS="${RUNS:-5}"
DURATION="${DURATION:-5}"
WRITE=0
for arg in "$@"; do
    case "$arg" in
        --write) WRITE=1 ;;
        -h | --help)
            sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        *)
            echo "bench/run.sh: unknown argument '$arg' (only --write is accepted)" >&2
            exit 2
            ;;
    esac
done

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
IPERF_PORT=5299
SONDE_PORT=5298

if ! command -v iperf3 >/dev/null 2>&1; then
    echo "iperf3 is not installed; install Debian's package first:" >&2
    echo "    sudo apt-get update && sudo apt-get install -y iperf3" >&2
    exit 1
fi
if ! command -v python3 >/dev/null 2>&1; then
    echo "python3 is needed to parse the JSON results (apt-get install -y python3)" >&2
    exit 1
fi

echo "building sonde (release)..." >&2
cargo build --release -p sonde --manifest-path "$ROOT/Cargo.toml" >&2
TARGET_DIR="$(cargo metadata --format-version 1 --no-deps --manifest-path "$ROOT/Cargo.toml" |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
SONDE="$TARGET_DIR/release/sonde"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/sonde-bench.XXXXXX")"
IPERF_PID=""
SONDE_PID=""
cleanup() {
    for pid in "$IPERF_PID" "$SONDE_PID"; do
        if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
            kill "$pid" 2>/dev/null || true
            wait "$pid" 2>/dev/null || true
        fi
    done
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

wait_port() {
    local port="$1" i
    for i in $(seq 1 50); do
        if python3 -c "import socket,sys; socket.create_connection(('127.0.0.1', $port), 0.2)" 2>/dev/null; then
            return 0
        fi
        sleep 0.1
    done
    echo "nothing is listening on 127.0.0.1:$port" >&2
    return 1
}

iperf3 -s -B 127.0.0.1 -p "$IPERF_PORT" >"$WORK/iperf3-server.log" 2>&1 &
IPERF_PID=$!
"$SONDE" server -B 127.0.0.1 -p "$SONDE_PORT" >"$WORK/sonde-server.log" 2>&1 &
SONDE_PID=$!
wait_port "$IPERF_PORT"
wait_port "$SONDE_PORT"

# name|arguments shared by both tools|extra arguments for sonde only
# The --no-gso cases matter on loopback: lo never splits a GSO batch, so with GSO sonde's
# "datagrams" travel ~44 to a packet and its packet rate is not comparable with iperf3's.
CASES=(
    "TCP 1 stream||"
    "TCP 1 stream (sonde --skip-rx-copy; iperf3 3.12 copies)||--skip-rx-copy"
    "TCP -P 4|-P 4|"
    "UDP 1448 B -b 0 (sonde GSO)|-u -l 1448 -b 0|"
    "UDP 1448 B -b 0 (sonde --no-gso)|-u -l 1448 -b 0|--no-gso"
    "UDP 64 B -b 0 (sonde GSO)|-u -l 64 -b 0|"
    "UDP 64 B -b 0 (sonde --no-gso)|-u -l 64 -b 0|--no-gso"
)

# ONLY=REGEX keeps the cases whose name matches (e.g. ONLY='^TCP 1 stream').
if [[ -n "${ONLY:-}" ]]; then
    kept=()
    for c in "${CASES[@]}"; do
        [[ "${c%%|*}" =~ $ONLY ]] && kept+=("$c")
    done
    CASES=("${kept[@]}")
fi

run_one() { # tool case-index run
    local tool="$1" idx="$2" run="$3" args extra rest out
    rest="${CASES[$idx]#*|}"
    args="${rest%%|*}"
    extra="${rest#*|}"
    out="$WORK/$tool-$idx-$run.json"
    # shellcheck disable=SC2086 # word splitting of $args is intended
    if [[ "$tool" == iperf3 ]]; then
        iperf3 -c 127.0.0.1 -p "$IPERF_PORT" -t "$DURATION" -J $args >"$out" 2>"$out.err" || true
    else
        "$SONDE" client 127.0.0.1 -p "$SONDE_PORT" -t "$DURATION" -J $args $extra >"$out" 2>"$out.err" || true
    fi
    sleep 0.5 # let iperf3's one-test-at-a-time server reset
}

total=$((RUNS * ${#CASES[@]} * 2))
n=0
for run in $(seq 1 "$RUNS"); do
    for idx in "${!CASES[@]}"; do
        # Alternate which tool goes first so neither always runs on a warmer machine.
        if ((run % 2)); then order=(iperf3 sonde); else order=(sonde iperf3); fi
        for tool in "${order[@]}"; do
            n=$((n + 1))
            echo "[$n/$total] run $run: $tool ${CASES[$idx]%%|*}" >&2
            run_one "$tool" "$idx" "$run"
        done
    done
done

CASE_NAMES="$(printf '%s\n' "${CASES[@]%%|*}")"
TABLE="$(CASE_NAMES="$CASE_NAMES" RUNS="$RUNS" python3 - "$WORK" <<'PY'
import json, os, statistics, sys

work = sys.argv[1]
names = os.environ["CASE_NAMES"].splitlines()
runs = int(os.environ["RUNS"])


def metrics(path):
    """Figures of one -J document (iperf3's schema, which sonde follows), or None."""
    try:
        with open(path) as f:
            doc = json.load(f)
    except (OSError, ValueError):
        return None
    if doc.get("error"):
        return None
    end = doc.get("end", {})
    rx = end.get("sum_received") or end.get("sum") or {}
    tx = end.get("sum_sent") or end.get("sum") or {}
    cpu = end.get("cpu_utilization_percent", {})
    m = {
        "mbps": rx.get("bits_per_second", 0.0) / 1e6,
        "snd_cpu": cpu.get("host_total"),  # the client sends in every case
        "rcv_cpu": cpu.get("remote_total"),
    }
    udp = "sum" in end and "lost_percent" in end.get("sum", {})
    if udp:
        secs = tx.get("seconds") or 1.0
        sent = tx.get("packets", 0)
        rx_secs = rx.get("seconds") or secs
        m["tx_pps"] = sent / secs
        m["rx_pps"] = (rx.get("packets", sent) - rx.get("lost_packets", 0)) / rx_secs
        m["loss"] = end["sum"].get("lost_percent", 0.0)
    return m


def med(ms, key):
    vals = [m[key] for m in ms if m.get(key) is not None]
    return statistics.median(vals) if vals else None


def fmt(v, digits=0):
    if v is None:
        return "-"
    if digits == 0:
        return f"{v:,.0f}"
    return f"{v:.{digits}f}"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return "-"
    return f"{a / b:.2f}x"


cols = [
    ("Mbit/s (received)", "mbps", 0),
    ("pkt/s sent", "tx_pps", 0),
    ("pkt/s received", "rx_pps", 0),
    ("loss %", "loss", 2),
    ("sender CPU %", "snd_cpu", 1),
    ("receiver CPU %", "rcv_cpu", 1),
]
lines = [
    "| case | tool | ok runs | " + " | ".join(c[0] for c in cols) + " |",
    "|---|---|---|" + "---|" * len(cols),
]
for idx, name in enumerate(names):
    per_tool = {}
    for tool in ("iperf3", "sonde"):
        ms = [metrics(f"{work}/{tool}-{idx}-{r}.json") for r in range(1, runs + 1)]
        ok = [m for m in ms if m]
        per_tool[tool] = {key: med(ok, key) for _, key, _ in cols}
        cells = " | ".join(fmt(per_tool[tool][key], d) for _, key, d in cols)
        lines.append(f"| {name} | {tool} | {len(ok)}/{runs} | {cells} |")
    cells = " | ".join(
        ratio(per_tool["sonde"][key], per_tool["iperf3"][key]) for _, key, _ in cols
    )
    lines.append(f"| {name} | **sonde / iperf3** | | {cells} |")
print("\n".join(lines))
PY
)"

failed="$(find "$WORK" -name '*.err' -size +0 | sort || true)"
if [[ -n "$failed" ]]; then
    echo "some runs wrote to stderr:" >&2
    for f in $failed; do
        echo "  $(basename "$f" .json.err): $(head -c 300 "$f")" >&2
    done
fi

CPU_MODEL="$(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2- | sed 's/^ *//' || true)"
MACHINE="$(
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "- cores (nproc): $(nproc)"
    echo "- CPU: ${CPU_MODEL:-unknown}"
    echo "- kernel: $(uname -sr)"
    echo "- iperf3: $(iperf3 --version 2>/dev/null | head -n1)"
    echo "- sonde: $("$SONDE" --version 2>/dev/null | head -n1 || echo unknown) ($(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo 'no git'))"
    echo "- runs: $RUNS per tool and case, alternating, $DURATION s each, loopback (127.0.0.1); medians"
)"

echo
echo "$MACHINE"
echo
echo "$TABLE"

if ((WRITE)); then
    # This script owns the top of RESULTS.md, up to the first "## " heading; the sections after
    # it (latency, lab) are written by other scripts and kept as they are.
    RESULTS="$ROOT/bench/RESULTS.md"
    REST=""
    if [[ -f "$RESULTS" ]]; then
        REST="$(awk 'found || /^## /{found=1; print}' "$RESULTS")"
    fi
    {
        echo "# Benchmark results: sonde vs iperf3 on loopback"
        echo
        echo "Written by \`bench/run.sh --write\` (see bench/README.md for what each column means)."
        echo
        echo "$MACHINE"
        echo
        echo "$TABLE"
        if [[ -n "$REST" ]]; then
            echo
            echo "$REST"
        fi
    } >"$RESULTS.tmp"
    mv "$RESULTS.tmp" "$RESULTS"
    echo >&2
    echo "wrote $ROOT/bench/RESULTS.md" >&2
fi
