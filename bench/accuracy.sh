#!/usr/bin/env bash
# The accuracy benchmarks: the integration tests whose figures need a quiet host, run by hand.
#
# Each is an ordinary test of `crates/sonde/tests/it`, marked `#[ignore = "benchmark: needs a
# quiet host ..."]` so that CI (whose host may be busy) leaves it out. They check sonde against
# ground truth the lab sets, to bounds a loaded 2-core machine cannot keep: the sweep's device
# ceiling within 2 % at four lengths, paced TCP at 10-1000 Mbit/s on a gigabit link, TCP within
# 1 % of a shaped link, capacity's early stop within 3 %, the coded flow's goodput against the
# loss bound and its share beside cubic, paced UDP within 0.5 % through a 4-frame ring with no
# excuse taken. CI keeps, for most of them, a check of what holds on any host (every byte
# delivered, the bursts overflowing the ring, the sender's own notes); this is the rest.
#
# Needs root (network namespaces), iproute2 and iperf3; run nothing else meanwhile. About 5
# minutes on a quiet 2-core host. Arguments go to the test binary, e.g. a name filter:
#   sudo bench/accuracy.sh
#   sudo bench/accuracy.sh sweep_lab::
# Record what it prints in bench/RESULTS.md with the date, the commit and the host's load.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

[[ $(id -u) == 0 ]] || { echo "bench/accuracy.sh needs root (network namespaces)" >&2; exit 1; }

export SONDE_REQUIRE_ALL=1
# One test at a time: each has the machine to itself, as the bounds assume.
exec cargo test --release -p sonde --test it -- --ignored --test-threads 1 --nocapture "$@"
