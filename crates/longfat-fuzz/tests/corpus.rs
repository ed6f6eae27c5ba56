//! The regression corpus and a short seeded campaign, replayed by CI on
//! every run.
//!
//! * `corpus_replay`: every tests/corpus/*.toml|*.json (not the
//!   subdirectories, which belong to other tools) through the harness. Each
//!   case runs in its own `longfat-fuzz --replay` process (the harness inside
//!   it is in-process: `catch_unwind`, a wall-time watchdog, and the counting
//!   allocator's memory cap, whose abort must not take the other cases down).
//!   A case fails on PANIC, HANG, MEMORY, GROWTH or BADERROR, or when it
//!   violates its `# expect:` line. Set LONGFAT_CORPUS_INPROCESS=1 to run the
//!   cases in this test process instead (for a debugger; a memory-cap abort
//!   then ends the test run).
//! * `short_campaign`: 3,000 generated inputs from a fixed seed, sharded over
//!   two child processes by the `longfat-fuzz` supervisor; fails on any
//!   PANIC, HANG, MEMORY or BADERROR.
//!
//! Environment: LONGFAT_CORPUS_TIMEOUT (seconds per case, default 10),
//! LONGFAT_CAMPAIGN_INPUTS (default 3000).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use longfat_fuzz::alloc::CountingAlloc;
use longfat_fuzz::corpus::{self, Case};
use longfat_fuzz::harness::{self, Kind, Limits, Outcome, Phase};
use longfat_fuzz::supervisor::{classify_crash, GRACE};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

const BIN: &str = env!("CARGO_BIN_EXE_longfat-fuzz");

fn env_num<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn limits() -> Limits {
    Limits {
        time_limit: Duration::from_secs_f64(env_num("LONGFAT_CORPUS_TIMEOUT", 10.0)),
        ..Limits::default()
    }
}

/// Runs one case in a `longfat-fuzz --replay --json` process.
fn replay_in_child(case: &Case, limits: &Limits, scratch: &Path) -> Outcome {
    let stem = case
        .name()
        .replace(|c: char| !c.is_ascii_alphanumeric(), "_");
    let out_path = scratch.join(format!("{stem}.stdout"));
    let err_path = scratch.join(format!("{stem}.stderr"));
    let mut child = Command::new(BIN)
        .arg("--replay")
        .arg("--json")
        .args(["--timeout", &limits.time_limit.as_secs_f64().to_string()])
        .args(["--max-events", &limits.max_events.to_string()])
        .args(["--cap-bytes", &limits.mem_cap.to_string()])
        .arg(&case.path)
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out_path).expect("stdout file"))
        .stderr(std::fs::File::create(&err_path).expect("stderr file"))
        .spawn()
        .expect("spawn longfat-fuzz");
    // The child's watchdog reports HANG at the limit plus a grace period;
    // this is the backstop should the child itself be stuck.
    let deadline = Instant::now() + limits.time_limit + GRACE + Duration::from_secs(10);
    let status = loop {
        match child.try_wait().expect("wait") {
            Some(s) => break Some(s),
            None if Instant::now() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            None => std::thread::sleep(Duration::from_millis(5)),
        }
    };
    let stdout = std::fs::read_to_string(&out_path).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    let last_phase = stderr
        .lines()
        .rev()
        .find_map(|l| l.strip_prefix("longfat-fuzz: phase "))
        .and_then(Phase::from_name)
        .unwrap_or(Phase::Parse);
    if let Some(o) = stdout
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .and_then(|v| Outcome::from_json(&v))
    {
        return o;
    }
    if status.is_none() {
        let mut o = classify_crash("", None, last_phase);
        o.kind = Kind::Hang;
        o.message = format!(
            "killed after {:.0}s without a result",
            (limits.time_limit + GRACE).as_secs_f64() + 10.0
        );
        return o;
    }
    classify_crash(&stderr, status, last_phase)
}

