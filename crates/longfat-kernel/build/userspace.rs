//! The C algorithm logic of `kernel/algo/` as a userspace static library.
//!
//! `kernel/userspace/longfat_userspace.c` includes the same headers the BPF
//! programs include (through the generated `longfat_algos.h`, build/algos.rs)
//! and exports non-inline wrappers (`lf_us_*`) for every algorithm, declared
//! in `src/userspace.rs` from the same list. When clang-19 is on the PATH the same headers are also
//! compiled for BPF (`kernel/userspace/bpf_check.c`, `-target bpf -mcpu=v4
//! -O2`) so that a header that would not build as BPF fails here, not later
//! in the struct_ops build; the test `algorithm_headers_compile_for_bpf`
//! runs the same check and fails, rather than skips, without clang-19.
//! `kernel/userspace/glue_harness.c` builds the BPF glue itself against a
//! stand-in for the kernel's headers (`kernel/userspace/mock/`), for
//! `tests/kernel/glue_order.rs`.

use std::path::Path;
use std::process::Command;

/// `root` is `kernel/`; `out_dir` holds the generated `longfat_algos.h`.
pub fn build(root: &Path, out_dir: &Path) {
    let shim = root.join("userspace/longfat_userspace.c");
    for dir in ["include", "algo", "userspace"] {
        println!("cargo:rerun-if-changed={}", root.join(dir).display());
    }
    cc::Build::new()
        .file(&shim)
        .include(root.join("include"))
        .include(root)
        .include(out_dir)
        .flag_if_supported("-std=gnu11")
        .flag_if_supported("-Wno-unused-parameter")
        .opt_level(2)
        .compile("longfat_userspace");
    // The BPF glue against a stand-in for the kernel (tests/kernel/glue_order.rs).
    cc::Build::new()
        .file(root.join("userspace/glue_harness.c"))
        .include(root.join("userspace/mock"))
        .include(root.join("include"))
        .include(root)
        .flag_if_supported("-std=gnu11")
        .flag_if_supported("-Wno-unused-parameter")
        .opt_level(2)
        .compile("longfat_glue_harness");
    bpf_compile_check(root, out_dir);
}

fn bpf_compile_check(root: &Path, out_dir: &Path) {
    let out = out_dir.join("bpf_check.o");
    let status = Command::new("clang-19")
        .args(["-target", "bpf", "-mcpu=v4", "-O2", "-g", "-Wall", "-c"])
        .arg(format!("-I{}", root.display()))
        .arg(format!("-I{}", out_dir.display()))
        .arg(root.join("userspace/bpf_check.c"))
        .arg("-o")
        .arg(&out)
        .status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => panic!(
            "kernel/userspace/bpf_check.c does not compile for BPF (clang-19 exited with {s}): \
             an algorithm header uses something BPF lacks"
        ),
        Err(_) => println!(
            "cargo:warning=clang-19 not found: the BPF compile check of kernel/algo/*.h was skipped"
        ),
    }
}
