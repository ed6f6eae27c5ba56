//! The catalogue's vocabulary: each algorithm declares its parameters once,
//! as data ([`Param`]: name, unit, default, default under each transport
//! profile, allowed range, description, source), and describes itself once
//! ([`Algorithm`]). Validation ([`ParamReader::check`]) reads the
//! declarations, and so do `longfat algorithms --format json`, the
//! parameter tables in docs/algorithms.md and both fuzzers. In the manner
//! of Linux's `module_param` + `MODULE_PARM_DESC` and ns-3's `AddAttribute`.

use crate::error::{CcError, CcParams};
use crate::{CongestionControl, InitialWindow};

/// The transport profile a controller runs under (`tcp.profile`), as the
/// controller sees it: it picks the defaults of the parameters that differ
/// per profile (the Linux kernel modules' variants, ns-2's HighSpeed
/// lines). The one channel from the profile to the controller.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Rules {
    /// The papers' and RFCs' rules: every parameter's own default.
    #[default]
    Rfc,
    /// ns-2.35 as the papers ran it.
    Ns2,
    /// The Linux 6.x kernel modules.
    Linux,
}

impl Rules {
    pub const ALL: [Rules; 3] = [Rules::Rfc, Rules::Ns2, Rules::Linux];

    /// The profile's name in a scenario (`tcp.profile`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Rfc => "rfc",
            Self::Ns2 => "ns2",
            Self::Linux => "linux",
        }
    }
}

/// The values a parameter accepts.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Range {
    /// A real number in `[lo, hi]`.
    Closed(f64, f64),
    /// A real number in `(lo, hi)`.
    Open(f64, f64),
    /// A whole number in `[lo, hi]`.
    Whole(f64, f64),
    /// 0 (off) or 1 (on).
    Switch,
}

impl Range {
    /// Why `v` is refused, or None when it is allowed.
    fn refuse(self, v: f64) -> Option<String> {
        match self {
            Self::Closed(lo, hi) if !(v.is_finite() && lo <= v && v <= hi) => {
                Some(format!("{v} is out of range; must be in [{lo}, {hi}]"))
            }
            Self::Open(lo, hi) if !(v.is_finite() && lo < v && v < hi) => Some(format!(
                "{v} is out of range; must be strictly between {lo} and {hi}"
            )),
            Self::Whole(lo, hi) if !(v.is_finite() && lo <= v && v <= hi) => Some(format!(
                "{v} is out of range; must be an integer in [{lo}, {hi}]"
            )),
            Self::Whole(lo, hi) if v.fract() != 0.0 => Some(format!(
                "{v} is not a whole number; must be an integer in [{lo}, {hi}]"
            )),
            Self::Switch if v != 0.0 && v != 1.0 => {
                Some(format!("{v} is not a switch; must be 0 (off) or 1 (on)"))
            }
            _ => None,
        }
    }
}

/// One parameter of one algorithm, declared once next to the code that
/// reads it.
#[derive(Clone, Copy, Debug)]
pub struct Param {
    /// The key in a scenario's `[flows.params]`.
    pub name: &'static str,
    pub unit: &'static str,
    /// The value when the scenario does not set it; None: unset (the
    /// algorithm then runs without it, e.g. HighSpeed's `high_p`).
    pub default: Option<f64>,
    /// Defaults that differ under a transport profile.
    pub profile_defaults: &'static [(Rules, f64)],
    pub range: Range,
    /// One line: what it is.
    pub about: &'static str,
    /// Where it comes from: the paper's section or equation, the RFC, the
    /// Linux source.
    pub source: &'static str,
}

impl Param {
    /// A number with a default.
    pub const fn real(
        name: &'static str,
        unit: &'static str,
        default: f64,
        range: Range,
        about: &'static str,
        source: &'static str,
    ) -> Self {
        Self {
            name,
            unit,
            default: Some(default),
            profile_defaults: &[],
            range,
            about,
            source,
        }
    }

    /// An on/off switch.
    pub const fn switch(
        name: &'static str,
        default: bool,
        about: &'static str,
        source: &'static str,
    ) -> Self {
        Self::real(
            name,
            "switch",
            if default { 1.0 } else { 0.0 },
            Range::Switch,
            about,
            source,
        )
    }

    /// Without a default: the algorithm runs without it when unset.
    pub const fn unset(self) -> Self {
        Self {
            default: None,
            ..self
        }
    }

