//! Running one input: parse, validate and build, then a bounded run, and
//! the classification of what happened.
//!
//! * refused: a `ScenarioError` with a non-empty field (or, from the parser,
//!   a whole-document error such as a syntax error or a missing top-level
//!   table, whose field is empty);
//! * accepted: built and ran until done or `max_events` events;
//! * PANIC: a panic anywhere (caught with `catch_unwind`; message and
//!   location recorded by a panic hook);
//! * HANG: the input took longer than `time_limit` wall time (checked between
//!   run steps; a supervisor or watchdog catches inputs stuck in one step);
//! * MEMORY: live allocation above the cap (the counting allocator aborts
//!   the process; the supervisor records it, see `supervisor.rs`);
//! * GROWTH: accepted, but the live memory grew during the bounded run at a
//!   rate that, over the rest of the run, would pass the cap, and it has
//!   already passed the engine's build-time memory estimate;
//! * UNDERESTIMATE: accepted; the measured peak passed the estimate (which
//!   the engine documents as an upper bound) but no projection passes the
//!   cap;
//! * BADERROR: refused by `build` with an empty field name or message.

use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::alloc;
use crate::input::{Format, Input};
use longfat_sim::sim::RunStatus;

/// Bytes the harness may measure beyond the engine's estimate before it
/// calls the estimate wrong (the scenario text and parse tree, allocator
/// rounding).
pub const ESTIMATE_SLACK: u64 = 8 << 20;

#[derive(Clone, Debug)]
pub struct Limits {
    /// Stop a run after this many simulator events.
    pub max_events: u64,
    /// Wall time per input.
    pub time_limit: Duration,
    /// Live-allocation cap (bytes) for MEMORY and GROWTH.
    pub mem_cap: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_events: 200_000,
            time_limit: Duration::from_secs(10),
            mem_cap: 2 << 30,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    Refused,
    Accepted,
    Panic,
    Hang,
    Memory,
    Growth,
    Underestimate,
    BadError,
}

impl Kind {
    pub const ALL: [Kind; 8] = [
        Kind::Refused,
        Kind::Accepted,
        Kind::Panic,
        Kind::Hang,
        Kind::Memory,
        Kind::Growth,
        Kind::Underestimate,
        Kind::BadError,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Refused => "refused",
            Kind::Accepted => "accepted",
            Kind::Panic => "PANIC",
            Kind::Hang => "HANG",
            Kind::Memory => "MEMORY",
            Kind::Growth => "GROWTH",
            Kind::Underestimate => "UNDERESTIMATE",
            Kind::BadError => "BADERROR",
        }
    }

    pub fn from_name(s: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.name() == s)
    }

    /// Outcomes the issue forbids: a Rust panic, a hang, running out of
    /// memory, or an error that does not name its field. (GROWTH is a
    /// projection, not an observation: a finding to look at, and a failure
    /// in the regression corpus, but not in a random campaign.)
    pub fn is_failure(self) -> bool {
        matches!(
            self,
            Kind::Panic | Kind::Hang | Kind::Memory | Kind::BadError
        )
    }

    /// Failures plus GROWTH and UNDERESTIMATE: saved to the findings directory.
    pub fn is_finding(self) -> bool {
        self.is_failure() || matches!(self, Kind::Growth | Kind::Underestimate)
    }

    /// Built and ran (whatever the memory verdict).
    pub fn was_accepted(self) -> bool {
        matches!(self, Kind::Accepted | Kind::Growth | Kind::Underestimate)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    Parse,
    Build,
    Run,
    Summary,
}

impl Phase {
    pub fn name(self) -> &'static str {
        match self {
            Phase::Parse => "parse",
            Phase::Build => "build",
            Phase::Run => "run",
            Phase::Summary => "summary",
        }
    }
    pub fn from_name(s: &str) -> Option<Phase> {
        [Phase::Parse, Phase::Build, Phase::Run, Phase::Summary]
            .into_iter()
            .find(|p| p.name() == s)
    }
}

