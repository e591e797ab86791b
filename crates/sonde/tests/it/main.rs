//! The `sonde` binary's integration tests: the real CLI over loopback and, as root, real
//! network namespaces, against real peers (iperf3, PostgreSQL, Prometheus, xinetd, ...).
//!
//! One test binary, one module per concern (each module's docs say what it covers): it links
//! once, where a binary per file linked the whole program 46 times. A module that measures runs
//! alone; those that only check behaviour run side by side with each other (`turns`).
//!
//! Run one concern with `cargo test --release -p sonde --test it -- lab_mesh::`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // test code may fail loudly

mod common;
mod peers;
mod turns;

mod agent;
mod agent_fleet;
mod agent_postgres;
mod agent_reload;
mod agent_silent_peers;
mod agent_status;
mod auth;
mod btc;
mod capacity;
mod cli;
mod client_options;
mod closed_port;
mod coded;
mod coded_corrupt;
mod coded_lab;
mod compare_ip;
mod cpu_figures;
mod deploy_files;
mod device_lab;
mod drills;
mod envelope;
mod errors_once;
mod family_lab;
mod flag_values;
mod foreign_peers;
mod ignored;
mod interop_json_keys;
mod intervals;
mod iperf2_client;
mod iperf2_csv;
mod iperf2_server;
mod iperf3_interop;
mod lab;
mod lab_bare;
mod lab_ctrl_c;
mod lab_link_cut;
mod lab_mesh;
mod latency;
mod latency_output;
mod link_facts;
mod lossy_setup;
mod operator_kit;
mod pacing_lab;
mod postgres_store;
mod postgres_tls;
mod profile;
mod profile_lab;
mod psk_commands;
mod psk_probes;
mod report_every_kind;
mod report_kinds;
mod report_runs;
mod sender_slips;
mod serial;
mod server_abuse;
mod server_documents;
mod server_options;
mod signals;
mod source_limits;
mod store_files;
mod stress;
mod stress_lab;
mod stress_load_probe;
mod stress_silent;
mod stress_survive;
mod sweep;
mod sweep_lab;
mod switch_lab;
mod switch_test;
mod switch_test_mptcp;