    /// With the defaults a transport profile gives it.
    pub const fn under(self, profile_defaults: &'static [(Rules, f64)]) -> Self {
        Self {
            profile_defaults,
            ..self
        }
    }

    /// The default under `rules`.
    pub fn default_under(&self, rules: Rules) -> Option<f64> {
        match self.profile_defaults.iter().find(|(r, _)| *r == rules) {
            Some(&(_, v)) => Some(v),
            None => self.default,
        }
    }
}

/// Builds one controller from its checked parameters.
pub type BuildFn =
    fn(&CcParams, Rules, InitialWindow) -> Result<Box<dyn CongestionControl>, CcError>;

/// One algorithm as the catalogue lists it.
#[derive(Clone, Copy)]
pub struct Algorithm {
    /// Its name in a scenario (`cc`).
    pub name: &'static str,
    /// What it does differently, in one line (`longfat compare` shows it).
    pub what: &'static str,
    /// The paper or specification it implements.
    pub paper: &'static str,
    pub params: &'static [Param],
    /// The checks across parameters, which the code makes after the ranges.
    pub constraints: &'static [&'static str],
    /// None for PLT, a transport whose HCM runs one of the others.
    pub build: Option<BuildFn>,
}

impl Algorithm {
    /// `params` checked against the declarations, read under `rules`.
    pub fn check<'a>(
        &self,
        params: &'a CcParams,
        rules: Rules,
    ) -> Result<ParamReader<'a>, CcError> {
        ParamReader::check(self.name, self.params, params, rules)
    }

    /// The parameters the profile's rules set and `params` does not, with
    /// their values (an error message names them, since the user did not
    /// write them).
    pub fn implied(&self, rules: Rules, params: &CcParams) -> Vec<(&'static str, f64)> {
        self.params
            .iter()
            .filter(|p| !params.contains_key(p.name))
            .filter_map(|p| {
                p.profile_defaults
                    .iter()
                    .find(|(r, _)| *r == rules)
                    .map(|&(_, v)| (p.name, v))
            })
            .collect()
    }
}

/// No parameters given.
static NONE_GIVEN: CcParams = CcParams::new();

/// An algorithm's parameters, checked against its declarations: each value
/// given, or its default under the profile's rules.
pub struct ParamReader<'a> {
    params: &'a CcParams,
    rules: Rules,
}

impl<'a> ParamReader<'a> {
    /// Checks every given parameter against the declarations in order, then
    /// refuses any not declared, listing the ones that are.
    pub fn check(
        algo: &str,
        declared: &[Param],
        params: &'a CcParams,
        rules: Rules,
    ) -> Result<Self, CcError> {
        for p in declared {
            if let Some(message) = params.get(p.name).and_then(|&v| p.range.refuse(v)) {
                return Err(error(p.name, message));
            }
        }
        if let Some(name) = params
            .keys()
            .find(|k| !declared.iter().any(|p| p.name == *k))
        {
            let allowed = if declared.is_empty() {
                "none".to_string()
            } else {
                declared
                    .iter()
                    .map(|p| p.name)
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            return Err(error(
                name,
                format!("unknown parameter for {algo}; allowed: {allowed}"),
            ));
        }
        Ok(Self { params, rules })
    }

    /// Every parameter at its default under `rules`.
    pub fn defaults(rules: Rules) -> Self {
        Self {
            params: &NONE_GIVEN,
            rules,
        }
    }

    /// The value given, else the default under the profile's rules; None for
    /// an unset parameter without a default.
    pub fn real_opt(&self, p: &Param) -> Option<f64> {
        self.params
            .get(p.name)
            .copied()
            .or(p.default_under(self.rules))
    }

    /// A parameter declared with a default.
    pub fn real(&self, p: &Param) -> f64 {
        self.real_opt(p)
            .unwrap_or_else(|| panic!("params.{} is declared without a default", p.name))
    }

    /// A switch.
    pub fn flag(&self, p: &Param) -> bool {
        self.real(p) == 1.0
    }

    /// Whether the scenario set `p` itself.
    pub fn given(&self, p: &Param) -> bool {
        self.params.contains_key(p.name)
    }

    /// Whether `p` is set: by the scenario, or by the profile's rules.
    pub fn set(&self, p: &Param) -> bool {
        self.given(p) || p.profile_defaults.iter().any(|&(r, _)| r == self.rules)
    }
}

/// The error of a check on `params.<name>`.
pub fn error(name: &str, message: String) -> CcError {
    CcError {
        field: format!("params.{name}"),
        message,
    }
}

/// The switch, shared by `reno`/`newreno`, `bic`, `scalable`, `vegas` and `cubic`, between
/// the paper's rules (0, the default) and the Linux module's (1, the
/// `linux` profile's default).
pub const LINUX_RULES: Param = Param::switch(
    "linux_rules",
    false,
    "1: the Linux kernel module's rules where they differ from the paper's",
    "the module's net/ipv4/tcp_<name>.c",
)
.under(&[(Rules::Linux, 1.0)]);

#[cfg(test)]
mod tests {
    use super::*;

