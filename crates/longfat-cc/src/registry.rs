//! Reading the catalogue ([`crate::CATALOGUE`]): the names in the order the
//! CLI lists them, an algorithm by name, and building a controller from its
//! name and parameters.

use crate::error::{CcError, CcParams};
use crate::params::{Algorithm, Rules};
use crate::{CongestionControl, InitialWindow, CATALOGUE};

const fn count(controllers_only: bool) -> usize {
    let (mut n, mut i) = (0, 0);
    while i < CATALOGUE.len() {
        if !controllers_only || CATALOGUE[i].build.is_some() {
            n += 1;
        }
        i += 1;
    }
    n
}

const fn names<const N: usize>(controllers_only: bool) -> [&'static str; N] {
    let mut out = [""; N];
    let (mut n, mut i) = (0, 0);
    while i < CATALOGUE.len() {
        if !controllers_only || CATALOGUE[i].build.is_some() {
            out[n] = CATALOGUE[i].name;
            n += 1;
        }
        i += 1;
    }
    out
}

/// Every algorithm `build` knows (the window controllers), in catalogue order.
pub const ALGORITHMS: &[&str] = &names::<{ count(true) }>(true);

/// Every name a scenario's `cc` accepts: the controllers, then PLT.
pub const NAMES: &[&str] = &names::<{ count(false) }>(false);

/// The named algorithm's descriptor.
pub fn algorithm(name: &str) -> Option<&'static Algorithm> {
    CATALOGUE.iter().find(|a| a.name == name)
}

/// Builds the named controller, its parameters' defaults those of the
/// transport profile's `rules`.
pub fn build(
    name: &str,
    params: &CcParams,
    rules: Rules,
    init: InitialWindow,
) -> Result<Box<dyn CongestionControl>, CcError> {
    match algorithm(name).and_then(|a| a.build) {
        Some(build) => build(params, rules, init),
        None => Err(CcError {
            field: "cc".into(),
            message: format!(
                "unknown algorithm {name:?}; known: {}",
                ALGORITHMS.join(", ")
            ),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn build_rfc(name: &str, params: &CcParams) -> Result<Box<dyn CongestionControl>, CcError> {
        build(name, params, Rules::Rfc, InitialWindow::default())
    }

    #[test]
    fn unknown_algorithm_names_field_and_choices() {
        for name in ["cubicc", "plt"] {
            let err = build_rfc(name, &CcParams::new()).err().unwrap();
            assert_eq!(err.field, "cc");
            assert!(
                err.message
                    .ends_with(&format!("known: {}", ALGORITHMS.join(", "))),
                "{}",
                err.message
            );
        }
    }

    #[test]
    fn every_listed_algorithm_builds_with_defaults_under_every_profile_and_reports_its_name() {
        assert_eq!(ALGORITHMS.len(), CATALOGUE.len() - 1);
        assert_eq!(NAMES, [ALGORITHMS, &["plt"]].concat());
        for &name in ALGORITHMS {
            for rules in Rules::ALL {
                let cc = build(name, &CcParams::new(), rules, InitialWindow::default()).unwrap();
                let expected = if name == "newreno" { "reno" } else { name };
                assert_eq!(cc.name(), expected);
                assert_eq!(cc.cwnd(), 2.0);
            }
        }
    }

    /// Every declared value (default, per-profile default, range ends) is
    /// one the algorithm's own check accepts, and every parameter has a
    /// unique name, a unit and a description.
    #[test]
    fn declarations_are_consistent() {
        for a in CATALOGUE {
            assert!(
                !a.what.is_empty() && a.what.len() <= 90 && !a.paper.is_empty(),
                "{}",
                a.name
            );
            for (i, p) in a.params.iter().enumerate() {
                assert!(
                    !p.unit.is_empty() && !p.about.is_empty() && !p.source.is_empty(),
                    "{}.{}",
                    a.name,
                    p.name
                );
                assert!(
                    a.params[..i].iter().all(|q| q.name != p.name),
                    "{}.{} twice",
                    a.name,
                    p.name
                );
                for rules in Rules::ALL {
                    if let Some(v) = p.default_under(rules) {
                        let given: CcParams = [(p.name.to_string(), v)].into_iter().collect();
                        assert!(
                            a.check(&given, rules).is_ok(),
                            "{}.{} = {v} under {rules:?}",
                            a.name,
                            p.name
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn parameters_are_range_checked_by_name() {
        let mut p = CcParams::new();
        p.insert("beta".into(), 1.2);
        let err = build_rfc("ltcp", &p).err().unwrap();
        assert_eq!(err.field, "params.beta");
        let mut p = CcParams::new();
        p.insert("beta_min".into(), 0.9);
        let err = build_rfc("htcp", &p).err().unwrap();
        assert_eq!(err.field, "params.beta_min");
        assert!(err.message.contains("beta_max"), "{}", err.message);
    }

    #[test]
    fn unknown_parameter_is_refused() {
        let mut p = CcParams::new();
        p.insert("beta".into(), 0.7);
        let err = build_rfc("reno", &p).err().unwrap();
        assert_eq!(err.field, "params.beta");
        let err = build_rfc("newreno", &p).err().unwrap();
        assert!(
            err.message.contains("unknown parameter for newreno"),
            "{}",
            err.message
        );
    }

    /// The profile's rules reach the controller as defaults, and a value the
    /// scenario sets wins over them (H-TCP's beta_max: 0.8 under rfc,
    /// 102/128 under linux).
    #[test]
    fn profile_rules_set_defaults_the_scenario_overrides() {
        let a = algorithm("htcp").unwrap();
        let none = CcParams::new();
        assert_eq!(a.implied(Rules::Rfc, &none), vec![]);
        let linux = a.implied(Rules::Linux, &none);
        assert!(linux.contains(&("beta_max", 102.0 / 128.0)), "{linux:?}");
        let set: CcParams = [("beta_max".to_string(), 0.7)].into_iter().collect();
        assert!(!a
            .implied(Rules::Linux, &set)
            .iter()
            .any(|(n, _)| *n == "beta_max"));
        let hs = algorithm("highspeed").unwrap();
        assert_eq!(hs.implied(Rules::Ns2, &none), vec![("high_p", 1e-7)]);
    }
}