#[derive(Clone, Debug)]
pub struct Outcome {
    pub kind: Kind,
    /// Where the input ended.
    pub phase: Phase,
    /// Refused: the field the error names.
    pub field: String,
    /// Refused: the error; PANIC: the panic message; else a description.
    pub message: String,
    /// PANIC: file:line:col.
    pub location: String,
    pub events: u64,
    pub sim_ns: u64,
    pub end_ns: u64,
    pub done: bool,
    /// Peak live bytes during the input (above what was live before it).
    pub peak_bytes: u64,
    /// Accepted runs cut short: live bytes projected to the end of the run.
    pub projected_bytes: u64,
    /// Accepted: the engine's build-time memory estimate (an upper bound).
    pub estimate_bytes: u64,
    pub wall: Duration,
}

impl Outcome {
    fn new(kind: Kind, phase: Phase) -> Self {
        Self {
            kind,
            phase,
            field: String::new(),
            message: String::new(),
            location: String::new(),
            events: 0,
            sim_ns: 0,
            end_ns: 0,
            done: false,
            peak_bytes: 0,
            projected_bytes: 0,
            estimate_bytes: 0,
            wall: Duration::ZERO,
        }
    }

    pub fn to_json(&self) -> Value {
        json!({
            "kind": self.kind.name(),
            "phase": self.phase.name(),
            "field": self.field,
            "message": self.message,
            "location": self.location,
            "events": self.events,
            "sim_ns": self.sim_ns,
            "end_ns": self.end_ns,
            "done": self.done,
            "peak_bytes": self.peak_bytes,
            "projected_bytes": self.projected_bytes,
            "estimate_bytes": self.estimate_bytes,
            "wall_ms": self.wall.as_millis() as u64,
        })
    }

    pub fn from_json(v: &Value) -> Option<Self> {
        let s = |k: &str| {
            v.get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let n = |k: &str| v.get(k).and_then(Value::as_u64).unwrap_or_default();
        let mut o = Outcome::new(
            Kind::from_name(v.get("kind")?.as_str()?)?,
            Phase::from_name(&s("phase")).unwrap_or(Phase::Parse),
        );
        o.field = s("field");
        o.message = s("message");
        o.location = s("location");
        o.events = n("events");
        o.sim_ns = n("sim_ns");
        o.end_ns = n("end_ns");
        o.done = v.get("done").and_then(Value::as_bool).unwrap_or_default();
        o.peak_bytes = n("peak_bytes");
        o.projected_bytes = n("projected_bytes");
        o.estimate_bytes = n("estimate_bytes");
        o.wall = Duration::from_millis(n("wall_ms"));
        Some(o)
    }

    /// One line for humans.
    pub fn describe(&self) -> String {
        match self.kind {
            Kind::Refused | Kind::BadError => format!("{} ({}): {:?}: {}", self.kind.name(), self.phase.name(), self.field, self.message),
            Kind::Panic => format!("PANIC ({}) at {}: {}", self.phase.name(), self.location, self.message),
            Kind::Accepted | Kind::Growth | Kind::Underestimate => format!(
                "{}: {} events, {:.6}s of {:.6}s simulated{}, peak {} MB, projected {} MB, estimate {} MB{}",
                self.kind.name(),
                self.events,
                self.sim_ns as f64 / 1e9,
                self.end_ns as f64 / 1e9,
                if self.done { " (done)" } else { "" },
                self.peak_bytes >> 20,
                self.projected_bytes >> 20,
                self.estimate_bytes >> 20,
                if self.message.is_empty() { String::new() } else { format!("; {}", self.message) },
            ),
            Kind::Hang | Kind::Memory => format!("{} ({}): {}", self.kind.name(), self.phase.name(), self.message),
        }
    }
}

// ---- panic capture ------------------------------------------------------------

thread_local! {
    static CAPTURE: RefCell<Option<Option<(String, String)>>> = const { RefCell::new(None) };
}

static HOOK: Once = Once::new();

/// Installs a panic hook that, on threads inside [`run_input`], records the
/// message and location instead of printing them; elsewhere it defers to
/// the previous hook.
pub fn install_panic_hook() {
    HOOK.call_once(|| {
        let prev = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let captured = CAPTURE.with(|c| {
                let mut c = c.borrow_mut();
                match c.as_mut() {
                    Some(slot) => {
                        let msg = if let Some(s) = info.payload().downcast_ref::<&str>() {
                            (*s).to_string()
                        } else if let Some(s) = info.payload().downcast_ref::<String>() {
                            s.clone()
                        } else {
                            "(non-string panic payload)".to_string()
                        };
                        let loc = info
                            .location()
                            .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()))
                            .unwrap_or_default();
                        if slot.is_none() {
                            *slot = Some((msg, loc));
                        }
                        true
                    }
                    None => false,
                }
            });
            if !captured {
                prev(info);
            }
        }));
    });
}

