//! Reading an algorithm's parameters from a scenario's `[flows.params]`, with
//! the paper's defaults and a range check that names the field.

use crate::error::{CcError, CcParams};

/// The switch, shared by `bic`, `scalable`, `vegas` and `cubic`, between
/// the paper's rules (0, the default) and the Linux module's (1).
pub const LINUX_RULES: &str = "linux_rules";

/// Hands out parameters one by one; [`ParamReader::finish`] refuses any the
/// algorithm did not ask for.
pub struct ParamReader<'a> {
    algo: &'a str,
    params: &'a CcParams,
    used: Vec<&'static str>,
}

impl<'a> ParamReader<'a> {
    pub fn new(algo: &'a str, params: &'a CcParams) -> Self {
        Self {
            algo,
            params,
            used: Vec::new(),
        }
    }

    fn error(name: &str, message: String) -> CcError {
        CcError {
            field: format!("params.{name}"),
            message,
        }
    }

    /// A real number in `[lo, hi]` (`hi` may be infinite), `default` when absent.
    pub fn real(
        &mut self,
        name: &'static str,
        default: f64,
        lo: f64,
        hi: f64,
    ) -> Result<f64, CcError> {
        Ok(self.real_opt(name, lo, hi)?.unwrap_or(default))
    }

    /// A real number in `[lo, hi]` (`hi` may be infinite), None when absent.
    pub fn real_opt(&mut self, name: &'static str, lo: f64, hi: f64) -> Result<Option<f64>, CcError> {
        self.used.push(name);
        let Some(&v) = self.params.get(name) else {
            return Ok(None);
        };
        if !v.is_finite() || v < lo || v > hi {
            let range = if hi.is_infinite() {
                format!(">= {lo}")
            } else {
                format!("in [{lo}, {hi}]")
            };
            return Err(Self::error(
                name,
                format!("{v} is out of range; must be {range}"),
            ));
        }
        Ok(Some(v))
    }

    /// A real number in the open interval `(lo, hi)`.
    pub fn real_open(
        &mut self,
        name: &'static str,
        default: f64,
        lo: f64,
        hi: f64,
    ) -> Result<f64, CcError> {
        self.used.push(name);
        let Some(&v) = self.params.get(name) else {
            return Ok(default);
        };
        if !v.is_finite() || v <= lo || v >= hi {
            return Err(Self::error(
                name,
                format!("{v} is out of range; must be strictly between {lo} and {hi}"),
            ));
        }
        Ok(v)
    }

    /// An on/off switch written as 1 or 0.
    pub fn flag(&mut self, name: &'static str, default: bool) -> Result<bool, CcError> {
        self.used.push(name);
        match self.params.get(name) {
            None => Ok(default),
            Some(0.0) => Ok(false),
            Some(1.0) => Ok(true),
            Some(&v) => Err(Self::error(
                name,
                format!("{v} is not a switch; must be 0 (off) or 1 (on)"),
            )),
        }
    }

    /// [`LINUX_RULES`]: 1 follows the Linux kernel module's rules where they
    /// differ from the paper's (the `linux` transport profile sets it), 0
    /// (the default) the paper's.
    pub fn linux_rules(&mut self) -> Result<bool, CcError> {
        self.flag(LINUX_RULES, false)
    }

    /// Refuses parameters nobody asked for, listing the ones that exist.
    pub fn finish(self) -> Result<(), CcError> {
        for name in self.params.keys() {
            if !self.used.contains(&name.as_str()) {
                let allowed = if self.used.is_empty() {
                    "none".to_string()
                } else {
                    self.used.join(", ")
                };
                return Err(Self::error(
                    name,
                    format!("unknown parameter for {}; allowed: {allowed}", self.algo),
                ));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(kv: &[(&str, f64)]) -> CcParams {
        kv.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    #[test]
    fn default_when_absent_value_when_in_range() {
        let p = params(&[("beta", 0.2)]);
        let mut r = ParamReader::new("x", &p);
        assert_eq!(r.real("beta", 0.15, 0.0, 1.0).unwrap(), 0.2);
        assert_eq!(r.real("w_t", 50.0, 1.0, f64::INFINITY).unwrap(), 50.0);
        r.finish().unwrap();
    }

    #[test]
    fn out_of_range_names_field_and_range() {
        let p = params(&[("beta", 1.5)]);
        let e = ParamReader::new("x", &p)
            .real_open("beta", 0.15, 0.0, 1.0)
            .unwrap_err();
        assert_eq!(e.field, "params.beta");
        assert!(
            e.message.contains("strictly between 0 and 1"),
            "{}",
            e.message
        );
        let p = params(&[("s_max", -1.0)]);
        let e = ParamReader::new("x", &p)
            .real("s_max", 32.0, 0.0, f64::INFINITY)
            .unwrap_err();
        assert!(e.message.contains(">= 0"), "{}", e.message);
    }

    #[test]
    fn switch_must_be_zero_or_one() {
        let p = params(&[("rtt_scaling", 0.5)]);
        let e = ParamReader::new("x", &p)
            .flag("rtt_scaling", false)
            .unwrap_err();
        assert_eq!(e.field, "params.rtt_scaling");
    }

    #[test]
    fn unknown_parameter_lists_allowed() {
        let p = params(&[("betta", 0.1)]);
        let mut r = ParamReader::new("ltcp", &p);
        r.real("beta", 0.15, 0.0, 1.0).unwrap();
        let e = r.finish().unwrap_err();
        assert_eq!(e.field, "params.betta");
        assert!(e.message.contains("allowed: beta"), "{}", e.message);
    }
}
