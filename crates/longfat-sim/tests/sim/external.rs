//! Controllers the embedder registers (`BuildOptions::controllers`): a
//! registered name runs its factory's controller, an unregistered one is
//! refused naming the entry's field and listing the registered names after
//! the built-ins, and a name may not shadow a built-in.

use std::sync::{Arc, Mutex};

use longfat_cc::{CcError, Rules};
use longfat_sim::sim::RunStatus;
use longfat_sim::{
    build_with, BuildOptions, ControllerFactory, ExternalControllers, Scenario, ScenarioError,
};
use serde_json::{json, Value};

/// Two flows through a half-BDP queue for 3 s: losses, recoveries and
/// (under rfc/ns2's 1 s minimum RTO rarely, under linux often) timeouts.
fn lossy(cc: &str, profile: &str) -> Scenario {
    let v = json!({
        "name": "external",
        "network": {"topology": "dumbbell", "bottleneck": {"rate": "50Mbps", "delay": "10ms", "queue": "0.5bdp"}},
        "flows": [{"name": "f", "cc": cc, "count": 2, "start_spacing": "200ms", "tcp": {"profile": profile}}],
        "run": {"duration": "3s", "sample_interval": "50ms"}
    });
    Scenario::from_json(&v.to_string()).unwrap()
}

fn with(controllers: ExternalControllers) -> BuildOptions {
    BuildOptions {
        controllers,
        ..Default::default()
    }
}

fn run(s: &Scenario, opts: &BuildOptions) -> Value {
    let mut sim = build_with(s, opts, &mut || false).unwrap_or_else(|e| panic!("build: {e}"));
    assert_eq!(sim.run(), RunStatus::Reached);
    sim.metrics.summary().expect("finished").clone()
}

/// Replaces every string equal to `from` by `to` (the algorithm label).
fn relabel(v: &mut Value, from: &str, to: &str) {
    match v {
        Value::String(s) if s == from => *s = to.to_string(),
        Value::Array(a) => a.iter_mut().for_each(|x| relabel(x, from, to)),
        Value::Object(o) => o.values_mut().for_each(|x| relabel(x, from, to)),
        _ => {}
    }
}

/// A factory that builds the catalogue's Reno, recording the flows it was
/// asked for.
fn wrapped_reno(asked: Arc<Mutex<Vec<Option<usize>>>>) -> ControllerFactory {
    Arc::new(move |req| {
        asked.lock().unwrap().push(req.flow);
        longfat_cc::build("reno", req.params, req.rules, req.init)
    })
}

/// The registered controller runs, with the profile's rules and initial
/// window: a factory that wraps the catalogue's Reno gives, under every
/// profile, the built-in reno's summary to the last digit (the label
/// aside); its factory is asked once to check the entry, then once per
/// flow in flow order.
#[test]
fn a_registered_factory_runs_as_the_builtin_it_wraps_under_every_profile() {
    for rules in Rules::ALL {
        let profile = rules.name();
        let asked = Arc::new(Mutex::new(vec![]));
        let mut reg = ExternalControllers::new();
        reg.register("wrapped-reno", wrapped_reno(asked.clone()))
            .unwrap();
        let mut external = run(&lossy("wrapped-reno", profile), &with(reg));
        let builtin = run(&lossy("reno", profile), &BuildOptions::default());
        assert!(
            builtin["flows"][0]["retransmits"].as_u64().unwrap() > 0,
            "{profile}: not lossy: {}",
            builtin["flows"][0]
        );
        assert_ne!(external, builtin, "{profile}: the label differs");
        relabel(&mut external, "wrapped-reno", "reno");
        assert_eq!(external, builtin, "{profile}");
        assert_eq!(*asked.lock().unwrap(), [None, Some(0), Some(1)]);
    }
}

fn refused(s: &Scenario, opts: &BuildOptions) -> ScenarioError {
    match build_with(s, opts, &mut || false) {
        Ok(_) => panic!("accepted"),
        Err(e) => e,
    }
}

