//! Units: time is integer nanoseconds (`u64`, names end in `_ns`), sizes are
//! bytes, rates are [`Bandwidth`]. Scenario strings such as `"1Gbps"`,
//! `"70ms"` and `"6000pkt"` are parsed here.

use std::fmt;

pub const NS_PER_SEC: u64 = 1_000_000_000;

/// A link rate in bits per second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Bandwidth {
    bits_per_sec: u64,
}

impl Bandwidth {
    pub const fn from_bps(bits_per_sec: u64) -> Self {
        Self { bits_per_sec }
    }
    pub const fn bps(self) -> u64 {
        self.bits_per_sec
    }
    /// Serialization time of `bytes` on this link, rounded up to the next
    /// nanosecond: ceil(bytes * 8 * 1e9 / bps).
    pub fn tx_time_ns(self, bytes: u64) -> u64 {
        let num = u128::from(bytes) * 8 * u128::from(NS_PER_SEC);
        let den = u128::from(self.bits_per_sec);
        num.div_ceil(den) as u64
    }
    /// Bytes this link carries in `dur_ns` (bandwidth-delay product).
    pub fn bytes_in(self, dur_ns: u64) -> u64 {
        (u128::from(self.bits_per_sec) * u128::from(dur_ns) / (8 * u128::from(NS_PER_SEC))) as u64
    }
}

impl fmt::Display for Bandwidth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.bits_per_sec as f64;
        if b >= 1e9 {
            write!(f, "{}Gbps", b / 1e9)
        } else if b >= 1e6 {
            write!(f, "{}Mbps", b / 1e6)
        } else if b >= 1e3 {
            write!(f, "{}Kbps", b / 1e3)
        } else {
            write!(f, "{}bps", b)
        }
    }
}

/// Splits `"12.5ms"` into (12.5, "ms"). Rejects NaN, infinities and missing numbers.
fn split_number(s: &str) -> Option<(f64, &str)> {
    let s = s.trim();
    let end = s
        .char_indices()
        .find(|&(i, c)| {
            !(c.is_ascii_digit() || c == '.' || c == 'e' && i > 0 || c == '-' || c == '+')
        })
        .map(|(i, _)| i)
        .unwrap_or(s.len());
    // "e" might belong to a unit; back off if the number part does not parse.
    let mut end = end;
    loop {
        if end == 0 {
            return None;
        }
        if let Ok(v) = s[..end].parse::<f64>() {
            if !v.is_finite() {
                return None;
            }
            return Some((v, s[end..].trim()));
        }
        end -= 1;
    }
}

/// Parses a duration: `"70ms"`, `"1.5s"`, `"250us"`, `"10ns"`, `"2min"`.
pub fn parse_duration_ns(s: &str) -> Result<u64, String> {
    let err = || {
        format!("malformed duration {s:?}; write a number and a unit: ns, us, ms, s, min (e.g. \"70ms\")")
    };
    let (v, unit) = split_number(s).ok_or_else(err)?;
    let scale = match unit {
        "ns" => 1.0,
        "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        "min" => 60e9,
        _ => return Err(err()),
    };
    if v < 0.0 {
        return Err(format!("duration {s:?} is negative; must be >= 0"));
    }
    let ns = (v * scale).round();
    if ns > 1e18 {
        return Err(format!("duration {s:?} is out of range; at most 1e18ns"));
    }
    Ok(ns as u64)
}

/// Parses a rate: `"1Gbps"`, `"622Mbps"`, `"64kbps"`, `"1e9bps"`.
pub fn parse_bandwidth(s: &str) -> Result<Bandwidth, String> {
    let err = || {
        format!("malformed rate {s:?}; write a number and a unit: bps, Kbps, Mbps, Gbps, Tbps (e.g. \"1Gbps\")")
    };
    let (v, unit) = split_number(s).ok_or_else(err)?;
    let scale = match unit.to_ascii_lowercase().as_str() {
        "bps" => 1.0,
        "kbps" => 1e3,
        "mbps" => 1e6,
        "gbps" => 1e9,
        "tbps" => 1e12,
        _ => return Err(err()),
    };
    let bps = (v * scale).round();
    if bps <= 0.0 {
        return Err(format!("rate {s:?} must be > 0"));
    }
    if bps > 1e15 {
        return Err(format!("rate {s:?} is out of range; at most 1000Tbps"));
    }
    Ok(Bandwidth::from_bps(bps as u64))
}