    fn params(kv: &[(&str, f64)]) -> CcParams {
        kv.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    const BETA: Param = Param::real("beta", "fraction", 0.15, Range::Open(0.0, 1.0), "", "");
    const W_T: Param = Param::real("w_t", "packets", 50.0, Range::Closed(1.0, 1e9), "", "");
    const DETECT: Param = Param::real("detect", "", 3.0, Range::Whole(1.0, 3.0), "", "");
    const RTT_SCALING: Param =
        Param::switch("rtt_scaling", false, "", "").under(&[(Rules::Linux, 1.0)]);
    const X: &[Param] = &[BETA, W_T, DETECT, RTT_SCALING];

    fn refused(kv: &[(&str, f64)]) -> CcError {
        ParamReader::check("x", X, &params(kv), Rules::Rfc)
            .err()
            .unwrap()
    }

    #[test]
    fn default_when_absent_value_when_in_range() {
        let p = params(&[("beta", 0.2)]);
        let r = ParamReader::check("x", X, &p, Rules::Rfc).unwrap();
        assert_eq!(r.real(&BETA), 0.2);
        assert_eq!(r.real(&W_T), 50.0);
        assert!(r.given(&BETA) && !r.given(&W_T));
    }

    #[test]
    fn profile_defaults_apply_only_under_their_profile_and_only_when_unset() {
        let none = CcParams::new();
        assert!(!ParamReader::check("x", X, &none, Rules::Rfc)
            .unwrap()
            .flag(&RTT_SCALING));
        assert!(ParamReader::check("x", X, &none, Rules::Linux)
            .unwrap()
            .flag(&RTT_SCALING));
        let off = params(&[("rtt_scaling", 0.0)]);
        assert!(!ParamReader::check("x", X, &off, Rules::Linux)
            .unwrap()
            .flag(&RTT_SCALING));
    }

    #[test]
    fn out_of_range_names_field_and_range() {
        let e = refused(&[("beta", 1.5)]);
        assert_eq!(e.field, "params.beta");
        assert!(
            e.message.contains("strictly between 0 and 1"),
            "{}",
            e.message
        );
        let e = refused(&[("w_t", 0.5)]);
        assert_eq!(e.field, "params.w_t");
        assert!(e.message.contains("in [1, 1000000000]"), "{}", e.message);
        let e = refused(&[("detect", 2.5)]);
        assert!(
            e.message
                .contains("not a whole number; must be an integer in [1, 3]"),
            "{}",
            e.message
        );
        assert!(refused(&[("detect", 4.0)])
            .message
            .contains("out of range; must be an integer in [1, 3]"));
        assert!(refused(&[("w_t", f64::NAN)])
            .message
            .contains("out of range"));
    }

    #[test]
    fn switch_must_be_zero_or_one() {
        let e = refused(&[("rtt_scaling", 0.5)]);
        assert_eq!(e.field, "params.rtt_scaling");
        assert!(
            e.message.contains("must be 0 (off) or 1 (on)"),
            "{}",
            e.message
        );
    }

    #[test]
    fn unknown_parameter_lists_allowed() {
        let e = refused(&[("betta", 0.1)]);
        assert_eq!(e.field, "params.betta");
        assert!(
            e.message
                .contains("allowed: beta, w_t, detect, rtt_scaling"),
            "{}",
            e.message
        );
        let e = ParamReader::check("reno", &[], &params(&[("beta", 0.5)]), Rules::Rfc)
            .err()
            .unwrap();
        assert!(
            e.message
                .contains("unknown parameter for reno; allowed: none"),
            "{}",
            e.message
        );
    }
}