#[test]
fn an_unregistered_name_is_refused_naming_the_field_and_the_registered_names() {
    let builtin = longfat_cc::ALGORITHMS.join(", ");
    let e = refused(&lossy("mycc", "rfc"), &BuildOptions::default());
    assert_eq!(e.field, "flows[0].cc");
    assert_eq!(
        e.message,
        format!("unknown algorithm \"mycc\"; known: {builtin}")
    );
    let mut reg = ExternalControllers::new();
    let asked = Arc::new(Mutex::new(vec![]));
    reg.register("other", wrapped_reno(asked.clone())).unwrap();
    reg.register("another", wrapped_reno(asked.clone()))
        .unwrap();
    let opts = with(reg.clone());
    let e = refused(&lossy("mycc", "rfc"), &opts);
    assert_eq!(e.field, "flows[0].cc");
    assert_eq!(
        e.message,
        format!("unknown algorithm \"mycc\"; known: {builtin}; registered: other, another")
    );
    assert!(asked.lock().unwrap().is_empty());
    // Unregistered again: refused again.
    assert!(reg.unregister("other"));
    assert!(!reg.unregister("other"));
    let e = refused(&lossy("other", "rfc"), &with(reg));
    assert!(
        e.message.ends_with("; registered: another"),
        "{}",
        e.message
    );
}

/// A factory's own refusal (its parameters) names the entry's field.
#[test]
fn a_factory_refusal_names_the_entrys_parameter() {
    let mut reg = ExternalControllers::new();
    reg.register(
        "picky",
        Arc::new(|req| match req.params.keys().next() {
            Some(k) => Err(CcError {
                field: format!("params.{k}"),
                message: "unknown parameter for picky".into(),
            }),
            None => longfat_cc::build("reno", req.params, req.rules, req.init),
        }),
    )
    .unwrap();
    let v = json!({
        "network": {"topology": "dumbbell", "bottleneck": {"rate": "50Mbps", "delay": "10ms", "queue": "1bdp"}},
        "flows": [{"cc": "reno"}, {"cc": "picky", "params": {"gain": 2.0}}],
        "run": {"duration": "1s"}
    });
    let e = refused(&Scenario::from_json(&v.to_string()).unwrap(), &with(reg));
    assert_eq!(
        (e.field.as_str(), e.message.as_str()),
        ("flows[1].params.gain", "unknown parameter for picky")
    );
}

#[test]
fn a_name_that_clashes_or_is_malformed_is_refused_at_registration() {
    let asked = Arc::new(Mutex::new(vec![]));
    let mut reg = ExternalControllers::new();
    for builtin in ["reno", "newreno", "cubic", "bbr", "plt"] {
        let e = reg
            .register(builtin, wrapped_reno(asked.clone()))
            .unwrap_err();
        assert_eq!(e.field, "name");
        assert!(
            e.message
                .starts_with(&format!("\"{builtin}\" is a built-in algorithm")),
            "{}",
            e.message
        );
    }
    reg.register("mycc", wrapped_reno(asked.clone())).unwrap();
    let e = reg
        .register("mycc", wrapped_reno(asked.clone()))
        .unwrap_err();
    assert_eq!(
        e.message,
        "\"mycc\" is already registered; unregister it first"
    );
    for bad in ["", "1cc", "my cc", "my/cc", "é", &"x".repeat(41)] {
        let e = reg.register(bad, wrapped_reno(asked.clone())).unwrap_err();
        assert!(
            e.message.contains("is not a controller name"),
            "{bad:?}: {}",
            e.message
        );
    }
    reg.register(&"x".repeat(40), wrapped_reno(asked.clone()))
        .unwrap();
    assert_eq!(
        reg.names().collect::<Vec<_>>(),
        ["mycc", "x".repeat(40).as_str()]
    );
}
