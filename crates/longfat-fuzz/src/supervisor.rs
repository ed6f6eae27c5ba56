//! The campaign: a supervisor shards input indices over J child processes
//! of the same binary and survives their deaths.
//!
//! Child `j` runs the indices i = j, j + J, j + 2J, ... from a start index.
//! Before each input (and at each phase of it) it writes "<index> <phase>"
//! to a small state file, and after each it prints one JSON line to stdout.
//! When a child dies (the counting allocator's cap abort, a stack overflow,
//! any abort or signal) the supervisor reads the state file, records that
//! input as MEMORY or PANIC, saves it to the findings directory, and starts
//! a new child after it. A child that prints nothing for longer than the time
//! limit (plus a grace period) is killed and its input recorded as HANG.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::alloc::CAP_MARKER;
use crate::harness::{self, signature, Kind, Limits, Outcome, Phase};
use crate::input::Generator;

#[derive(Clone, Debug)]
pub struct Config {
    pub seed: u64,
    pub inputs: u64,
    /// First index (to resume or split a campaign).
    pub start: u64,
    pub jobs: u64,
    pub findings: PathBuf,
    pub limits: Limits,
    pub scenarios: PathBuf,
    /// Inputs saved per distinct signature.
    pub max_per_signature: usize,
    pub progress_every: Duration,
    pub quiet: bool,
}

/// Extra time past the time limit before a silent child is killed (the
/// child's own check between run steps reports HANG at the limit).
pub const GRACE: Duration = Duration::from_secs(2);

// ---- the child ----------------------------------------------------------------

/// The state file: fixed-width "<index> <phase>" at offset 0.
pub struct StateFile(std::fs::File);

impl StateFile {
    pub fn create(path: &Path) -> std::io::Result<Self> {
        Ok(Self(
            std::fs::OpenOptions::new()
                .create(true)
                .write(true)
                .truncate(true)
                .open(path)?,
        ))
    }
    pub fn set(&self, index: u64, phase: &str) {
        let mut buf = [b' '; 32];
        buf[31] = b'\n';
        let s = format!("{index} {phase}");
        let n = s.len().min(31);
        buf[..n].copy_from_slice(&s.as_bytes()[..n]);
        let _ = self.0.write_at(&buf, 0);
    }
}

pub fn read_state(path: &Path) -> Option<(u64, String)> {
    let s = std::fs::read_to_string(path).ok()?;
    let mut it = s.split_whitespace();
    let i = it.next()?.parse().ok()?;
    Some((i, it.next().unwrap_or("").to_string()))
}

/// The child's loop (`--child`): inputs `from, from + jobs, ...` below `inputs`.
pub fn child_main(cfg: &Config, shard: u64, from: u64, state: &Path) -> std::io::Result<()> {
    let gen = Generator::new(&cfg.scenarios).map_err(std::io::Error::other)?;
    let st = StateFile::create(state)?;
    let stdout = std::io::stdout();
    let mut i = from;
    debug_assert_eq!(from % cfg.jobs, shard % cfg.jobs);
    while i < cfg.inputs {
        st.set(i, "gen");
        let input = gen.input(cfg.seed, i);
        let o = harness::run_input(&input, &cfg.limits, &mut |p: Phase| st.set(i, p.name()));
        let line = if o.kind.is_finding() {
            json!({"i": i, "src": input.source, "o": o.to_json()})
        } else if o.kind == Kind::Refused {
            json!({"i": i, "src": input.source, "k": o.kind.name(), "f": o.field, "ph": o.phase.name()})
        } else {
            json!({"i": i, "src": input.source, "k": o.kind.name(), "ev": o.events, "done": o.done})
        };
        let mut out = stdout.lock();
        writeln!(out, "{line}")?;
        out.flush()?;
        i += cfg.jobs;
    }
    st.set(cfg.inputs, "done");
    let mut out = stdout.lock();
    writeln!(out, "{}", json!({"shard_finished": shard}))?;
    out.flush()
}

// ---- crash classification ---------------------------------------------------