fn caught<T>(f: impl FnOnce() -> T) -> Result<T, (String, String)> {
    CAPTURE.with(|c| *c.borrow_mut() = Some(None));
    let r = panic::catch_unwind(AssertUnwindSafe(f));
    let info = CAPTURE.with(|c| c.borrow_mut().take()).flatten();
    r.map_err(|_| info.unwrap_or_else(|| ("(panic message not captured)".into(), String::new())))
}

// ---- running ------------------------------------------------------------------

/// Runs one input; `on_phase` is called as each phase starts (the
/// supervisor's children record it, so a crash names its phase).
pub fn run_input(input: &Input, limits: &Limits, on_phase: &mut dyn FnMut(Phase)) -> Outcome {
    install_panic_hook();
    let t0 = Instant::now();
    let base = alloc::live_bytes();
    alloc::reset_peak();
    let mut o = run_inner(input, limits, on_phase, t0, base);
    o.wall = t0.elapsed();
    o.peak_bytes = alloc::peak_bytes().saturating_sub(base) as u64;
    if o.kind == Kind::Accepted {
        // The engine's estimate is an upper bound on the run's memory, and
        // its in-run guard stops a run whose packets pass the budget. A
        // projection over the cap is believed only once the measured peak
        // has passed the estimate (+ slack: the harness measures from before
        // parsing): growth within the bound is a transient being projected.
        let over_estimate = o.peak_bytes > o.estimate_bytes + ESTIMATE_SLACK;
        if over_estimate && o.projected_bytes > limits.mem_cap as u64 {
            o.kind = Kind::Growth;
        } else if over_estimate {
            o.kind = Kind::Underestimate;
        }
    }
    o
}

