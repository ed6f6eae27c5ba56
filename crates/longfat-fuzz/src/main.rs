//! The `longfat-fuzz` binary: a campaign (supervisor and children), replay
//! of saved inputs, and printing of generated inputs. Run it with the `fuzz`
//! profile (overflow checks and debug assertions on):
//!
//! ```text
//! cargo run -p longfat-fuzz --profile fuzz -- --inputs 1000000 --seed 1 --jobs 2 --findings DIR
//! cargo run -p longfat-fuzz --profile fuzz -- --replay FILE...     # corpus files, findings, scenarios
//! cargo run -p longfat-fuzz --profile fuzz -- --print --seed 1 --index 42
//! ```

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use longfat_fuzz::alloc::{self, CountingAlloc};
use longfat_fuzz::corpus;
use longfat_fuzz::harness::{self, Kind, Limits, Phase};
use longfat_fuzz::input::{Format, Generator, Input};
use longfat_fuzz::supervisor::{self, Config, Supervisor, GRACE};

#[global_allocator]
static ALLOC: CountingAlloc = CountingAlloc;

/// The phase of the input being replayed, for the watchdog's report.
static PHASE: AtomicUsize = AtomicUsize::new(0);
const PHASES: [Phase; 4] = [Phase::Parse, Phase::Build, Phase::Run, Phase::Summary];

const USAGE: &str = "usage:
  longfat-fuzz [--inputs N] [--seed S] [--start I] [--jobs J] [--findings DIR]
               [--max-events M] [--timeout SECS] [--cap-mib MIB] [--scenarios DIR]
               [--max-per-signature K] [--progress SECS] [--quiet]
  longfat-fuzz --replay [--json] [--timeout SECS] [--max-events M] [--cap-mib MIB] FILE...
  longfat-fuzz --print --seed S --index I [--scenarios DIR]";

fn fail(msg: &str) -> ! {
    eprintln!("longfat-fuzz: {msg}\n{USAGE}");
    std::process::exit(2)
}

struct Args(Vec<String>);

impl Args {
    fn flag(&mut self, name: &str) -> bool {
        if let Some(p) = self.0.iter().position(|a| a == name) {
            self.0.remove(p);
            true
        } else {
            false
        }
    }
    fn value(&mut self, name: &str) -> Option<String> {
        let p = self.0.iter().position(|a| a == name)?;
        if p + 1 >= self.0.len() {
            fail(&format!("{name} needs a value"));
        }
        let v = self.0.remove(p + 1);
        self.0.remove(p);
        Some(v)
    }
    fn num<T: std::str::FromStr>(&mut self, name: &str, default: T) -> T {
        match self.value(name) {
            Some(v) => v
                .parse()
                .unwrap_or_else(|_| fail(&format!("{name}: not a number: {v}"))),
            None => default,
        }
    }
}

fn main() {
    let mut a = Args(std::env::args().skip(1).collect());
    if a.flag("--help") || a.flag("-h") {
        println!("{USAGE}");
        return;
    }
    let child = a.flag("--child");
    let replay = a.flag("--replay");
    let print = a.flag("--print");
    let json_out = a.flag("--json");
    let quiet = a.flag("--quiet");
    let defaults = Limits::default();
    let cap_bytes: usize = match a.value("--cap-bytes") {
        Some(v) => v
            .parse()
            .unwrap_or_else(|_| fail("--cap-bytes: not a number")),
        None => a.num("--cap-mib", (defaults.mem_cap >> 20) as u64) as usize * (1 << 20),
    };
    let limits = Limits {
        max_events: a.num("--max-events", defaults.max_events),
        time_limit: Duration::from_secs_f64(a.num("--timeout", defaults.time_limit.as_secs_f64())),
        mem_cap: cap_bytes,
    };
    let jobs_default = std::thread::available_parallelism().map_or(1, |n| n.get() as u64);
    let cfg = Config {
        seed: a.num("--seed", 1),
        inputs: a.num("--inputs", 10_000),
        start: a.num("--start", 0),
        jobs: a.num("--jobs", jobs_default).max(1),
        findings: a
            .value("--findings")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("fuzz-findings")),
        limits,
        scenarios: a
            .value("--scenarios")
            .map(PathBuf::from)
            .unwrap_or_else(Generator::default_scenarios_dir),
        max_per_signature: a.num("--max-per-signature", 10),
        progress_every: Duration::from_secs_f64(a.num("--progress", 10.0)),
        quiet,
    };

    if child {
        let shard = a.num("--shard", 0u64);
        let from = a.num("--from", shard);
        let state = a
            .value("--state")
            .map(PathBuf::from)
            .unwrap_or_else(|| fail("--child needs --state"));
        alloc::set_cap(cfg.limits.mem_cap);
        if let Err(e) = supervisor::child_main(&cfg, shard, from, &state) {
            eprintln!("longfat-fuzz child: {e}");
            std::process::exit(1);
        }
        return;
    }

    if print {
        let index = a.num("--index", 0u64);
        let gen = Generator::new(&cfg.scenarios).unwrap_or_else(|e| fail(&e));
        let input = gen.input(cfg.seed, index);
        if input.format == Format::Toml {
            println!(
                "# source: {} (seed {}, index {index})",
                input.source, cfg.seed
            );
        } else {
            eprintln!(
                "source: {} (seed {}, index {index}), {}",
                input.source,
                cfg.seed,
                input.format.ext()
            );
        }
        println!("{}", input.text);
        return;
    }

    if replay {
        let files: Vec<String> = a.0.drain(..).collect();
        if files.is_empty() {
            fail("--replay needs files");
        }
        std::process::exit(replay_files(&files, &cfg.limits, json_out));
    }

    if let Some(extra) = a.0.first() {
        fail(&format!("unknown argument {extra}"));
    }
    eprintln!(
        "longfat-fuzz: {} inputs from seed {} on {} jobs; findings in {}",
        cfg.inputs - cfg.start.min(cfg.inputs),
        cfg.seed,
        cfg.jobs,
        cfg.findings.display()
    );
    let sup = Supervisor::new(cfg.clone()).unwrap_or_else(|e| fail(&e));
    let summary = sup.run();
    println!("{}", supervisor::report(&summary, &cfg));
    println!("SUMMARY {}", summary.to_json());
    std::process::exit(if summary.failures() > 0 { 1 } else { 0 });
}