#[test]
fn corpus_replay() {
    let dir = corpus::default_dir();
    let files = corpus::case_files(&dir);
    assert!(!files.is_empty(), "no corpus files in {}", dir.display());
    let mut cases = vec![];
    let mut problems = vec![];
    for f in &files {
        match corpus::load_case(f) {
            Ok(c) => {
                if c.source.is_empty() {
                    problems.push(format!("{}: no `# source:` line", c.name()));
                }
                cases.push(c)
            }
            Err(e) => problems.push(e),
        }
    }
    let limits = limits();
    let inprocess = std::env::var("LONGFAT_CORPUS_INPROCESS").is_ok_and(|v| v == "1");
    let scratch = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("corpus-replay");
    std::fs::create_dir_all(&scratch).expect("scratch dir");
    let t0 = Instant::now();
    let results: Vec<(String, Outcome, Result<(), String>)> = if inprocess {
        longfat_fuzz::alloc::set_cap(limits.mem_cap);
        cases
            .iter()
            .map(|c| {
                let o = harness::run_input(&c.input, &limits, &mut |_| {});
                let v = corpus::check(c, &o);
                (c.name(), o, v)
            })
            .collect()
    } else {
        // Two cases at a time, each in its own process.
        let queue = Arc::new(Mutex::new(
            cases.clone().into_iter().enumerate().collect::<Vec<_>>(),
        ));
        let out = Arc::new(Mutex::new(vec![]));
        let workers: Vec<_> = (0..2)
            .map(|_| {
                let (queue, out, limits, scratch) = (
                    Arc::clone(&queue),
                    Arc::clone(&out),
                    limits.clone(),
                    scratch.clone(),
                );
                std::thread::spawn(move || loop {
                    let Some((i, c)) = queue.lock().unwrap().pop() else {
                        return;
                    };
                    let o = replay_in_child(&c, &limits, &scratch);
                    let v = corpus::check(&c, &o);
                    out.lock().unwrap().push((i, c.name(), o, v));
                })
            })
            .collect();
        for w in workers {
            w.join().expect("worker");
        }
        let mut r = std::mem::take(&mut *out.lock().unwrap());
        r.sort_by_key(|x| x.0);
        r.into_iter().map(|(_, n, o, v)| (n, o, v)).collect()
    };
    let mut report = String::new();
    for (name, o, v) in &results {
        let mark = if v.is_ok() { "ok  " } else { "FAIL" };
        report.push_str(&format!("{mark} {name}: {}\n", o.describe()));
        if let Err(why) = v {
            if !why.starts_with(&o.describe()) {
                report.push_str(&format!("       {why}\n"));
            }
            problems.push(format!("{name}: {why}"));
        }
    }
    eprintln!(
        "corpus: {} cases in {:.1}s\n{report}",
        results.len(),
        t0.elapsed().as_secs_f64()
    );
    assert!(
        problems.is_empty(),
        "{} of {} corpus cases failed:\n  {}",
        problems.len(),
        cases.len(),
        problems.join("\n  ")
    );
}

#[test]
fn short_campaign() {
    let inputs: u64 = env_num("LONGFAT_CAMPAIGN_INPUTS", 3000);
    let findings = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("campaign-findings");
    let _ = std::fs::remove_dir_all(&findings);
    let t0 = Instant::now();
    let out = Command::new(BIN)
        .args(["--inputs", &inputs.to_string()])
        .args(["--seed", "20251123"])
        .args(["--jobs", "2"])
        .args(["--max-events", "20000"])
        .args(["--timeout", &limits().time_limit.as_secs_f64().to_string()])
        .arg("--findings")
        .arg(&findings)
        .arg("--quiet")
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .output()
        .expect("run longfat-fuzz");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let summary = stdout
        .lines()
        .find_map(|l| l.strip_prefix("SUMMARY "))
        .and_then(|s| serde_json::from_str::<serde_json::Value>(s).ok())
        .unwrap_or_else(|| {
            panic!(
                "no SUMMARY line; stdout:\n{stdout}\nstderr:\n{}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
    eprintln!(
        "campaign of {inputs} inputs in {:.1}s\n{stdout}",
        t0.elapsed().as_secs_f64()
    );
    assert_eq!(
        summary["inputs"].as_u64(),
        Some(inputs),
        "not every input was run"
    );
    let n = |k: Kind| summary["outcomes"][k.name()].as_u64().unwrap_or(0);
    let failures: Vec<String> = Kind::ALL
        .iter()
        .filter(|k| k.is_failure() && n(**k) > 0)
        .map(|k| format!("{} {}", n(*k), k.name()))
        .collect();
    assert!(
        failures.is_empty(),
        "the seeded campaign found {} (inputs saved in {}; replay with `longfat-fuzz --replay FILE`)",
        failures.join(", "),
        findings.display()
    );
    // The run path must be exercised: a good share of inputs is accepted.
    let accepted: u64 = Kind::ALL
        .iter()
        .filter(|k| k.was_accepted())
        .map(|k| n(*k))
        .sum();
    assert!(
        accepted * 100 >= inputs * 30,
        "only {accepted} of {inputs} inputs were accepted (want >= 30 %)"
    );
}
