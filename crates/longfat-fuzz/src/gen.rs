//! The structured generator: whole scenarios over the full schema.
//!
//! Each input draws a "wildness" w. Every field is then, independently,
//! either a valid value consistent with the rest of the scenario (start times
//! before the end of the run, endpoints on the chain, classes that exist,
//! ...) or, with probability w, an interesting value from `values.rs`
//! (boundaries, extremes that still parse, malformed units, wrong JSON
//! types). Optional fields appear with fixed probabilities; with probability
//! ~w a required field is dropped or an unknown one added. About 45 % of
//! inputs have w = 0, so a good share passes validation and the run path is
//! exercised.

use serde_json::{json, Map, Value};

use longfat_cc::Range;

use crate::schema::{self, Kind, Table};
use crate::values::{fmt_bytes, fmt_duration, fmt_rate, interesting, wrong_type, G};

struct Gen<'a> {
    g: &'a mut G,
    wild: f64,
    /// Run length in ns (the valid values are drawn relative to it).
    dur: u64,
    hops: u64,
    classes: u64,
    /// A long-lived TCP flow exists (a "bdp" queue can be resolved).
    has_tcp: bool,
}

impl Gen<'_> {
    /// Inserts `key`: present with probability `p` (valid value, or with
    /// probability `wild` an interesting one); an absent field still appears
    /// with an interesting value with probability `wild / 3`; a required
    /// field (p = 1) is dropped with probability `wild / 6`.
    fn field(
        &mut self,
        m: &mut Map<String, Value>,
        key: &str,
        kind: Kind,
        p: f64,
        valid: impl FnOnce(&mut Gen) -> Value,
    ) {
        let present = if p >= 1.0 {
            !self.g.chance(self.wild / 6.0)
        } else {
            self.g.chance(p)
        };
        if present {
            let v = if self.g.chance(self.wild) {
                interesting(self.g, kind)
            } else {
                valid(self)
            };
            m.insert(key.to_string(), v);
        } else if p < 1.0 && self.g.chance(self.wild / 3.0) {
            let v = interesting(self.g, kind);
            m.insert(key.to_string(), v);
        }
    }

    /// With probability ~wild, an unknown or misspelled key, or a schema
    /// field of this table with an interesting value.
    fn extra(&mut self, m: &mut Map<String, Value>, t: Table) {
        if self.g.chance(self.wild / 4.0) {
            let k = *self.g.pick(&[
                "unknown",
                "Rate",
                "rate ",
                "flow",
                "seeds",
                "reproduce",
                "",
                "count_",
                "tcp.rwnd",
            ]);
            let v = wrong_type(self.g);
            m.insert(k.to_string(), v);
        }
        if self.g.chance(self.wild / 2.0) {
            let fields = schema::fields(t);
            let (name, kind, _) = fields[self.g.below(fields.len() as u64) as usize];
            let v = interesting(self.g, kind);
            m.insert(name.to_string(), v);
        }
    }

    fn dur_frac(&mut self, lo: f64, hi: f64) -> u64 {
        let f = lo + self.g.unit() * (hi - lo);
        (self.dur as f64 * f) as u64
    }

    fn duration(&mut self, ns: u64) -> Value {
        json!(fmt_duration(self.g, ns))
    }

    fn pick_ns(&mut self, choices_ms: &[f64]) -> Value {
        let ms = *self.g.pick(choices_ms);
        let ns = (ms * 1e6) as u64;
        self.duration(ns)
    }

    fn endpoints(&mut self, m: &mut Map<String, Value>) {
        if self.g.chance(0.25) || self.hops > 1 && self.g.chance(0.3) {
            let h = self.hops;
            let (mut a, mut b) = (self.g.range(0, h), self.g.range(0, h));
            if a == b {
                if a == h {
                    a = 0;
                } else {
                    b = h;
                }
            }
            if self.g.chance(0.5) {
                std::mem::swap(&mut a, &mut b);
            }
            self.field(m, "from", Kind::U32, 0.9, |_| json!(a));
            self.field(m, "to", Kind::U32, 0.9, |_| json!(b));
        } else {
            self.field(m, "from", Kind::U32, 0.0, |_| json!(0));
            self.field(m, "to", Kind::U32, 0.0, |_| json!(1));
        }
    }

    fn params(&mut self, cc: &str) -> Value {
        let list = schema::params_of(cc);
        let mut m = Map::new();
        if list.is_empty() {
            return Value::Object(m);
        }
        for _ in 0..self.g.range(1, 3) {
            let p = &list[self.g.below(list.len() as u64) as usize];
            let v = match p.range {
                Range::Switch => json!(*self.g.pick(&[0.0, 1.0])),
                Range::Whole(lo, hi) => json!(self.g.range(lo as u64, hi as u64)),
                Range::Closed(lo, hi) | Range::Open(lo, hi) => {
                    let eps = if matches!(p.range, Range::Open(..)) {
                        (hi - lo) * 1e-9
                    } else {
                        0.0
                    };
                    match self.g.below(6) {
                        0 => json!(lo + eps),
                        1 => json!(hi - eps),
                        2 if lo > 0.0 => json!(self.g.log_uniform(lo, hi)),
                        _ => json!(lo + eps + self.g.unit() * (hi - lo - 2.0 * eps)),
                    }
                }
            };
            m.insert(p.name.to_string(), v);
        }
        Value::Object(m)
    }

    fn tcp(&mut self) -> Value {
        let mut m = Map::new();
        let packet = *self
            .g
            .pick(&[64u64, 100, 576, 1040, 1500, 1500, 9000, 65535]);
        let header = (*self.g.pick(&[0u64, 20, 40, 40, 52, 1024])).min(packet - 1);
        self.field(&mut m, "packet_size", Kind::Size, 0.3, |s| {
            json!(fmt_bytes(s.g, packet))
        });
        let packet = if m.contains_key("packet_size") {
            packet
        } else {
            1500
        };
        let header = header.min(packet - 1);
        self.field(&mut m, "header_size", Kind::Size, 0.2, |s| {
            json!(fmt_bytes(s.g, header))
        });
        self.field(&mut m, "ack_size", Kind::Size, 0.15, |s| {
            let a = s.g.range(20, 1500);
            json!(format!("{a}B"))
        });
        self.field(&mut m, "delayed_ack", Kind::Bool, 0.3, |s| {
            json!(s.g.chance(0.6))
        });
        self.field(&mut m, "delayed_ack_timeout", Kind::Duration, 0.1, |s| {
            s.pick_ns(&[0.001, 1.0, 40.0, 200.0, 500.0])
        });
        self.field(&mut m, "rwnd", Kind::Size, 0.2, |s| match s.g.below(3) {
            0 => json!("unlimited"),
            1 => {
                let n = s.g.log_uniform(1.0, 1e6) as u64;
                json!(format!("{n}pkt"))
            }
            _ => {
                let b = s.g.log_uniform(packet as f64, 1e9) as u64;
                json!(fmt_bytes(s.g, b))
            }
        });
        // min_rto <= max_rto, both > 0 for max.
        let max_rto_ms = *self.g.pick(&[1.0, 100.0, 1000.0, 60000.0, 120000.0]);
        let min_rto_ms = max_rto_ms * *self.g.pick(&[0.0, 0.001, 0.1, 0.5, 1.0]);
        self.field(&mut m, "min_rto", Kind::Duration, 0.15, |s| {
            s.pick_ns(&[min_rto_ms])
        });
        if m.contains_key("min_rto") || self.g.chance(0.1) {
            self.field(&mut m, "max_rto", Kind::Duration, 0.8, |s| {
                s.pick_ns(&[max_rto_ms])
            });
        }
        self.field(&mut m, "initial_rto", Kind::Duration, 0.1, |s| {
            s.pick_ns(&[0.001, 10.0, 1000.0, 3000.0])
        });
        self.field(&mut m, "initial_cwnd", Kind::Float, 0.2, |s| {
            json!(*s.g.pick(&[1.0, 2.0, 3.0, 4.0, 10.0, 2.5, 100.0]))
        });
        self.field(&mut m, "initial_ssthresh", Kind::Float, 0.15, |s| {
            json!(*s.g.pick(&[2.0, 10.0, 100.0, 1e6]))
        });
        self.field(&mut m, "sender_clock_offset", Kind::Duration, 0.1, |s| {
            s.pick_ns(&[0.0, 1.0, 1000.0, 3.6e6])
        });
        self.field(&mut m, "receiver_clock_offset", Kind::Duration, 0.1, |s| {
            s.pick_ns(&[0.0, 1.0, 1000.0, 3.6e6])
        });
        let classes = self.classes;
        self.field(
            &mut m,
            "priority_class",
            Kind::U32,
            if classes > 1 { 0.4 } else { 0.05 },
            |s| json!(s.g.below(classes.max(1))),
        );
        self.field(
            &mut m,
            "profile",
            Kind::Word(crate::schema::PROFILES),
            0.3,
            |s| json!(*s.g.pick(crate::schema::PROFILES)),
        );
        self.field(&mut m, "max_burst", Kind::U32, 0.1, |s| {
            json!(*s.g.pick(&[1u64, 2, 4, 64, 1_000_000]))
        });
        // Issue 28's host, timestamps and GRO (valid mostly under `linux`,
        // `ns2` and `linux` respectively; refused otherwise, naming the field).
        self.field(&mut m, "host", Kind::Word(crate::schema::HOSTS), 0.1, |s| {
            json!(*s.g.pick(crate::schema::HOSTS))
        });
        self.field(&mut m, "timestamps", Kind::Bool, 0.1, |s| {
            json!(s.g.chance(0.5))
        });
        self.field(&mut m, "gro_segments", Kind::U64, 0.1, |s| {
            json!(*s.g.pick(&[1u64, 2, 8, 44, 64]))
        });
        // Issue 31's ECN and ABE (ABE without ECN, or ECN with PLT, is
        // refused naming the field).
        self.field(&mut m, "ecn", Kind::Bool, 0.2, |s| json!(s.g.chance(0.7)));
        self.field(&mut m, "abe", Kind::Bool, 0.1, |s| json!(s.g.chance(0.5)));
        // Issue 31's pacing (refused with PLT, naming the field) and its
        // ratios (Linux's sysctl range 0..=1000, 1001 refused).
        self.field(&mut m, "pacing", Kind::Bool, 0.15, |s| {
            json!(s.g.chance(0.5))
        });
        self.field(&mut m, "pacing_ss_ratio", Kind::U64, 0.05, |s| {
            json!(*s.g.pick(&[0u64, 100, 200, 1000, 1001]))
        });
        self.field(&mut m, "pacing_ca_ratio", Kind::U64, 0.05, |s| {
            json!(*s.g.pick(&[0u64, 100, 120, 1000, 1001]))
        });
        self.extra(&mut m, Table::Tcp);
        Value::Object(m)
    }

    /// A PLT table; `hcm`: the HCM's controller it names (with the alias
    /// `cc = "plt"`; with `transport = "plt"` the HCM runs `cc`).
    fn plt(&mut self, hcm: Option<&str>) -> Value {
        let mut m = Map::new();
        if let Some(h) = hcm.map(str::to_string) {
            self.field(
                &mut m,
                "hcm",
                Kind::Word(longfat_cc::ALGORITHMS),
                0.5,
                move |_| json!(h),
            );
        }
        self.field(&mut m, "alpha", Kind::Float, 0.3, |s| {
            json!(*s.g.pick(&[0.01, 0.1, 0.5, 1.0, 10.0]))
        });
        self.field(&mut m, "beta", Kind::Float, 0.3, |s| {
            json!(*s.g.pick(&[0.01, 0.5, 0.95, 0.999]))
        });
        self.field(&mut m, "gamma", Kind::Float, 0.3, |s| {
            json!(*s.g.pick(&[0.01, 0.5, 0.75, 0.999]))
        });
        self.field(&mut m, "mu", Kind::Float, 0.3, |s| {
            json!(*s.g.pick(&[1e-6, 0.005, 0.1, 0.9]))
        });
        self.field(&mut m, "ema_weight", Kind::Float, 0.2, |s| {
            json!(*s.g.pick(&[0.01, 0.25, 1.0]))
        });
        self.field(&mut m, "epoch", Kind::Duration, 0.3, |s| {
            s.pick_ns(&[1.0, 10.0, 100.0, 1000.0, 60_000.0])
        });
        self.field(&mut m, "lcm_initial_window", Kind::Size, 0.3, |s| {
            json!(*s
                .g
                .pick(&["1bdp", "0.01bdp", "3bdp", "1pkt", "100pkt", "10000000pkt"]))
        });
        self.field(&mut m, "lcm_ack_every", Kind::U32, 0.2, |s| {
            json!(*s.g.pick(&[1u64, 2, 8, 64]))
        });
        self.field(
            &mut m,
            "lcm_ack_class",
            Kind::Word(crate::schema::ACK_CLASSES),
            0.2,
            |s| json!(*s.g.pick(crate::schema::ACK_CLASSES)),
        );
        self.field(
            &mut m,
            "lcm_restart",
            Kind::Word(crate::schema::LCM_RESTARTS),
            0.2,
            |s| json!(*s.g.pick(crate::schema::LCM_RESTARTS)),
        );
        self.field(&mut m, "receive_buffer", Kind::Size, 0.2, |s| {
            json!(*s.g.pick(&["1pkt", "1000pkt", "3bdp", "1MB", "unlimited"]))
        });
        self.field(&mut m, "lcm_resend", Kind::Float, 0.2, |s| {
            json!(*s.g.pick(&[0.001, 1.0, 4.0, 1e6]))
        });
        self.extra(&mut m, Table::Plt);
        Value::Object(m)
    }

    /// start, stop, and how much room is left after start.
    fn start_stop(&mut self, m: &mut Map<String, Value>) -> u64 {
        let start = if self.g.chance(0.4) {
            self.dur_frac(0.0, 0.5)
        } else {
            0
        };
        self.field(
            m,
            "start",
            Kind::Duration,
            if start > 0 { 1.0 } else { 0.05 },
            |s| s.duration(start),
        );
        let room = self.dur - start;
        let stop = start + (room as f64 * (0.1 + 1.4 * self.g.unit())) as u64 + 1;
        self.field(m, "stop", Kind::Duration, 0.2, |s| s.duration(stop));
        room
    }

    fn access_delays(&mut self, m: &mut Map<String, Value>, jitter: bool) {
        self.field(m, "access_delay", Kind::Duration, 0.3, |s| {
            s.pick_ns(&[0.0, 0.1, 1.0, 10.0, 50.0, 73.25])
        });
        if jitter {
            self.field(m, "access_delay_jitter", Kind::Duration, 0.15, |s| {
                s.pick_ns(&[0.001, 1.0, 10.0, 100.0])
            });
        }
    }

    fn cc(&mut self, m: &mut Map<String, Value>) -> String {
        let picked = (*self.g.pick(crate::schema::CCS)).to_string();
        // PLT in either spelling: the alias `cc = "plt"` (its HCM's
        // controller in `plt.hcm`), or `transport = "plt"` with the HCM's
        // controller in `cc`. The HCM's controller takes `params`.
        let plt = picked == "plt";
        let as_transport = plt && self.g.chance(0.5);
        let controller = if plt {
            (*self.g.pick(longfat_cc::ALGORITHMS)).to_string()
        } else {
            picked.clone()
        };
        let cc = if as_transport {
            controller.clone()
        } else {
            picked
        };
        let c = cc.clone();
        self.field(m, "cc", Kind::Word(crate::schema::CCS), 1.0, move |_| {
            json!(c)
        });
        let (transport, p) = if as_transport {
            ("plt", 1.0)
        } else {
            ("tcp", 0.1)
        };
        self.field(
            m,
            "transport",
            Kind::Word(crate::schema::TRANSPORTS),
            p,
            move |_| json!(transport),
        );
        if plt {
            let h = controller.clone();
            self.field(m, "plt", Kind::Table(Table::Plt), 0.7, move |s| {
                s.plt(if as_transport { None } else { Some(&h) })
            });
        }
        let c = controller;
        self.field(m, "params", Kind::Params, 0.3, move |s| s.params(&c));
        cc
    }

    fn name(&mut self, m: &mut Map<String, Value>, prefix: &str, i: usize) {
        let n = format!("{prefix}{i}");
        self.field(m, "name", Kind::Text, 0.5, move |_| json!(n));
    }

    fn flow(&mut self, i: usize) -> Value {
        let mut m = Map::new();
        self.name(&mut m, "f", i);
        self.cc(&mut m);
        let count = *self.g.weighted(&[
            (300, 1u64),
            (300, 2),
            (200, 5),
            (100, 10),
            (50, 33),
            (48, 100),
            (2, 1000),
        ]);
        let with_count = self.g.chance(0.4);
        self.field(
            &mut m,
            "count",
            Kind::U32,
            if with_count { 1.0 } else { 0.0 },
            |_| json!(count),
        );
        let count = if m.get("count").and_then(Value::as_u64).is_some() {
            count
        } else {
            1
        };
        let room = self.start_stop(&mut m);
        let mut used = 0u64;
        if count > 1 && self.g.chance(0.3) {
            let spacing = (room as f64 * 0.9 * self.g.unit() / count as f64) as u64;
            used = spacing * (count - 1);
            self.field(&mut m, "start_spacing", Kind::Duration, 1.0, |s| {
                s.duration(spacing)
            });
        }
        let left = room.saturating_sub(used);
        if left > 1 && self.g.chance(0.15) {
            let j = (left as f64 * 0.9 * self.g.unit()) as u64;
            self.field(&mut m, "start_jitter", Kind::Duration, 1.0, |s| {
                s.duration(j)
            });
        } else {
            self.field(&mut m, "start_jitter", Kind::Duration, 0.0, |s| {
                s.duration(0)
            });
        }
        self.field(&mut m, "size", Kind::Size, 0.15, |s| {
            if s.g.chance(0.5) {
                let n = s.g.log_uniform(1.0, 1e6) as u64;
                json!(format!("{n}pkt"))
            } else {
                let b = s.g.log_uniform(1.0, 1e9) as u64;
                json!(fmt_bytes(s.g, b))
            }
        });
        self.endpoints(&mut m);
        self.access_delays(&mut m, true);
        self.field(&mut m, "tcp", Kind::Table(Table::Tcp), 0.35, |s| s.tcp());
        self.extra(&mut m, Table::Flow);
        Value::Object(m)
    }

    fn udp(&mut self, i: usize) -> Value {
        let mut m = Map::new();
        self.name(&mut m, "u", i);
        let onoff = self.g.chance(0.5);
        self.field(&mut m, "pattern", Kind::Word(schema::PATTERNS), 1.0, |_| {
            json!(if onoff { "onoff" } else { "cbr" })
        });
        self.field(&mut m, "rate", Kind::Rate, 1.0, |s| {
            let r = s.g.log_uniform(1e4, 1e9);
            json!(fmt_rate(s.g, r.round()))
        });
        self.field(&mut m, "count", Kind::U32, 0.3, |s| {
            json!(*s.g.weighted(&[(60, 1u64), (20, 2), (15, 10), (5, 150)]))
        });
        self.field(&mut m, "packet_size", Kind::Size, 0.3, |s| {
            let b = *s.g.pick(&[20u64, 64, 200, 1040, 1500, 9000]);
            json!(fmt_bytes(s.g, b))
        });
        let room = self.start_stop(&mut m);
        let j = (room as f64 * 0.9 * self.g.unit()) as u64;
        self.field(&mut m, "start_jitter", Kind::Duration, 0.15, |s| {
            s.duration(j)
        });
        self.endpoints(&mut m);
        self.field(&mut m, "access_delay", Kind::Duration, 0.2, |s| {
            s.pick_ns(&[0.0, 1.0, 10.0])
        });
        if onoff {
            self.field(&mut m, "on_mean", Kind::Duration, 0.6, |s| {
                s.pick_ns(&[1.0, 10.0, 500.0, 1000.0])
            });
            self.field(&mut m, "off_mean", Kind::Duration, 0.6, |s| {
                s.pick_ns(&[0.0, 1.0, 10.0, 500.0, 1000.0])
            });
            let pareto = self.g.chance(0.5);
            self.field(
                &mut m,
                "distribution",
                Kind::Word(schema::DISTRIBUTIONS),
                0.6,
                |_| json!(if pareto { "pareto" } else { "exponential" }),
            );
            if pareto && m.get("distribution") == Some(&json!("pareto")) {
                self.field(&mut m, "shape", Kind::Float, 0.5, |s| {
                    json!(*s.g.pick(&[1.01, 1.2, 1.5, 2.0, 10.0]))
                });
            }
        } else {
            for k in ["on_mean", "off_mean"] {
                self.field(&mut m, k, Kind::Duration, 0.0, |s| s.pick_ns(&[1.0]));
            }
        }
        let classes = self.classes;
        self.field(
            &mut m,
            "priority_class",
            Kind::U32,
            if classes > 1 { 0.4 } else { 0.05 },
            |s| json!(s.g.below(classes.max(1))),
        );
        self.extra(&mut m, Table::Udp);
        Value::Object(m)
    }

    fn short(&mut self, i: usize) -> Value {
        let mut m = Map::new();
        self.name(&mut m, "s", i);
        self.cc(&mut m);
        let secs = (self.dur as f64 / 1e9).max(1e-9);
        self.field(&mut m, "arrival_rate", Kind::Float, 1.0, |s| {
            let r = s.g.log_uniform(0.01, 1e4).min(2e4 / secs).max(1e-6);
            json!(r)
        });
        self.field(&mut m, "size_mean", Kind::Size, 1.0, |s| {
            if s.g.chance(0.5) {
                json!(format!("{}pkt", s.g.range(1, 100)))
            } else {
                let b = s.g.log_uniform(100.0, 1e6) as u64;
                json!(fmt_bytes(s.g, b))
            }
        });
        self.field(&mut m, "size_shape", Kind::Float, 0.3, |s| {
            json!(*s.g.pick(&[1.01, 1.2, 1.5, 2.0, 100.0]))
        });
        self.start_stop(&mut m);
        self.endpoints(&mut m);
        self.field(&mut m, "hosts", Kind::U32, 0.3, |s| {
            json!(*s.g.pick(&[1u64, 2, 5, 20]))
        });
        self.access_delays(&mut m, true);
        self.field(&mut m, "tcp", Kind::Table(Table::Tcp), 0.25, |s| s.tcp());
        self.extra(&mut m, Table::Short);
        Value::Object(m)
    }

    fn web(&mut self, i: usize) -> Value {
        let mut m = Map::new();
        self.name(&mut m, "w", i);
        self.cc(&mut m);
        self.field(&mut m, "sessions", Kind::U32, 1.0, |s| {
            json!(*s.g.pick(&[1u64, 2, 5, 20]))
        });
        self.start_stop(&mut m);
        self.field(&mut m, "session_spread", Kind::Duration, 0.3, |s| {
            s.pick_ns(&[0.0, 100.0, 10000.0])
        });
        self.field(&mut m, "pages_per_session", Kind::U32, 1.0, |s| {
            json!(*s.g.pick(&[1u64, 2, 10, 1000]))
        });
        self.field(&mut m, "inter_page", Kind::Duration, 1.0, |s| {
            s.pick_ns(&[1.0, 100.0, 1000.0, 10000.0])
        });
        self.field(&mut m, "objects_per_page", Kind::Float, 0.3, |s| {
            json!(*s.g.pick(&[1.0, 1.5, 3.0, 5.0]))
        });
        self.field(&mut m, "inter_object", Kind::Duration, 0.3, |s| {
            s.pick_ns(&[0.0, 1.0, 10.0])
        });
        self.field(&mut m, "object_size_mean", Kind::Size, 1.0, |s| {
            if s.g.chance(0.3) {
                json!(format!("{}pkt", s.g.range(1, 20)))
            } else {
                let b = s.g.log_uniform(100.0, 1e5) as u64;
                json!(fmt_bytes(s.g, b))
            }
        });
        self.field(&mut m, "object_size_shape", Kind::Float, 0.3, |s| {
            json!(*s.g.pick(&[1.01, 1.2, 2.0]))
        });
        self.endpoints(&mut m);
        self.access_delays(&mut m, true);
        self.field(&mut m, "tcp", Kind::Table(Table::Tcp), 0.25, |s| s.tcp());
        self.extra(&mut m, Table::Web);
        Value::Object(m)
    }

    fn array(&mut self, n: usize, mut one: impl FnMut(&mut Self, usize) -> Value) -> Value {
        let mut v: Vec<Value> = (0..n).map(|i| one(self, i)).collect();
        if !v.is_empty() && self.g.chance(self.wild / 4.0) {
            // Duplicate an entry many times ("huge counts" of entries).
            let k = *self.g.pick(&[2usize, 10, 100, 1000]);
            let e = v[self.g.below(v.len() as u64) as usize].clone();
            v.extend(std::iter::repeat_n(e, k));
        }
        Value::Array(v)
    }
}

