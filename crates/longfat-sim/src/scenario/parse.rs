//! Field parsers: a value with its unit, checked against its range, with
//! the field's name on every error.

use crate::link::QueueLimit;
use crate::units::{parse_bandwidth, parse_duration_ns, parse_size, Bandwidth, SizeSpec};

use super::error::{err, ScenarioError};
use super::fields::limits::*;
use super::fields::{fmt_ns, Range, DELAY, PARETO_SHAPE, PROBABILITY, RATE, RUN_TIME};

// ---- field parsers that attach the field name and check the range ------------

pub(super) fn duration_in(field: &str, s: &str, lo: u64, hi: u64) -> Result<u64, ScenarioError> {
    let v = parse_duration_ns(s).or_else(|m| err(field, m))?;
    if !(lo..=hi).contains(&v) {
        return err(
            field,
            format!(
                "{s:?} is out of range; allowed {}..={}",
                fmt_ns(lo),
                fmt_ns(hi)
            ),
        );
    }
    Ok(v)
}

/// A duration in a declared `Range::DurationNs`.
pub(super) fn duration_within(field: &str, s: &str, range: Range) -> Result<u64, ScenarioError> {
    let (lo, hi) = range.duration_ns();
    duration_in(field, s, lo, hi)
}

/// A delay-like duration: 0..=10 min.
pub(super) fn delay(field: &str, s: &str) -> Result<u64, ScenarioError> {
    duration_within(field, s, DELAY)
}

/// A time within a run: 0..=`MAX_RUN_NS`.
pub(super) fn run_time(field: &str, s: &str) -> Result<u64, ScenarioError> {
    duration_within(field, s, RUN_TIME)
}

pub(super) fn opt_or(
    field: &str,
    v: &Option<String>,
    default_ns: u64,
    parse: fn(&str, &str) -> Result<u64, ScenarioError>,
) -> Result<u64, ScenarioError> {
    match v {
        Some(v) => parse(field, v),
        None => Ok(default_ns),
    }
}

pub(super) fn rate(field: &str, s: &str) -> Result<Bandwidth, ScenarioError> {
    let r = parse_bandwidth(s).or_else(|m| err(field, m))?;
    let (lo, hi) = RATE.whole();
    if !(lo..=hi).contains(&r.bps()) {
        return err(field, format!("{s:?} is out of range; allowed {RATE}"));
    }
    Ok(r)
}

/// A size in bytes (packets not allowed) in a declared `Range::Bytes`:
/// packet and ACK sizes.
pub(super) fn bytes(field: &str, s: &str, range: Range) -> Result<u64, ScenarioError> {
    let (min, max) = range.whole();
    match parse_size(s).or_else(|m| err(field, m))? {
        SizeSpec::Bytes(b) if (min..=max).contains(&b) => Ok(b),
        SizeSpec::Bytes(b) => err(
            field,
            format!("{b} bytes is out of range; allowed {min}..={max} bytes"),
        ),
        _ => err(
            field,
            format!("{s:?}: give a size in bytes (e.g. \"1500B\")"),
        ),
    }
}

pub(super) fn probability(field: &str, p: Option<f64>) -> Result<f64, ScenarioError> {
    let p = p.unwrap_or(0.0);
    if !PROBABILITY.contains_real(p) {
        return err(
            field,
            format!("{p} is out of range; a loss probability must be in {PROBABILITY}"),
        );
    }
    Ok(p)
}

/// A queue size before BDP resolution.
#[derive(Clone, Copy, Debug)]
pub(super) enum QueueSize {
    Limit(QueueLimit),
    Bdp(f64),
}

pub(super) fn queue_size(field: &str, s: &str) -> Result<QueueSize, ScenarioError> {
    if s == "unlimited" {
        return Ok(QueueSize::Limit(QueueLimit::Packets(u64::MAX)));
    }
    match parse_size(s).or_else(|m| err(field, m))? {
        SizeSpec::Packets(0) | SizeSpec::Bytes(0) => {
            err(field, format!("{s:?}: a queue must hold at least one packet (> 0)"))
        }
        SizeSpec::Bdp(f) if !(f > 0.0 && f <= MAX_BDP_FRACTION) => {
            err(field, format!("{s:?} is out of range; a BDP fraction must be in (0, {MAX_BDP_FRACTION}]"))
        }
        SizeSpec::Packets(n) if n > MAX_QUEUE_PKTS => {
            err(field, format!("{s:?} is out of range; allowed 1..={MAX_QUEUE_PKTS} packets, or \"unlimited\""))
        }
        SizeSpec::Bytes(b) if b > MAX_QUEUE_BYTES => {
            err(field, format!("{s:?} is out of range; allowed up to {MAX_QUEUE_BYTES} bytes (1TB), or \"unlimited\""))
        }
        SizeSpec::Packets(n) => Ok(QueueSize::Limit(QueueLimit::Packets(n))),
        SizeSpec::Bytes(b) => Ok(QueueSize::Limit(QueueLimit::Bytes(b))),
        SizeSpec::Bdp(f) => Ok(QueueSize::Bdp(f)),
    }
}

/// A transfer size in whole packets of `payload` bytes ("10MB", "1000pkt").
pub(super) fn transfer_pkts(field: &str, s: &str, payload: u64) -> Result<u64, ScenarioError> {
    let bytes = match parse_size(s).or_else(|m| err(field, m))? {
        SizeSpec::Packets(n) if n > 0 => n.checked_mul(payload),
        SizeSpec::Bytes(b) if b > 0 => Some(b),
        _ => {
            return err(
                field,
                format!(
                    "{s:?}: give a positive size in bytes or packets (e.g. \"10MB\", \"1000pkt\")"
                ),
            )
        }
    };
    match bytes {
        Some(b) if b <= MAX_TRANSFER_BYTES => Ok(b.div_ceil(payload)),
        _ => err(
            field,
            format!("{s:?} is out of range; at most {MAX_TRANSFER_BYTES} bytes (1PB)"),
        ),
    }
}

/// A mean transfer size in bytes ("30KB", or "20pkt" of full payloads).
pub(super) fn size_mean_bytes(field: &str, s: &str, payload: u64) -> Result<f64, ScenarioError> {
    transfer_pkts(field, s, 1).map_err(|_| ScenarioError {
        field: field.into(),
        message: format!("{s:?}: give a positive mean size in bytes or packets (e.g. \"3000B\", \"12pkt\"), at most {MAX_TRANSFER_BYTES} bytes"),
    })?;
    let bytes = match parse_size(s).or_else(|m| err(field, m))? {
        SizeSpec::Bytes(b) => b as f64,
        SizeSpec::Packets(n) => n as f64 * payload as f64,
        SizeSpec::Bdp(_) => unreachable!("refused by transfer_pkts"),
    };
    if bytes > MAX_TRANSFER_BYTES as f64 {
        return err(
            field,
            format!("{s:?} is out of range; at most {MAX_TRANSFER_BYTES} bytes (1PB)"),
        );
    }
    Ok(bytes)
}

/// A Pareto shape (default 1.2).
pub(super) fn pareto_shape(field: &str, v: Option<f64>) -> Result<f64, ScenarioError> {
    let shape = v.unwrap_or(1.2);
    if !PARETO_SHAPE.contains_real(shape) {
        return err(
            field,
            format!(
                "{shape} is out of range; a Pareto shape must be in {PARETO_SHAPE} (finite mean)"
            ),
        );
    }
    Ok(shape)
}
