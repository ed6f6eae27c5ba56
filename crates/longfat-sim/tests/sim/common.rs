#![allow(dead_code)]
use longfat_sim::{build, Scenario, Simulation};
use serde_json::Value;

pub fn run_toml(text: &str) -> (Simulation, Value) {
    let scenario = Scenario::from_toml(text).unwrap_or_else(|e| panic!("scenario: {e}"));
    let mut sim = build(&scenario).unwrap_or_else(|e| panic!("build: {e}"));
    assert_eq!(sim.run(), longfat_sim::sim::RunStatus::Reached);
    let summary = sim.metrics.summary().expect("finished").clone();
    (sim, summary)
}

pub fn link<'a>(summary: &'a Value, name: &str) -> &'a Value {
    summary["links"]
        .as_array()
        .unwrap()
        .iter()
        .find(|l| l["name"] == name)
        .unwrap()
}

pub fn f64_of(v: &Value) -> f64 {
    v.as_f64().unwrap()
}