/// A buffer size as written in a scenario.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SizeSpec {
    Packets(u64),
    Bytes(u64),
    /// A fraction of the link's bandwidth-delay product.
    Bdp(f64),
}

/// Parses `"6000pkt"`, `"1.5MB"`, `"64KB"`, `"9000B"`, `"0.2bdp"`.
pub fn parse_size(s: &str) -> Result<SizeSpec, String> {
    let err = || {
        format!("malformed size {s:?}; write a number and a unit: pkt, B, KB, MB, GB, bdp (e.g. \"6000pkt\", \"0.2bdp\")")
    };
    let (v, unit) = split_number(s).ok_or_else(err)?;
    if v < 0.0 {
        return Err(format!("size {s:?} is negative; must be > 0"));
    }
    let bytes = |scale: f64| -> Result<SizeSpec, String> {
        let b = (v * scale).round();
        if b > 1e15 {
            return Err(format!("size {s:?} is out of range; at most 1e15 bytes"));
        }
        Ok(SizeSpec::Bytes(b as u64))
    };
    match unit {
        "pkt" | "pkts" | "packets" => {
            if v.fract() != 0.0 {
                return Err(format!("size {s:?}: packet counts must be whole numbers"));
            }
            Ok(SizeSpec::Packets(v as u64))
        }
        "B" => bytes(1.0),
        "KB" | "kB" => bytes(1e3),
        "MB" => bytes(1e6),
        "GB" => bytes(1e9),
        "bdp" | "BDP" => Ok(SizeSpec::Bdp(v)),
        _ => Err(err()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tx_time_is_exact_and_rounds_up() {
        let g = Bandwidth::from_bps(1_000_000_000);
        assert_eq!(g.tx_time_ns(1500), 12_000);
        let odd = Bandwidth::from_bps(3_000_000_000);
        // 1500 B * 8 / 3e9 = 4000 ns exactly; 1 B = 2.666 ns -> 3
        assert_eq!(odd.tx_time_ns(1500), 4000);
        assert_eq!(odd.tx_time_ns(1), 3);
        assert_eq!(g.bytes_in(70_000_000), 8_750_000);
    }

    #[test]
    fn parses_units() {
        assert_eq!(parse_duration_ns("70ms").unwrap(), 70_000_000);
        assert_eq!(parse_duration_ns("1.5s").unwrap(), 1_500_000_000);
        assert_eq!(parse_duration_ns("0s").unwrap(), 0);
        assert_eq!(parse_bandwidth("1Gbps").unwrap().bps(), 1_000_000_000);
        assert_eq!(parse_bandwidth("2.5Mbps").unwrap().bps(), 2_500_000);
        assert_eq!(parse_bandwidth("1e9bps").unwrap().bps(), 1_000_000_000);
        assert_eq!(parse_size("6000pkt").unwrap(), SizeSpec::Packets(6000));
        assert_eq!(parse_size("1.5MB").unwrap(), SizeSpec::Bytes(1_500_000));
        assert_eq!(parse_size("0.2bdp").unwrap(), SizeSpec::Bdp(0.2));
    }

    #[test]
    fn refuses_malformed_units() {
        assert!(parse_duration_ns("70").is_err());
        assert!(parse_duration_ns("fast").is_err());
        assert!(parse_duration_ns("-1s").is_err());
        assert!(parse_bandwidth("-1Gbps").is_err());
        assert!(parse_bandwidth("0Gbps").is_err());
        assert!(parse_bandwidth("1Gbit").is_err());
        assert!(parse_size("12.5pkt").is_err());
        assert!(parse_size("NaNpkt").is_err());
    }
}
