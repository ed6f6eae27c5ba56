//! The loader without Python: `cargo run -p longfat-kernel --example programs -- load ltcp`
//! (`list`, `load NAME...`, `unload NAME...`, `status`).

use longfat_kernel::programs;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (cmd, names) = args
        .split_first()
        .map(|(c, n)| (c.as_str(), n))
        .unwrap_or(("status", &[]));
    let log_dir = std::env::temp_dir().join("longfat-kernel");
    let result = match cmd {
        "list" => {
            for b in programs::built() {
                println!("{}\t{}", b.algo, b.ca_name);
            }
            if let Some(r) = programs::not_built_reason() {
                println!("(BPF programs not built: {r})");
            }
            Ok(())
        }
        "load" => programs::load(names, &log_dir)
            .map(|d| d.iter().for_each(|(n, o)| println!("{n}: {}", o.as_str()))),
        "unload" => programs::unload(names)
            .map(|d| d.iter().for_each(|(n, o)| println!("{n}: {}", o.as_str()))),
        "status" => programs::status().map(|s| {
            for a in &s.algos {
                println!(
                    "{}\t{}\tregistered={}\tpinned={}",
                    a.algo, a.ca_name, a.registered, a.pinned
                );
            }
            println!("available: {}", s.available.join(" "));
        }),
        other => Err(programs::Error(format!(
            "unknown command {other:?}: allowed are list, load, unload, status"
        ))),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