/// One structured scenario (as a JSON value).
pub fn structured(g: &mut G) -> Value {
    let wild = *g.weighted(&[(45, 0.0), (20, 0.01), (15, 0.05), (12, 0.15), (8, 0.5)]);
    let dur_ms = *g.weighted(&[
        (3, 1.0),
        (5, 10.0),
        (10, 100.0),
        (15, 1000.0),
        (15, 5000.0),
        (15, 30000.0),
        (10, 60000.0),
        (10, 600000.0),
        (5, 3600000.0),
        (2, 2e7),
    ]);
    let mut s = Gen {
        g,
        wild,
        dur: (dur_ms * 1e6) as u64,
        hops: 1,
        classes: 1,
        has_tcp: false,
    };

    // How many entries of each kind.
    let n_flows =
        *s.g.weighted(&[(25, 0usize), (35, 1), (20, 2), (10, 3), (7, 4), (3, 8)]);
    let n_udp = *s.g.weighted(&[(70, 0usize), (20, 1), (7, 2), (3, 3)]);
    let n_short = *s.g.weighted(&[(80, 0usize), (15, 1), (5, 2)]);
    let n_web = *s.g.weighted(&[(85, 0usize), (12, 1), (3, 2)]);
    let n_flows = if n_flows + n_udp + n_short + n_web == 0 {
        1
    } else {
        n_flows
    };
    s.has_tcp = n_flows > 0;

    // ---- network ----
    let mut net = Map::new();
    let parking = s.g.chance(0.25);
    if parking {
        s.hops =
            *s.g.weighted(&[(30, 2u64), (25, 3), (20, 4), (10, 8), (8, 16), (7, 64)]);
    }
    let hops = s.hops;
    s.field(
        &mut net,
        "topology",
        Kind::Word(schema::TOPOLOGIES),
        1.0,
        |_| json!(if parking { "parking_lot" } else { "dumbbell" }),
    );
    s.field(
        &mut net,
        "hops",
        Kind::U32,
        if parking { 1.0 } else { 0.1 },
        |_| json!(hops),
    );
    let mut link = Map::new();
    s.field(&mut link, "rate", Kind::Rate, 1.0, |s| {
        if s.g.chance(0.5) {
            json!(*s.g.pick(&[
                "1Mbps", "10Mbps", "100Mbps", "250Mbps", "622Mbps", "1Gbps", "2.5Gbps", "10Gbps"
            ]))
        } else {
            let r = s.g.log_uniform(1e5, 1e10).round();
            json!(fmt_rate(s.g, r))
        }
    });
    s.field(&mut link, "delay", Kind::Duration, 1.0, |s| {
        s.pick_ns(&[0.0, 0.1, 1.0, 5.0, 7.5, 10.0, 35.0, 50.0, 100.0, 300.0])
    });
    let bdp_queue = s.g.chance(0.25);
    let queue = move |s: &mut Gen| -> Value {
        if bdp_queue {
            json!(format!("{}bdp", *s.g.pick(&[0.05, 0.2, 0.5, 1.0, 2.0])))
        } else {
            match s.g.below(4) {
                0 => json!(format!("{}pkt", s.g.log_uniform(1.0, 20000.0) as u64)),
                1 => {
                    let b = s.g.log_uniform(2000.0, 1e8) as u64;
                    json!(fmt_bytes(s.g, b))
                }
                2 => json!("unlimited"),
                _ => json!(format!("{}pkt", *s.g.pick(&[10u64, 100, 1000, 6000]))),
            }
        }
    };
    s.field(&mut link, "queue", Kind::Size, 1.0, queue);
    // Priority often enough that PLT flows (which need it) run.
    if s.g.chance(0.3) {
        s.classes = s.g.range(1, 8);
        let classes = s.classes;
        s.field(
            &mut link,
            "discipline",
            Kind::Word(schema::DISCIPLINES),
            1.0,
            |_| json!("priority"),
        );
        s.field(&mut link, "classes", Kind::U32, 0.5, |_| json!(classes));
        if !link.contains_key("classes") {
            s.classes = 2;
        }
        let classes = s.classes;
        if s.g.chance(0.3) {
            s.field(
                &mut link,
                "buffer",
                Kind::Word(schema::BUFFERS),
                1.0,
                |_| json!("shared"),
            );
        } else {
            s.field(
                &mut link,
                "buffer",
                Kind::Word(schema::BUFFERS),
                0.1,
                |_| json!("per_class"),
            );
            s.field(&mut link, "class_queues", Kind::SizeList, 0.4, move |s| {
                Value::Array((0..classes).map(|_| queue(s)).collect())
            });
        }
    } else if s.g.chance(0.25) {
        // An AQM; each mostly with its own fields (another discipline's
        // field is refused, which a few inputs check).
        let d =
            *s.g.pick(&["codel", "fq_codel", "codel", "fq_codel", "red", "pie"]);
        s.field(
            &mut link,
            "discipline",
            Kind::Word(schema::DISCIPLINES),
            1.0,
            move |_| json!(d),
        );
        s.field(&mut link, "aqm", Kind::Table(Table::Aqm), 0.6, move |s| {
            let mut a = Map::new();
            let own = |ds: &[&str]| if ds.contains(&d) { 0.4 } else { 0.02 };
            s.field(
                &mut a,
                "target",
                Kind::Duration,
                own(&["codel", "fq_codel", "pie"]),
                |s| s.pick_ns(&[0.001, 0.5, 1.0, 5.0, 10.0, 15.0, 20.0]),
            );
            s.field(
                &mut a,
                "interval",
                Kind::Duration,
                own(&["codel", "fq_codel"]),
                |s| s.pick_ns(&[1.0, 30.0, 100.0, 300.0, 1000.0]),
            );
            s.field(&mut a, "ecn", Kind::Bool, 0.4, |s| json!(s.g.chance(0.5)));
            let fq = own(&["fq_codel"]);
            s.field(&mut a, "flows", Kind::U32, fq, |s| {
                json!(*s.g.pick(&[1u64, 2, 16, 1024, 65_536]))
            });
            s.field(&mut a, "quantum", Kind::U32, fq, |s| {
                json!(*s.g.pick(&[64u64, 300, 1514, 9000]))
            });
            s.field(&mut a, "drop_batch", Kind::U32, fq, |s| {
                json!(*s.g.pick(&[1u64, 8, 64, 1000]))
            });
            // RED: thresholds usually ordered (min_th < max_th), ARED's
            // automatic parameters now and then instead of them.
            let red = own(&["red"]);
            let auto = d == "red" && s.g.chance(0.15);
            let th = if auto { 0.0 } else { red };
            s.field(&mut a, "min_th", Kind::Float, th, |s| {
                json!(*s.g.pick(&[0.0, 1.0, 5.0, 30.0, 250.0]))
            });
            let min_th = a.get("min_th").and_then(Value::as_f64).unwrap_or(5.0);
            s.field(&mut a, "max_th", Kind::Float, th, move |s| {
                json!(min_th.max(0.5) * *s.g.pick(&[1.5, 3.0, 10.0]))
            });
            s.field(&mut a, "max_p", Kind::Float, red, |s| {
                json!(*s.g.pick(&[1e-4, 0.02, 0.1, 0.5, 1.0]))
            });
            s.field(&mut a, "weight", Kind::Float, th, |s| {
                json!(*s.g.pick(&[1e-6, 0.0002, 0.002, 0.1, 1.0]))
            });
            s.field(&mut a, "gentle", Kind::Bool, red, |s| {
                json!(s.g.chance(0.5))
            });
            s.field(&mut a, "wait", Kind::Bool, red, |s| json!(s.g.chance(0.5)));
            s.field(&mut a, "adaptive", Kind::Bool, red, |s| {
                json!(s.g.chance(0.7))
            });
            let adaptive = a.get("adaptive").and_then(Value::as_bool) == Some(true);
            s.field(
                &mut a,
                "target_delay",
                Kind::Duration,
                if auto { 1.0 } else { 0.01 },
                |s| s.pick_ns(&[0.001, 1.0, 5.0, 20.0, 10_000.0]),
            );
            s.field(
                &mut a,
                "ared_interval",
                Kind::Duration,
                if adaptive { 0.5 } else { 0.01 },
                |s| s.pick_ns(&[1.0, 100.0, 500.0, 100_000.0]),
            );
            s.field(
                &mut a,
                "mean_pkt_size",
                Kind::U32,
                own(&["red", "pie"]),
                |s| json!(*s.g.pick(&[1u64, 64, 500, 1500, 65_535])),
            );
            // PIE.
            let pie = own(&["pie"]);
            s.field(&mut a, "t_update", Kind::Duration, pie, |s| {
                s.pick_ns(&[0.1, 1.0, 15.0, 100.0, 10_000.0])
            });
            s.field(&mut a, "alpha", Kind::Float, pie, |s| {
                json!(*s.g.pick(&[0.0, 0.125, 2.0, 100.0]))
            });
            s.field(&mut a, "beta", Kind::Float, pie, |s| {
                json!(*s.g.pick(&[0.0, 1.25, 10.0, 100.0]))
            });
            s.field(&mut a, "max_burst", Kind::Duration, pie, |s| {
                s.pick_ns(&[0.0, 15.0, 150.0, 100_000.0])
            });
            s.field(&mut a, "mark_ecn_threshold", Kind::Float, pie, |s| {
                json!(*s.g.pick(&[0.0, 0.1, 0.5, 1.0]))
            });
            s.extra(&mut a, Table::Aqm);
            Value::Object(a)
        });
    } else {
        s.field(
            &mut link,
            "discipline",
            Kind::Word(schema::DISCIPLINES),
            0.05,
            |_| json!("droptail"),
        );
        s.field(&mut link, "classes", Kind::U32, 0.0, |_| json!(1));
    }
    s.field(&mut link, "loss", Kind::Float, 0.2, |s| {
        json!(*s.g.pick(&[0.0, 1e-6, 1e-4, 0.01, 0.1, 0.5]))
    });
    s.field(&mut link, "reverse_loss", Kind::Float, 0.1, |s| {
        json!(*s.g.pick(&[0.0, 1e-6, 1e-4, 0.01]))
    });
    s.extra(&mut link, Table::Link);
    net.insert("bottleneck".into(), Value::Object(link));
    let need_rtt = bdp_queue && !s.has_tcp;
    s.field(
        &mut net,
        "bdp_rtt",
        Kind::Duration,
        if need_rtt { 1.0 } else { 0.15 },
        |s| s.pick_ns(&[1.0, 40.0, 100.0, 162.0]),
    );
    s.field(&mut net, "access", Kind::Table(Table::Access), 0.4, |s| {
        let mut a = Map::new();
        s.field(&mut a, "rate", Kind::Rate, 0.6, |s| {
            let r = s.g.log_uniform(1e6, 1e11).round();
            json!(fmt_rate(s.g, r))
        });
        s.field(&mut a, "delay", Kind::Duration, 0.5, |s| {
            s.pick_ns(&[0.0, 0.1, 0.25, 1.0, 10.0])
        });
        s.field(&mut a, "queue", Kind::Size, 0.5, |s| match s.g.below(3) {
            0 => json!("unlimited"),
            1 => json!(format!("{}pkt", s.g.log_uniform(1.0, 1e5) as u64)),
            _ => {
                let b = s.g.log_uniform(2000.0, 1e8) as u64;
                json!(fmt_bytes(s.g, b))
            }
        });
        s.extra(&mut a, Table::Access);
        Value::Object(a)
    });
    s.extra(&mut net, Table::Network);

    // ---- run ----
    let mut run = Map::new();
    let dur = s.dur;
    s.field(&mut run, "duration", Kind::Duration, 1.0, |s| {
        s.duration(dur)
    });
    s.field(&mut run, "seed", Kind::U64, 0.6, |s| {
        let v = if s.g.chance(0.2) {
            s.g.u64()
        } else {
            *s.g.pick(&[0u64, 1, 2, 42, u64::MAX])
        };
        json!(v)
    });
    s.field(&mut run, "measure_from", Kind::Duration, 0.4, |s| {
        let v = s.dur_frac(0.0, 0.9);
        s.duration(v)
    });
    s.field(&mut run, "sample_interval", Kind::Duration, 0.4, |s| {
        let d = *s.g.pick(&[1u64, 10, 100, 1000, 10000]);
        s.duration((s.dur / d).max(1))
    });
    // A capture of no flow: valid whatever the flows are named (a
    // capture's names are checked against the flows; its bytes against the
    // memory budget).
    s.field(&mut run, "pcap", Kind::NameList, 0.1, |_| json!([]));
    s.field(&mut run, "pcap_tap", Kind::Word(schema::TAPS), 0.2, |s| {
        json!(*s.g.pick(schema::TAPS))
    });
    s.extra(&mut run, Table::Run);

    // ---- traffic ----
    let mut root = Map::new();
    s.field(&mut root, "name", Kind::Text, 0.5, |s| {
        json!(format!("fuzz{}", s.g.below(1000)))
    });
    s.field(&mut root, "description", Kind::Text, 0.1, |_| {
        json!("generated")
    });
    root.insert("network".into(), Value::Object(net));
    if n_flows > 0 {
        let v = s.array(n_flows, |s, i| s.flow(i));
        root.insert("flows".into(), v);
    }
    if n_udp > 0 {
        let v = s.array(n_udp, |s, i| s.udp(i));
        root.insert("udp".into(), v);
    }
    if n_short > 0 {
        let v = s.array(n_short, |s, i| s.short(i));
        root.insert("short_flows".into(), v);
    }
    if n_web > 0 {
        let v = s.array(n_web, |s, i| s.web(i));
        root.insert("web".into(), v);
    }
    root.insert("run".into(), Value::Object(run));
    // Whole-document oddities.
    if s.g.chance(s.wild / 6.0) {
        let k = *s.g.pick(&["network", "run", "flows"]);
        root.remove(k);
    }
    s.extra(&mut root, Table::Root);
    Value::Object(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every parameter the catalogue declares is one the generator writes,
    /// from its declaration: a new parameter is fuzzed with no list to keep.
    #[test]
    fn generates_every_declared_parameter() {
        let mut g = G::new(29, 0);
        let mut gen = Gen {
            g: &mut g,
            wild: 0.0,
            dur: 1_000_000_000,
            hops: 1,
            classes: 1,
            has_tcp: true,
        };
        for a in longfat_cc::CATALOGUE {
            let mut seen = std::collections::BTreeSet::new();
            for _ in 0..500 {
                if let Value::Object(m) = gen.params(a.name) {
                    seen.extend(m.keys().cloned());
                }
            }
            for p in a.params {
                assert!(
                    seen.contains(p.name),
                    "{}: params.{} is never generated",
                    a.name,
                    p.name
                );
            }
        }
    }
}