/// What a dead child's stderr and exit status say about its last input.
pub fn classify_crash(stderr: &str, status: Option<ExitStatus>, phase: Phase) -> Outcome {
    use std::os::unix::process::ExitStatusExt;
    let last_lines = |n: usize| -> String {
        let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
        lines[lines.len().saturating_sub(n)..].join(" | ")
    };
    let signal = status.and_then(|s| s.signal());
    let status_text = match (status, signal) {
        (_, Some(sig)) => format!("killed by signal {sig}"),
        (Some(s), None) => format!("exited with {s}"),
        (None, None) => "unknown exit".into(),
    };
    let (kind, message, location) = if let Some(l) = stderr
        .lines()
        .find(|l| l.contains(CAP_MARKER) || l.contains("memory allocation of"))
    {
        (
            Kind::Memory,
            format!("{} ({status_text})", l.trim()),
            String::new(),
        )
    } else if stderr.contains("has overflowed its stack") {
        (
            Kind::Panic,
            format!("stack overflow ({status_text})"),
            "stack overflow".to_string(),
        )
    } else if signal == Some(9) {
        (
            Kind::Memory,
            format!("{status_text}: the kernel's OOM killer?"),
            String::new(),
        )
    } else {
        // A panic that escaped (panic in a panic hook, abort in drop, ...).
        let loc = stderr
            .lines()
            .find_map(|l| {
                l.split("panicked at ")
                    .nth(1)
                    .map(|r| r.trim_end_matches(':').to_string())
            })
            .unwrap_or_default();
        (
            Kind::Panic,
            format!("process died, {status_text}: {}", last_lines(3)),
            loc,
        )
    };
    let mut o = Outcome::from_json(&json!({"kind": kind.name(), "phase": phase.name()}))
        .expect("valid outcome");
    o.message = message;
    o.location = location;
    o
}

// ---- the supervisor -----------------------------------------------------------

enum Msg {
    Line(u64, u64, String),
    Eof(u64, u64),
}

struct Slot {
    shard: u64,
    gen: u64,
    child: Option<Child>,
    last_progress: Instant,
    last_reported: Option<u64>,
    finished: bool,
    state: PathBuf,
    stderr: PathBuf,
}

#[derive(Clone, Debug, Default)]
pub struct SigInfo {
    pub count: u64,
    pub first_index: u64,
    pub example: String,
    pub files: Vec<PathBuf>,
}

#[derive(Clone, Debug, Default)]
pub struct Summary {
    /// (source group, outcome) -> count.
    pub counts: BTreeMap<(String, Kind), u64>,
    pub signatures: BTreeMap<String, SigInfo>,
    pub refused_fields: BTreeMap<String, u64>,
    pub inputs_done: u64,
    pub wall: Duration,
}

impl Summary {
    pub fn total(&self, k: Kind) -> u64 {
        self.counts
            .iter()
            .filter(|((_, kk), _)| *kk == k)
            .map(|(_, n)| n)
            .sum()
    }
    pub fn failures(&self) -> u64 {
        Kind::ALL
            .iter()
            .filter(|k| k.is_failure())
            .map(|k| self.total(*k))
            .sum()
    }
    pub fn to_json(&self) -> Value {
        let by_kind: BTreeMap<&str, u64> = Kind::ALL
            .iter()
            .map(|k| (k.name(), self.total(*k)))
            .collect();
        let sigs: Vec<Value> = self
            .signatures
            .iter()
            .map(|(s, i)| json!({"signature": s, "count": i.count, "first_index": i.first_index, "example": i.example, "files": i.files}))
            .collect();
        let mut by_source: BTreeMap<&str, BTreeMap<&str, u64>> = BTreeMap::new();
        for ((g, k), n) in &self.counts {
            *by_source
                .entry(g.as_str())
                .or_default()
                .entry(k.name())
                .or_default() += n;
        }
        json!({
            "inputs": self.inputs_done,
            "wall_s": self.wall.as_secs_f64(),
            "outcomes": by_kind,
            "by_source": by_source,
            "refused_fields": self.refused_fields,
            "signatures": sigs,
        })
    }
}

/// Groups per-file mutation sources under their file; keeps others.
fn source_group(src: &str) -> String {
    src.to_string()
}

/// "flows[3].tcp.rwnd" -> "flows[].tcp.rwnd"
fn field_group(f: &str) -> String {
    let mut out = String::new();
    let mut in_idx = false;
    for c in f.chars() {
        match c {
            '[' => {
                in_idx = true;
                out.push('[');
            }
            ']' => {
                in_idx = false;
                out.push(']');
            }
            _ if in_idx => {}
            _ => out.push(c),
        }
    }
    if out.is_empty() {
        "(document)".into()
    } else {
        out
    }
}

pub struct Supervisor {
    cfg: Config,
    gen: Generator,
    exe: PathBuf,
    work: PathBuf,
    summary: Summary,
    tx: mpsc::Sender<Msg>,
    rx: mpsc::Receiver<Msg>,
    slots: Vec<Slot>,
}

