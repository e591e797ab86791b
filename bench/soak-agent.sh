#!/usr/bin/env bash
# Soak test of `sonde agent`: two agents on loopback measure each other for MINUTES (default
# 60), to show whether memory, threads and descriptors stay flat over a long run.
#
#   bench/soak-agent.sh [MINUTES]
#
# Schedule (each agent, towards the other): latency every 1 s (5 probes 50 ms apart), a TCP
# upload every minute (2 s, paced to 0.1 of a declared 100 Mbit/s link: 10 Mbit/s), capacity
# every 10 minutes, the built-in "monitoring" profile every 15 minutes (5 s). Each agent's
# /metrics is scraped every 10 s (as Prometheus would); each agent's RSS, thread count and open
# descriptors are sampled every 30 s into samples.csv. At the end: first, last and max RSS per
# agent with a least-squares slope (KiB per hour, over the samples after the first 5 minutes
# so start-up allocations do not count), the same for anonymous memory alone (RSS also counts
# the binary's code pages, faulted in as new code paths first run), descriptors and threads
# first/last/max, and the store's row counts by kind and status.
#
# To age the agents faster than the clock, THROUGHPUT_MINS, CAPACITY_MINS and PROFILE_MINS
# shorten those periods (defaults 1, 10 and 15; the agent's own lower bounds apply): an hour at
# 0.2 / 1 / 1 runs as many of those tests as 5 / 10 / 15 hours of the default schedule.
#
# With STORE_URL (a postgres:// URL) both agents copy their results there as they go, every
# SYNC_SECS (default 10); with RETAIN_DAYS their local stores keep only that much (and only
# what PostgreSQL has), so the soak covers the copy and the pruning too. At the end the
# runs PostgreSQL holds are listed (`sonde report URL --list-runs`).
#
# With SILENT_PEERS=N each agent also has N peers that never answer (UDP sockets on
# 127.0.0.1 that a python3 process holds and never reads, from port SILENT_BASE, default
# 5371): their latency runs go on side by side with the live peer's, each failing after its
# waits, and their other runs fail at once (nothing listens on TCP there); the soak then
# covers runs in flight together and the waits for them before a throughput run.
#
# Environment: SONDE (binary, default target/release/sonde), OUT (output directory, default
# /tmp/soak), PORT_A/PORT_B (agents' servers, default 5361/5362), METRICS_A/METRICS_B (default
# 9461/9462). Needs curl, sqlite3 and awk. A script for people, not a test: CI does not run it.
# Both agents are stopped (SIGTERM) on exit, Ctrl-C included.
set -euo pipefail

MINUTES=${1:-60}
SONDE=${SONDE:-target/release/sonde}
OUT=${OUT:-/tmp/soak}
PORT_A=${PORT_A:-5361}
PORT_B=${PORT_B:-5362}
METRICS_A=${METRICS_A:-9461}
METRICS_B=${METRICS_B:-9462}
STORE_URL=${STORE_URL:-}
SYNC_SECS=${SYNC_SECS:-10}
RETAIN_DAYS=${RETAIN_DAYS:-}
THROUGHPUT_MINS=${THROUGHPUT_MINS:-1}
CAPACITY_MINS=${CAPACITY_MINS:-10}
PROFILE_MINS=${PROFILE_MINS:-15}
SILENT_PEERS=${SILENT_PEERS:-0}
SILENT_BASE=${SILENT_BASE:-5371}
SCRAPE_SECS=10
SAMPLE_SECS=30

TOOLS="curl sqlite3 awk"
((SILENT_PEERS == 0)) || TOOLS="$TOOLS python3"
for tool in $TOOLS; do
    command -v "$tool" >/dev/null || { echo "soak: needs $tool" >&2; exit 2; }
done
[ -x "$SONDE" ] || { echo "soak: no sonde binary at $SONDE" >&2; exit 2; }
mkdir -p "$OUT"
rm -f "$OUT"/a.db* "$OUT"/b.db* "$OUT"/samples.csv "$OUT"/scrape-*.log