/// Loads a replayable file: a corpus case (.toml/.json with a header), a
/// findings file (JSON with "outcome" and "input"), or a scenario file.
fn load(path: &str) -> Result<corpus::Case, String> {
    let p = std::path::Path::new(path);
    if p.extension().is_some_and(|e| e == "json") {
        let text = std::fs::read_to_string(p).map_err(|e| format!("{path}: {e}"))?;
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
            if let (Some(input), Some(_)) =
                (v.get("input").and_then(|x| x.as_str()), v.get("outcome"))
            {
                let format = if v.get("format").and_then(|f| f.as_str()) == Some("toml") {
                    Format::Toml
                } else {
                    Format::Json
                };
                let source = v
                    .get("source")
                    .and_then(|s| s.as_str())
                    .unwrap_or(path)
                    .to_string();
                return Ok(corpus::Case {
                    path: p.to_path_buf(),
                    source: source.clone(),
                    expect: corpus::Expect::Any,
                    within_estimate: false,
                    input: Input {
                        text: input.to_string(),
                        format,
                        source,
                    },
                });
            }
        }
    }
    corpus::load_case(p)
}

/// Runs each file in this process, with a watchdog that reports HANG and
/// exits if one input overruns. Exit code 0: all passed; 1: a failure or an
/// unmet expectation; 3: a hang.
fn replay_files(files: &[String], limits: &Limits, json_out: bool) -> i32 {
    alloc::set_cap(limits.mem_cap);
    let current: Arc<Mutex<Option<(Instant, String)>>> = Arc::new(Mutex::new(None));
    {
        let current = Arc::clone(&current);
        let deadline = limits.time_limit + GRACE;
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(100));
            let guard = current.lock().unwrap();
            if let Some((t0, name)) = guard.as_ref() {
                if t0.elapsed() > deadline {
                    // An allocation refused for the cap, and the abort still
                    // under way (printing a backtrace can take long): MEMORY.
                    let (kind, message) = if alloc::refused() > 0 {
                        (
                            "MEMORY",
                            format!(
                                "{} (still aborting after {:.0}s)",
                                alloc::CAP_MARKER,
                                deadline.as_secs_f64()
                            ),
                        )
                    } else {
                        (
                            "HANG",
                            format!("no result after {:.0}s (watchdog)", deadline.as_secs_f64()),
                        )
                    };
                    let phase = PHASES[PHASE.load(Ordering::Relaxed)].name();
                    let v = serde_json::json!({"file": name, "kind": kind, "phase": phase, "message": message, "ok": false});
                    println!("{v}");
                    std::process::exit(3);
                }
            }
        });
    }
    let mut code = 0;
    for f in files {
        let case = match load(f) {
            Ok(x) => x,
            Err(e) => {
                eprintln!("{e}");
                code = 1;
                continue;
            }
        };
        *current.lock().unwrap() = Some((Instant::now(), f.clone()));
        if json_out {
            // Tells a parent which file was running if the process dies.
            eprintln!("longfat-fuzz: replaying {f}");
        }
        let o = harness::run_input(&case.input, limits, &mut |p: Phase| {
            PHASE.store(
                PHASES.iter().position(|q| *q == p).unwrap_or(0),
                Ordering::Relaxed,
            );
            if json_out {
                // Tells a parent the phase if the process dies.
                eprintln!("longfat-fuzz: phase {}", p.name());
            }
        });
        *current.lock().unwrap() = None;
        let verdict = corpus::check(&case, &o);
        if verdict.is_err() {
            code = 1;
        }
        if json_out {
            let mut v = o.to_json();
            v["file"] = serde_json::json!(f);
            v["ok"] = serde_json::json!(verdict.is_ok());
            v["verdict"] = serde_json::json!(verdict.err().unwrap_or_default());
            println!("{v}");
        } else {
            let mark = match &verdict {
                Ok(()) => "ok  ",
                Err(_) => "FAIL",
            };
            println!("{mark} {f}: {}", o.describe());
            if let Err(why) = verdict {
                if o.kind != Kind::Accepted || why.starts_with("expected") {
                    println!("     {why}");
                }
            }
        }
    }
    code
}
