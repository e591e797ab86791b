//! Records for the results-database tests: a run with link settings and one test record.

#![allow(dead_code)]

use serde_json::json;
use sonde_store::*;

pub fn new_run(settings: &[&str]) -> NewRun {
    NewRun {
        scenario_name: "lossy-link".into(),
        scenario_toml: "name = \"lossy-link\"\n".into(),
        sonde_version: "sonde 0.1.0".into(),
        hostname: "lab".into(),
        kernel: "6.18.44 #1 SMP".into(),
        host_info: json!({"cpus": 2}),
        seed: u64::MAX - 7,
        started_unix: 1_795_300_000.5,
        settings: settings
            .iter()
            .enumerate()
            .map(|(i, s)| LinkSettingsRecord {
                name: (*s).into(),
                ordinal: i as u32,
                settings: json!({"name": s, "link": [{"link": "wan", "impair": {"loss": "5%"}}]}),
                backend_plan: Some(json!({"settings": s, "directions": []})),
            })
            .collect(),
    }
}

pub fn test_record(id: &str, ordinal: u32, ok: bool) -> TestRecord {
    let traffic = |k: u64| InterfaceTraffic {
        interface: "eth0".into(),
        before: IfCounters {
            rx_packets: k,
            rx_bytes: 10 * k,
            tx_packets: 2 * k,
            tx_bytes: 20 * k,
        },
        after: IfCounters {
            rx_packets: 5 * k,
            rx_bytes: 50 * k,
            tx_packets: 7 * k,
            tx_bytes: 70 * k,
        },
    };
    let parts: Vec<&str> = id.split('/').collect();
    TestRecord {
        matrix_id: id.into(),
        ordinal,
        settings: parts[0].into(),
        test_name: parts[1].into(),
        repetition: parts[2].parse().unwrap_or(1),
        seed: 1 << 63 | u64::from(ordinal),
        kind: "sonde".into(),
        protocol: Some("tcp".into()),
        parameters: json!({"argv": ["client", "10.0.0.2", "-t", "10"]}),
        link_status: Some(json!({"directions": [{"backend": "userspace"}]})),
        started_unix: 100.0 + f64::from(ordinal),
        ended_unix: 110.0 + f64::from(ordinal),
        status: if ok {
            TestStatus::Ok
        } else {
            TestStatus::Failed
        },
        failure_reason: (!ok).then(|| "timed out".into()),
        result_path: Some(format!("raw/{id}.json")),
        result_json: ok.then(|| "{\"start\": {}}".into()),
        client: EndRecord {
            cpu: Some(Cpu {
                total: 12.5,
                user: 2.5,
                system: 10.0,
            }),
            traffic: Some(traffic(1000)),
        },
        server: EndRecord {
            cpu: None,
            traffic: ok.then(|| traffic(7)),
        },
        stage_stats: ok.then(|| json!([["loss", {"dropped": 3}]])),
    }
}