config() { # name own-port peer-name peer-port
    cat <<EOF
name = "soak-$1"
listen_port = $2
store = "$OUT/$1.db"
jitter = 0.2
${STORE_URL:+store_url = \"$STORE_URL\"}
${STORE_URL:+sync_every_secs = $SYNC_SECS}
${RETAIN_DAYS:+retain_days = $RETAIN_DAYS}

[latency]
every_secs = 1
probes = 5
probe_interval_ms = 50

[throughput]
every_mins = $THROUGHPUT_MINS
duration_secs = 2
share = 0.1

[capacity]
every_mins = $CAPACITY_MINS

[profile]
every_mins = $PROFILE_MINS
name = "monitoring"
duration_secs = 5
share = 0.1

[[peer]]
name = "$3"
host = "127.0.0.1"
port = $4
link_rate = "100M"
EOF
    for ((i = 0; i < SILENT_PEERS; i++)); do
        printf '\n[[peer]]\nname = "silent%d"\nhost = "127.0.0.1"\nport = %d\nlink_rate = "100M"\n' \
            "$i" "$((SILENT_BASE + i))"
    done
}
config a "$PORT_A" b "$PORT_B" >"$OUT/a.toml"
config b "$PORT_B" a "$PORT_A" >"$OUT/b.toml"

PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if ((SILENT_PEERS > 0)); then
    # Holds the silent peers' sockets: bound, never read, so no probe is answered.
    python3 -c 'import socket, sys, time
socks = []
for p in range(int(sys.argv[1]), int(sys.argv[1]) + int(sys.argv[2])):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", p))
    socks.append(s)
time.sleep(1e9)' "$SILENT_BASE" "$SILENT_PEERS" &
    PIDS+=("$!")
    # A port already taken would leave the peers refusing instead of silent: stop then.
    sleep 1
    kill -0 "$!" 2>/dev/null || { echo "soak: the silent peers' ports are not free (from $SILENT_BASE)" >&2; exit 2; }
    echo "soak: $SILENT_PEERS silent peers per agent on UDP ports $SILENT_BASE-$((SILENT_BASE + SILENT_PEERS - 1))"
fi

"$SONDE" agent --config "$OUT/a.toml" --metrics "127.0.0.1:$METRICS_A" 2>"$OUT/a.log" &
PID_A=$!
PIDS+=("$PID_A")
"$SONDE" agent --config "$OUT/b.toml" --metrics "127.0.0.1:$METRICS_B" 2>"$OUT/b.log" &
PID_B=$!
PIDS+=("$PID_B")
echo "soak: agents a (pid $PID_A) and b (pid $PID_B) for $MINUTES min; output in $OUT"
echo "soak: binary $SONDE ($("$SONDE" --version 2>/dev/null | head -1))"
[ -z "$STORE_URL" ] || echo "soak: copying to PostgreSQL every $SYNC_SECS s${RETAIN_DAYS:+, keeping $RETAIN_DAYS days locally}"
echo "soak: throughput every $THROUGHPUT_MINS min, capacity every $CAPACITY_MINS min, profile every $PROFILE_MINS min"

sample() { # agent pid elapsed
    local rss threads fds anon file
    rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$2/status" 2>/dev/null || echo "")
    anon=$(awk '/^RssAnon:/ {print $2}' "/proc/$2/status" 2>/dev/null || echo "")
    file=$(awk '/^RssFile:/ {print $2}' "/proc/$2/status" 2>/dev/null || echo "")
    threads=$(awk '/^Threads:/ {print $2}' "/proc/$2/status" 2>/dev/null || echo "")
    fds=$(ls "/proc/$2/fd" 2>/dev/null | wc -l)
    [ -n "$rss" ] || { echo "soak: agent $1 (pid $2) is gone; see $OUT/$1.log" >&2; return 1; }
    echo "$3,$1,$rss,$threads,$fds,$anon,$file" >>"$OUT/samples.csv"
}

echo "elapsed_s,agent,rss_kib,threads,fds,rss_anon_kib,rss_file_kib" >"$OUT/samples.csv"
START=$(date +%s)
END=$((START + MINUTES * 60))
SCRAPES=0
SCRAPE_FAIL=0
NEXT_SAMPLE=$START
sleep 1
while :; do
    NOW=$(date +%s)
    ELAPSED=$((NOW - START))
    if ((NOW >= NEXT_SAMPLE)); then
        sample a "$PID_A" "$ELAPSED"
        sample b "$PID_B" "$ELAPSED"
        NEXT_SAMPLE=$((NEXT_SAMPLE + SAMPLE_SECS))
    fi
    for m in "$METRICS_A" "$METRICS_B"; do
        SCRAPES=$((SCRAPES + 1))
        if ! curl -fsS --max-time 5 "http://127.0.0.1:$m/metrics" >"$OUT/scrape-$m.txt" 2>>"$OUT/scrape-errors.log"; then
            SCRAPE_FAIL=$((SCRAPE_FAIL + 1))
        fi
    done
    ((NOW < END)) || break
    sleep "$SCRAPE_SECS"
done

summary() { # agent column label
    awk -F, -v agent="$1" -v col="$2" -v label="$3" -v skip=300 '
        $2 == agent {
            n++; t = $1; r = $col
            if (n == 1) { r0 = r; f0 = $5; th0 = $4 }
            if (r > rmax) rmax = r; if ($5 > fmax) fmax = $5; if ($4 > thmax) thmax = $4
            rl = r; fl = $5; thl = $4
            if (t >= skip) { m++; sx += t; sy += r; sxx += t * t; sxy += t * r }
        }
        END {
            slope = "n/a"
            if (m > 2 && (m * sxx - sx * sx) > 0)
                slope = sprintf("%+.0f", (m * sxy - sx * sy) / (m * sxx - sx * sx) * 3600)
            printf "agent %s: %d samples; %s KiB first %d last %d max %d, slope after 5 min %s KiB/h", agent, n, label, r0, rl, rmax, slope
            if (col == 3) printf "; fds first %d last %d max %d; threads first %d last %d max %d", f0, fl, fmax, th0, thl, thmax
            printf "\n"
        }' "$OUT/samples.csv"
}

echo
echo "soak: $MINUTES min; $SCRAPES scrapes, $SCRAPE_FAIL failed"
: >"$OUT/summary.txt"
for a in a b; do
    summary "$a" 3 RSS | tee -a "$OUT/summary.txt"
    summary "$a" 6 "anonymous RSS" | tee -a "$OUT/summary.txt"
done
cleanup
PIDS=()
for a in a b; do
    echo "store $a ($OUT/$a.db): test rows by kind and status" | tee -a "$OUT/summary.txt"
    sqlite3 "$OUT/$a.db" "SELECT test_name, status, count(*) FROM tests GROUP BY test_name, status ORDER BY 1, 2;" \
        | sed 's/^/  /' | tee -a "$OUT/summary.txt"
done
if [ -n "$STORE_URL" ]; then
    echo "PostgreSQL: runs held" | tee -a "$OUT/summary.txt"
    "$SONDE" report "$STORE_URL" --list-runs 2>&1 | sed 's/^/  /' | tee -a "$OUT/summary.txt"
fi