impl Supervisor {
    pub fn new(cfg: Config) -> Result<Self, String> {
        let gen = Generator::new(&cfg.scenarios)?;
        std::fs::create_dir_all(&cfg.findings)
            .map_err(|e| format!("{}: {e}", cfg.findings.display()))?;
        let work = cfg.findings.join(format!(".work-{}", std::process::id()));
        std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let (tx, rx) = mpsc::channel();
        Ok(Self {
            cfg,
            gen,
            exe,
            work,
            summary: Summary::default(),
            tx,
            rx,
            slots: vec![],
        })
    }

    fn spawn(&mut self, shard: u64, from: u64) {
        let slot_idx = shard as usize;
        let gen_no = self.slots.get(slot_idx).map_or(0, |s| s.gen + 1);
        let state = self.work.join(format!("child-{shard}.state"));
        let stderr = self.work.join(format!("child-{shard}.stderr"));
        let l = &self.cfg.limits;
        let err_file = std::fs::File::create(&stderr).expect("stderr file");
        let mut child = Command::new(&self.exe)
            .arg("--child")
            .args(["--seed", &self.cfg.seed.to_string()])
            .args(["--inputs", &self.cfg.inputs.to_string()])
            .args(["--jobs", &self.cfg.jobs.to_string()])
            .args(["--shard", &shard.to_string()])
            .args(["--from", &from.to_string()])
            .args(["--max-events", &l.max_events.to_string()])
            .args(["--timeout", &l.time_limit.as_secs_f64().to_string()])
            .args(["--cap-bytes", &l.mem_cap.to_string()])
            .arg("--scenarios")
            .arg(&self.cfg.scenarios)
            .arg("--state")
            .arg(&state)
            // A backtrace on abort can take seconds to symbolize.
            .env("RUST_BACKTRACE", "0")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(err_file))
            .spawn()
            .expect("spawn child");
        let out = child.stdout.take().expect("piped");
        let tx = self.tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                match line {
                    Ok(l) => {
                        if tx.send(Msg::Line(shard, gen_no, l)).is_err() {
                            return;
                        }
                    }
                    Err(_) => break,
                }
            }
            let _ = tx.send(Msg::Eof(shard, gen_no));
        });
        let slot = Slot {
            shard,
            gen: gen_no,
            child: Some(child),
            last_progress: Instant::now(),
            last_reported: None,
            finished: false,
            state,
            stderr,
        };
        if slot_idx < self.slots.len() {
            self.slots[slot_idx] = slot;
        } else {
            self.slots.push(slot);
        }
    }

    fn record(&mut self, index: u64, source: &str, o: &Outcome) {
        self.summary.inputs_done += 1;
        *self
            .summary
            .counts
            .entry((source_group(source), o.kind))
            .or_default() += 1;
        if o.kind == Kind::Refused {
            *self
                .summary
                .refused_fields
                .entry(field_group(&o.field))
                .or_default() += 1;
        }
        if !o.kind.is_finding() {
            return;
        }
        let sig = signature(o);
        let info = self.summary.signatures.entry(sig.clone()).or_default();
        info.count += 1;
        if info.count == 1 {
            info.first_index = index;
            info.example = o.describe();
        }
        if info.files.len() < self.cfg.max_per_signature {
            let input = self.gen.input(self.cfg.seed, index);
            let path = self.cfg.findings.join(format!(
                "{}-{}-{}.json",
                o.kind.name(),
                self.cfg.seed,
                index
            ));
            let doc = json!({
                "outcome": o.kind.name(),
                "seed": self.cfg.seed,
                "index": index,
                "source": input.source,
                "format": input.format.ext(),
                "signature": sig,
                "phase": o.phase.name(),
                "field": o.field,
                "message": o.message,
                "location": o.location,
                "detail": o.to_json(),
                "input": input.text,
            });
            if std::fs::write(
                &path,
                serde_json::to_string_pretty(&doc).unwrap_or_default(),
            )
            .is_ok()
            {
                info.files.push(path);
            }
        }
        if !self.cfg.quiet {
            let info = &self.summary.signatures[&sig];
            if info.count == 1 {
                eprintln!("new finding at input {index} ({source}): {}", o.describe());
            }
        }
    }

    /// The child in `slot` died or hung on the input its state file names.
    fn child_lost(&mut self, slot_idx: usize, hung: bool) {
        let shard = self.slots[slot_idx].shard;
        let mut status = None;
        if let Some(mut c) = self.slots[slot_idx].child.take() {
            if hung {
                let _ = c.kill();
            }
            status = c.wait().ok();
        }
        let state = read_state(&self.slots[slot_idx].state);
        let last = self.slots[slot_idx].last_reported;
        let (index, phase) = match state {
            Some((i, p)) => (i, p),
            None => (last.map_or(shard, |l| l + self.cfg.jobs), "gen".to_string()),
        };
        let next = index + self.cfg.jobs;
        if index >= self.cfg.inputs {
            self.slots[slot_idx].finished = true;
            return;
        }
        if last.is_some_and(|l| l >= index) {
            // It died between inputs: nothing to record; go on after it.
            if next < self.cfg.inputs {
                self.spawn(shard, next);
            } else {
                self.slots[slot_idx].finished = true;
            }
            return;
        }
        let phase = Phase::from_name(&phase).unwrap_or(Phase::Parse);
        let stderr_text = String::from_utf8_lossy(
            &std::fs::read(&self.slots[slot_idx].stderr).unwrap_or_default(),
        )
        .into_owned();
        let o = if hung && !stderr_text.contains(CAP_MARKER) {
            let mut o = classify_crash("", None, phase);
            o.kind = Kind::Hang;
            o.message = format!(
                "no progress for {:.0}s in {} (child killed)",
                (self.cfg.limits.time_limit + GRACE).as_secs_f64(),
                phase.name()
            );
            o.location.clear();
            o
        } else {
            classify_crash(&stderr_text, status, phase)
        };
        let source = self.gen.input(self.cfg.seed, index).source;
        self.record(index, &source, &o);
        if next < self.cfg.inputs {
            self.spawn(shard, next);
        } else {
            self.slots[slot_idx].finished = true;
        }
    }

    fn handle_line(&mut self, slot_idx: usize, line: &str) {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            return;
        };
        if v.get("shard_finished").is_some() {
            self.slots[slot_idx].finished = true;
            return;
        }
        let Some(i) = v.get("i").and_then(Value::as_u64) else {
            return;
        };
        let src = v
            .get("src")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_string();
        let o = if let Some(o) = v.get("o").and_then(Outcome::from_json) {
            o
        } else {
            let k = v
                .get("k")
                .and_then(Value::as_str)
                .and_then(Kind::from_name)
                .unwrap_or(Kind::Accepted);
            let mut o = Outcome::from_json(&json!({"kind": k.name(), "phase": v.get("ph").and_then(Value::as_str).unwrap_or("run")}))
                .expect("valid outcome");
            o.field = v
                .get("f")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            o
        };
        self.slots[slot_idx].last_reported = Some(i);
        self.slots[slot_idx].last_progress = Instant::now();
        self.record(i, &src, &o);
    }

    fn progress_line(&self, t0: Instant) -> String {
        let done = self.summary.inputs_done;
        let secs = t0.elapsed().as_secs_f64();
        let acc: u64 = Kind::ALL
            .iter()
            .filter(|k| k.was_accepted())
            .map(|k| self.summary.total(*k))
            .sum();
        format!(
            "[{:>6.0}s] {done}/{} inputs, {:.0} inputs/s, accepted {:.1}% | PANIC {} HANG {} MEMORY {} GROWTH {} UNDERESTIMATE {} BADERROR {}",
            secs,
            self.cfg.inputs - self.cfg.start.min(self.cfg.inputs),
            done as f64 / secs.max(1e-9),
            100.0 * acc as f64 / done.max(1) as f64,
            self.summary.total(Kind::Panic),
            self.summary.total(Kind::Hang),
            self.summary.total(Kind::Memory),
            self.summary.total(Kind::Growth),
            self.summary.total(Kind::Underestimate),
            self.summary.total(Kind::BadError),
        )
    }

    pub fn run(mut self) -> Summary {
        let t0 = Instant::now();
        let jobs = self.cfg.jobs.max(1);
        self.cfg.jobs = jobs;
        for shard in 0..jobs {
            // The first index >= start in this shard.
            let s = self.cfg.start;
            let from = s + (shard + jobs - s % jobs) % jobs;
            if from < self.cfg.inputs {
                self.spawn(shard, from);
            } else {
                self.spawn_finished(shard);
            }
        }
        let mut last_print = Instant::now();
        let hang_after = self.cfg.limits.time_limit + GRACE;
        while self.slots.iter().any(|s| !s.finished || s.child.is_some()) {
            match self.rx.recv_timeout(Duration::from_millis(200)) {
                Ok(Msg::Line(shard, gen, line)) => {
                    let si = shard as usize;
                    if self.slots[si].gen == gen {
                        self.handle_line(si, &line);
                    }
                }
                Ok(Msg::Eof(shard, gen)) => {
                    let si = shard as usize;
                    if self.slots[si].gen == gen {
                        if self.slots[si].finished {
                            if let Some(mut c) = self.slots[si].child.take() {
                                let _ = c.wait();
                            }
                        } else {
                            self.child_lost(si, false);
                        }
                    }
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            for si in 0..self.slots.len() {
                let s = &self.slots[si];
                if !s.finished && s.child.is_some() && s.last_progress.elapsed() > hang_after {
                    self.child_lost(si, true);
                }
            }
            if !self.cfg.quiet && last_print.elapsed() >= self.cfg.progress_every {
                eprintln!("{}", self.progress_line(t0));
                last_print = Instant::now();
            }
        }
        self.summary.wall = t0.elapsed();
        if !self.cfg.quiet {
            eprintln!("{}", self.progress_line(t0));
        }
        let _ = std::fs::remove_dir_all(&self.work);
        self.summary
    }

    fn spawn_finished(&mut self, shard: u64) {
        self.slots.push(Slot {
            shard,
            gen: 0,
            child: None,
            last_progress: Instant::now(),
            last_reported: None,
            finished: true,
            state: PathBuf::new(),
            stderr: PathBuf::new(),
        });
    }
}

/// The end-of-campaign report.
pub fn report(s: &Summary, cfg: &Config) -> String {
    let mut out = String::new();
    let kinds = Kind::ALL;
    let groups: Vec<String> = {
        let mut g: Vec<String> = s.counts.keys().map(|(g, _)| g.clone()).collect();
        g.dedup();
        g
    };
    out.push_str(&format!("{:<44} {:>9}", "source", "inputs"));
    for k in kinds {
        out.push_str(&format!(" {:>9}", k.name()));
    }
    out.push('\n');
    let mut row = |name: &str, f: &dyn Fn(Kind) -> u64| {
        let total: u64 = kinds.iter().map(|k| f(*k)).sum();
        out.push_str(&format!("{name:<44} {total:>9}"));
        for k in kinds {
            out.push_str(&format!(" {:>9}", f(k)));
        }
        out.push('\n');
    };
    for g in &groups {
        row(g, &|k| s.counts.get(&(g.clone(), k)).copied().unwrap_or(0));
    }
    let mutation = |k: Kind| {
        s.counts
            .iter()
            .filter(|((g, kk), _)| g.starts_with("mutation-of-") && *kk == k)
            .map(|(_, n)| n)
            .sum()
    };
    row("(all mutations)", &mutation);
    row("(all)", &|k| s.total(k));
    out.push_str(&format!(
        "\nseed {}, inputs {}..{}, {} jobs, max {} events, time limit {:.0}s, memory cap {} MiB\n",
        cfg.seed,
        cfg.start,
        cfg.inputs,
        cfg.jobs,
        cfg.limits.max_events,
        cfg.limits.time_limit.as_secs_f64(),
        cfg.limits.mem_cap >> 20
    ));
    out.push_str(&format!(
        "wall time {:.1}s, {:.0} inputs/s\n",
        s.wall.as_secs_f64(),
        s.inputs_done as f64 / s.wall.as_secs_f64().max(1e-9)
    ));
    let mut fields: Vec<(&String, &u64)> = s.refused_fields.iter().collect();
    fields.sort_by_key(|f| std::cmp::Reverse(*f.1));
    out.push_str("\nrefusals by field (top 25):\n");
    for (f, n) in fields.iter().take(25) {
        out.push_str(&format!("  {n:>8}  {f}\n"));
    }
    let mut sigs: Vec<(&String, &SigInfo)> = s.signatures.iter().collect();
    sigs.sort_by_key(|s| std::cmp::Reverse(s.1.count));
    out.push_str(&format!("\ndistinct findings: {}\n", sigs.len()));
    for (sig, i) in sigs {
        out.push_str(&format!(
            "  {:>7} x {sig}\n            first: input {} ({})\n",
            i.count, i.first_index, i.example
        ));
        if let Some(f) = i.files.first() {
            out.push_str(&format!("            saved: {}\n", f.display()));
        }
    }
    out
}
