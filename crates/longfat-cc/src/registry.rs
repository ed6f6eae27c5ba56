//! Building a controller from its name and parameters.

use crate::ehstcp::EhstcpConfig;
use crate::error::{CcError, CcParams};
use crate::htcp::HtcpConfig;
use crate::ltcp::LtcpConfig;
use crate::params::ParamReader;
use crate::{
    Bic, CongestionControl, Cubic, Ehstcp, Fast, HighSpeed, Htcp, InitialWindow, Ltcp, Reno,
    Scalable, Tcpgt, Vegas,
};

/// Every algorithm `build` knows, in the order the CLI lists them.
pub const ALGORITHMS: &[&str] = &[
    "reno",
    "newreno",
    "ltcp",
    "htcp",
    "ehstcp",
    "tcpgt",
    "highspeed",
    "scalable",
    "bic",
    "cubic",
    "vegas",
    "fast",
];

/// Builds the named controller. "newreno" is an alias: the NewReno/SACK
/// recovery lives in the transport, the window rule is Reno's.
pub fn build(
    name: &str,
    params: &CcParams,
    init: InitialWindow,
) -> Result<Box<dyn CongestionControl>, CcError> {
    match name {
        "reno" | "newreno" => {
            ParamReader::new(name, params).finish()?;
            Ok(Box::new(Reno::new(init)))
        }
        "ltcp" => Ok(Box::new(Ltcp::new(LtcpConfig::from_params(params)?, init))),
        "htcp" => Ok(Box::new(Htcp::new(HtcpConfig::from_params(params)?, init))),
        "ehstcp" => Ok(Box::new(Ehstcp::new(
            EhstcpConfig::from_params(params)?,
            init,
        ))),
        "tcpgt" => Ok(Box::new(Tcpgt::from_params(params, init)?)),
        "highspeed" => Ok(Box::new(HighSpeed::from_params(params, init)?)),
        "scalable" => Ok(Box::new(Scalable::from_params(params, init)?)),
        "bic" => Ok(Box::new(Bic::from_params(params, init)?)),
        "cubic" => Ok(Box::new(Cubic::from_params(params, init)?)),
        "vegas" => Ok(Box::new(Vegas::from_params(params, init)?)),
        "fast" => Ok(Box::new(Fast::from_params(params, init)?)),
        _ => Err(CcError {
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

    #[test]
    fn unknown_algorithm_names_field_and_choices() {
        let err = build("cubicc", &CcParams::new(), InitialWindow::default())
            .err()
            .unwrap();
        assert_eq!(err.field, "cc");
        assert!(err.message.contains("reno"));
    }

    #[test]
    fn every_listed_algorithm_builds_with_defaults_and_reports_its_name() {
        for &name in ALGORITHMS {
            let cc = build(name, &CcParams::new(), InitialWindow::default()).unwrap();
            let expected = if name == "newreno" { "reno" } else { name };
            assert_eq!(cc.name(), expected);
            assert_eq!(cc.cwnd(), 2.0);
        }
    }

    #[test]
    fn parameters_are_range_checked_by_name() {
        let mut p = CcParams::new();
        p.insert("beta".into(), 1.2);
        let err = build("ltcp", &p, InitialWindow::default()).err().unwrap();
        assert_eq!(err.field, "params.beta");
        let mut p = CcParams::new();
        p.insert("beta_min".into(), 0.9);
        let err = build("htcp", &p, InitialWindow::default()).err().unwrap();
        assert_eq!(err.field, "params.beta_min");
        assert!(err.message.contains("beta_max"), "{}", err.message);
    }

    #[test]
    fn unknown_parameter_is_refused() {
        let mut p = CcParams::new();
        p.insert("beta".into(), 0.7);
        let err = build("reno", &p, InitialWindow::default()).err().unwrap();
        assert_eq!(err.field, "params.beta");
    }
}