fn run_inner(
    input: &Input,
    limits: &Limits,
    on_phase: &mut dyn FnMut(Phase),
    t0: Instant,
    base: usize,
) -> Outcome {
    on_phase(Phase::Parse);
    let parsed = caught(|| match input.format {
        Format::Json => longfat_sim::Scenario::from_json(&input.text),
        Format::Toml => longfat_sim::Scenario::from_toml(&input.text),
    });
    let scenario = match parsed {
        Err((msg, loc)) => return panicked(Phase::Parse, msg, loc),
        Ok(Err(e)) => {
            // The parser's errors name the path; an empty one is allowed
            // only for errors about the whole document (its syntax).
            let named = !e.field.trim().is_empty() || whole_document_error(&e.message);
            let kind = if e.message.trim().is_empty() || !named {
                Kind::BadError
            } else {
                Kind::Refused
            };
            let mut o = Outcome::new(kind, Phase::Parse);
            o.field = e.field;
            o.message = e.message;
            return o;
        }
        Ok(Ok(s)) => s,
    };

    on_phase(Phase::Build);
    // The harness's memory cap is the run's memory budget: a run the
    // estimate lets through must then stay under the cap.
    let opts = longfat_sim::BuildOptions {
        memory_budget_bytes: limits.mem_cap as u64,
        ..Default::default()
    };
    let built = caught(|| {
        longfat_sim::build_with(&scenario, &opts, &mut || t0.elapsed() > limits.time_limit)
    });
    drop(scenario);
    let mut sim = match built {
        Err((msg, loc)) => return panicked(Phase::Build, msg, loc),
        Ok(Err(e)) if e == longfat_sim::scenario::interrupted_error() => {
            let mut o = Outcome::new(Kind::Hang, Phase::Build);
            o.message = format!(
                "set-up still running after {:.1}s (interrupted)",
                t0.elapsed().as_secs_f64()
            );
            return o;
        }
        Ok(Err(e)) => {
            // Validation errors must name the field they are about.
            let kind = if e.field.trim().is_empty() || e.message.trim().is_empty() {
                Kind::BadError
            } else {
                Kind::Refused
            };
            let mut o = Outcome::new(kind, Phase::Build);
            o.field = e.field;
            o.message = e.message;
            return o;
        }
        Ok(Ok(sim)) => sim,
    };
    if t0.elapsed() > limits.time_limit {
        let mut o = Outcome::new(Kind::Hang, Phase::Build);
        o.message = format!(
            "build took {:.1}s (limit {:.0}s)",
            t0.elapsed().as_secs_f64(),
            limits.time_limit.as_secs_f64()
        );
        return o;
    }

    on_phase(Phase::Run);
    let end_ns = sim.end_ns;
    let mut o = Outcome::new(Kind::Accepted, Phase::Run);
    o.end_ns = end_ns;
    // Live bytes at simulated times, for the growth projection.
    let mut samples: Vec<(u64, usize)> = Vec::with_capacity(256);
    // Steps of simulated time: doubled while little happens, quartered when
    // much does, never above end/1e6, so that a busy period after a long idle
    // one (a late start) cannot fall into one huge step.
    let max_step = (end_ns / 1_000_000).max(1_000);
    let ran = caught(|| {
        let mut step: u64 = 1_000;
        let mut budget = limits.max_events;
        loop {
            let hi = (budget / 8).max(1);
            let lo = budget / 64;
            let mut out_of_time = false;
            while !sim.is_done() && sim.events_processed() < budget {
                if t0.elapsed() > limits.time_limit {
                    if sim.events_processed() < limits.max_events {
                        return Err(format!(
                            "still running after {:.1}s: {} events, {:.6}s of {:.6}s simulated",
                            t0.elapsed().as_secs_f64(),
                            sim.events_processed(),
                            sim.now_ns() as f64 / 1e9,
                            end_ns as f64 / 1e9
                        ));
                    }
                    // Past the budget, confirming a projection: stop here.
                    out_of_time = true;
                    break;
                }
                let before = sim.events_processed();
                let left = budget - before;
                match sim.run_until_limited(sim.now_ns().saturating_add(step), left) {
                    RunStatus::OverBudget => {
                        return Ok(Ran::OverBudget(sim.now_ns(), sim.peak_packets_held()))
                    }
                    RunStatus::EventLimit | RunStatus::Reached => {}
                }
                let n = sim.events_processed() - before;
                if samples.len() == samples.capacity() {
                    // Keep every other sample: bounded, still spread over the run.
                    let kept: Vec<(u64, usize)> = samples.iter().copied().step_by(2).collect();
                    samples.clear();
                    samples.extend(kept);
                }
                samples.push((sim.now_ns(), alloc::live_bytes().saturating_sub(base)));
                if n < lo {
                    step = step.saturating_mul(2).min(max_step);
                } else if n > hi {
                    step = (step / 4).max(1);
                }
            }
            let live_end = alloc::live_bytes().saturating_sub(base);
            let projected = if sim.is_done() {
                0
            } else {
                project(&samples, sim.now_ns(), live_end, end_ns)
            };
            // A projection near the cap may be a start-up transient (slow
            // start fills the pipe and the queues, then stops): run on, up to
            // 128 times the budget and half the time limit, while it stays
            // above half the cap.
            if projected > limits.mem_cap as u64 / 2
                && !out_of_time
                && budget < limits.max_events.saturating_mul(128)
                && t0.elapsed() < limits.time_limit / 2
            {
                budget = budget.saturating_mul(2);
                continue;
            }
            // Growth must still be going on: live bytes rose over the later
            // half of the simulated time covered. (Containers double, so
            // linear growth raises them at least once in any such window.)
            let now = sim.now_ns();
            let at_half = samples
                .iter()
                .find(|(t, _)| *t >= now / 2)
                .map_or(live_end, |&(_, l)| l);
            let projected = if live_end > at_half {
                projected
            } else {
                live_end as u64
            };
            return Ok(Ran::Stopped {
                events: sim.events_processed(),
                now,
                done: sim.is_done(),
                projected,
            });
        }
    });
    match ran {
        Err((msg, loc)) => return panicked(Phase::Run, msg, loc),
        Ok(Err(msg)) => {
            let mut h = Outcome::new(Kind::Hang, Phase::Run);
            h.message = msg;
            h.end_ns = end_ns;
            return h;
        }
        Ok(Ok(Ran::OverBudget(now, packets))) => {
            // The engine's in-run guard stopped the run: a clean error, as
            // the front ends report it ("memory budget").
            let mut r = Outcome::new(Kind::Refused, Phase::Run);
            r.field = "memory budget".into();
            r.message = format!(
                "the run stopped at {:.6}s simulated: its links held {packets} packets",
                now as f64 / 1e9
            );
            r.events = sim.events_processed();
            r.sim_ns = now;
            r.end_ns = end_ns;
            return r;
        }
        Ok(Ok(Ran::Stopped {
            events,
            now,
            done,
            projected,
        })) => {
            o.events = events;
            o.sim_ns = now.min(end_ns);
            o.done = done;
            o.projected_bytes = projected;
        }
    }
    // The build-time estimate is an upper bound on the run's memory.
    o.estimate_bytes = sim.estimate.memory_bytes;
    if o.done {
        on_phase(Phase::Summary);
        match caught(|| sim.metrics.summary().map(|v| v.to_string().len())) {
            Err((msg, loc)) => return panicked(Phase::Summary, msg, loc),
            Ok(None) => o.message = "done but no summary".into(),
            Ok(Some(_)) => {}
        }
    }
    // Dropping can panic too (it should not).
    if let Err((msg, loc)) = caught(move || drop(sim)) {
        return panicked(Phase::Run, msg, loc);
    }
    o
}

