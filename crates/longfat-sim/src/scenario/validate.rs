//! Checks of names, labels, priority classes and UDP sources.

use crate::udp::{PeriodDist, UdpConfig, UdpPattern};

use super::error::{err, ScenarioError};
use super::fields::limits::*;
use super::fields::{ON_MEAN, UDP_PACKET_SIZE};
use super::parse::{bytes, duration_within, pareto_shape, rate, run_time};
use super::schema::UdpSpec;

/// A scenario's `name`: it names the result directory, so it must be a
/// plain file name that cannot point anywhere else.
pub(super) fn check_name(name: &str) -> Result<(), ScenarioError> {
    let field = "name";
    if name.is_empty() || name.trim().is_empty() {
        return err(field, "must not be empty");
    }
    if name == "." || name == ".." {
        return err(
            field,
            format!("{name:?} is not allowed; the name becomes a directory name (results/<name>)"),
        );
    }
    if name.starts_with('.') {
        return err(field, format!("{name:?} must not start with '.' (hidden names are reserved for longfat's temporary directories)"));
    }
    if let Some(c) = name
        .chars()
        .find(|&c| c == '/' || c == '\\' || c.is_control())
    {
        return err(field, format!("{name:?} contains {c:?}; a name is a plain file name (no path separators or control characters)"));
    }
    if name.len() > MAX_NAME_BYTES {
        return err(
            field,
            format!("is {} bytes long; at most {MAX_NAME_BYTES}", name.len()),
        );
    }
    Ok(())
}

/// A flow's or generator's `name`: a label in tables and plots, at most
/// `MAX_NAME_BYTES`, without control characters (it reaches the terminal).
pub(super) fn check_label(field: &str, name: &Option<String>) -> Result<(), ScenarioError> {
    let Some(name) = name else { return Ok(()) };
    if name.len() > MAX_NAME_BYTES {
        return err(
            field,
            format!("is {} bytes long; at most {MAX_NAME_BYTES}", name.len()),
        );
    }
    if let Some(c) = name.chars().find(|c| c.is_control()) {
        return err(
            field,
            format!("{name:?} contains the control character {c:?}"),
        );
    }
    Ok(())
}

pub(super) fn class(field: &str, c: Option<u32>, n_classes: u32) -> Result<u8, ScenarioError> {
    let c = c.unwrap_or(0);
    if c >= n_classes.max(1) && !(n_classes == 1 && c == 0) {
        return err(
            field,
            format!(
                "class {c} does not exist; the bottleneck has classes 0..={}",
                n_classes - 1
            ),
        );
    }
    Ok(c as u8)
}

pub(super) fn udp_config(
    field: &str,
    u: &UdpSpec,
    n_classes: u32,
) -> Result<UdpConfig, ScenarioError> {
    let f = |name: &str| format!("{field}.{name}");
    let r = rate(&f("rate"), &u.rate)?;
    let size = match &u.packet_size {
        Some(v) => bytes(&f("packet_size"), v, UDP_PACKET_SIZE.range)?,
        None => 1500,
    };
    let pattern = match u.pattern.as_str() {
        "cbr" => {
            for (name, set) in [
                ("on_mean", u.on_mean.is_some()),
                ("off_mean", u.off_mean.is_some()),
                ("distribution", u.distribution.is_some()),
                ("shape", u.shape.is_some()),
            ] {
                if set {
                    return err(f(name), "only for pattern = \"onoff\"");
                }
            }
            UdpPattern::Cbr
        }
        "onoff" => {
            let on = duration_within(
                &f("on_mean"),
                u.on_mean.as_deref().unwrap_or("1s"),
                ON_MEAN.range,
            )?;
            let off = run_time(&f("off_mean"), u.off_mean.as_deref().unwrap_or("1s"))?;
            let dist = match u.distribution.as_deref().unwrap_or("exponential") {
                "exponential" => {
                    if u.shape.is_some() {
                        return err(f("shape"), "only for distribution = \"pareto\"");
                    }
                    PeriodDist::Exponential
                }
                "pareto" => {
                    let shape = pareto_shape(&f("shape"), Some(u.shape.unwrap_or(1.5)))?;
                    PeriodDist::Pareto { shape }
                }
                d => {
                    return err(
                        f("distribution"),
                        format!("unknown distribution {d:?}; allowed: \"exponential\", \"pareto\""),
                    )
                }
            };
            UdpPattern::OnOff {
                on_mean_ns: on,
                off_mean_ns: off,
                dist,
            }
        }
        p => {
            return err(
                f("pattern"),
                format!("unknown pattern {p:?}; allowed: \"cbr\", \"onoff\""),
            )
        }
    };
    Ok(UdpConfig {
        rate: r,
        packet_size_bytes: size as u32,
        pattern,
        class: class(&f("priority_class"), u.priority_class, n_classes)?,
    })
}
