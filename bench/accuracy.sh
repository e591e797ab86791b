#!/usr/bin/env bash
# The accuracy benchmarks: the integration tests whose figures need a quiet host, run by hand.
#
# Each is an ordinary test of `crates/sonde/tests/it`, marked `#[ignore = "benchmark: needs a
# quiet host ..."]` so that CI (whose host may be busy) leaves it out. They check sonde against
# ground truth the lab sets, to bounds a loaded 2-core machine cannot keep: the sweep's device
# ceiling within 2 % at four lengths, paced TCP at 10-1000 Mbit/s on a gigabit link, TCP within
# 1 % of a shaped link, BTC within 1 % of a 100 Mbit/s link's TCP ceiling, capacity's early stop within 3 %, the coded flow's goodput against the
# loss bound and its share beside cubic, paced UDP within 0.5 % through a 4-frame ring with no
# excuse taken, the planned IPv4/IPv6 switch's p90 stall within one RTT + 1 ms and a cut path's
# recovery within 300 ms + one RTT. CI keeps, for most of them, a check of what holds on any host (every byte
# delivered, the bursts overflowing the ring, the sender's own notes); this is the rest. One
# more, ignored as intermittent rather than as a benchmark, runs here until it is understood:
# capacity at 1000 Mbit/s and behind a packet ceiling (once 25,520 pkt/s through the 8000
# pkt/s device). `TESTS` below names them all; `crates/sonde/tests/it/ignored.rs` checks that
# it names every ignored test whose reason points here, and nothing else.
#
# The other ignored tests are not run here: each says in its doc how to run it by hand
# (`lab_link_cut::issue16_drill_link_cut_past_the_end_of_a_forward_test`, about 40 s;
# `postgres_store::sync_cost`, which needs PostgreSQL).
#
# Needs root (network namespaces), iproute2 and iperf3; run nothing else meanwhile. About 5
# minutes on a quiet 2-core host. Arguments replace the list as the test binary's name
# filters (only ignored tests run), e.g.:
#   sudo bench/accuracy.sh
#   sudo bench/accuracy.sh sweep_lab::
# Record what it prints in bench/RESULTS.md with the date, the commit and the host's load.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

TESTS=(
    coded_lab::a_coded_flow_and_a_cubic_flow_share_a_clean_link_within_two_to_one
    coded_lab::coded_delivers_every_byte_near_the_loss_bound_on_a_lossy_100_mbit_link
    lab_bare::btc_over_a_100_mbit_link_comes_within_one_percent_of_the_tcp_ceiling
    lab_bare::capacity_at_1000_mbit_and_behind_a_packet_ceiling_in_both_families
    lab_bare::capacity_over_an_unshaped_veth_says_the_hosts_are_the_limit
    lab_bare::capacity_stops_early_once_long_trains_agree_and_stays_within_3_percent
    lab_bare::tcp_over_shaped_links_comes_within_one_percent_of_the_wire_ceiling
    pacing_lab::paced_udp_fits_a_short_device_ring_in_both_directions_and_formats
    pacing_lab::tcp_with_a_bitrate_achieves_what_was_asked_on_a_gigabit_link
    sweep_lab::the_search_finds_the_device_ceiling_per_length_within_2_percent_in_under_2_minutes
    switch_lab::a_cut_ipv4_path_recovers_on_ipv6_within_300_ms_and_one_rtt
    switch_lab::a_planned_switch_stalls_the_receiver_at_most_one_rtt_plus_1ms
)

[[ $(id -u) == 0 ]] || { echo "bench/accuracy.sh needs root (network namespaces)" >&2; exit 1; }

if (($#)); then
    filters=("$@")
else
    filters=("${TESTS[@]}")
fi

export SONDE_REQUIRE_ALL=1
# One test at a time: each has the machine to itself, as the bounds assume.
exec cargo test --release -p sonde --test it -- --ignored --test-threads 1 --nocapture "${filters[@]}"