/// Live bytes at the end of the run if they kept growing at the average
/// rate seen since they started to grow (simulated time). The average over
/// the whole growth period, not a recent window: containers grow by
/// doubling, so live bytes rise in steps with long flat stretches between.
fn project(samples: &[(u64, usize)], now: u64, live_end: usize, end_ns: u64) -> u64 {
    let Some(&(_, l0)) = samples.first() else {
        return live_end as u64;
    };
    // The last sample before live bytes first rose 64 KiB above the start.
    let Some(k) = samples.iter().position(|&(_, l)| l > l0 + (64 << 10)) else {
        return live_end as u64;
    };
    let (t_start, l_start) = samples[k.saturating_sub(1)];
    if now <= t_start || live_end <= l_start {
        return live_end as u64;
    }
    let rate = (live_end - l_start) as f64 / (now - t_start) as f64;
    let projected = live_end as f64 + rate * end_ns.saturating_sub(now) as f64;
    projected.min(u64::MAX as f64) as u64
}

/// A parse error that is about the whole document, not one field: syntax.
pub fn whole_document_error(message: &str) -> bool {
    const SYNTAX: &[&str] = &[
        "TOML syntax",
        "EOF while parsing",
        "expected value",
        "trailing characters",
        "key must be a string",
        "expected `,` or",
        "expected `:`",
        "invalid escape",
        "control character",
        "recursion limit exceeded",
        "lone leading surrogate",
        "invalid unicode code point",
        "expected ident",
        "invalid number",
        "unexpected end of hex escape",
    ];
    SYNTAX.iter().any(|p| message.contains(p))
}

/// How the bounded run ended.
enum Ran {
    Stopped {
        events: u64,
        now: u64,
        done: bool,
        projected: u64,
    },
    OverBudget(u64, u64),
}

fn panicked(phase: Phase, message: String, location: String) -> Outcome {
    let mut o = Outcome::new(Kind::Panic, phase);
    o.message = message;
    o.location = location;
    o
}

/// A normalized signature for grouping findings: the kind, the phase, and
/// the panic location (or message) with numbers blanked.
pub fn signature(o: &Outcome) -> String {
    let blank = |s: &str| -> String {
        let mut out = String::new();
        let mut last_digit = false;
        for c in s.chars().take(160) {
            if c.is_ascii_digit() {
                if !last_digit {
                    out.push('#');
                }
                last_digit = true;
            } else {
                out.push(c);
                last_digit = false;
            }
        }
        out
    };
    match o.kind {
        Kind::Panic => format!(
            "PANIC {} at {}: {}",
            o.phase.name(),
            o.location,
            blank(&o.message)
        ),
        Kind::BadError => format!("BADERROR {}: {}", o.phase.name(), blank(&o.message)),
        Kind::Hang => format!("HANG in {}", o.phase.name()),
        Kind::Memory => format!("MEMORY in {}", o.phase.name()),
        Kind::Underestimate => "UNDERESTIMATE (peak above the build-time estimate)".to_string(),
        k => k.name().to_string(),
    }
}
