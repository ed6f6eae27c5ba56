//! The kernel path's tests, one binary (each file was its own test binary;
//! linking the crate into each cost more build time than running them).
//!
//! The two that need root and run ignored by default are picked by module:
//! `cargo test --release -p longfat-kernel --test kernel -- --ignored
//! bpf_equals_userspace::` (the BPF programs in this kernel) and `...
//! lts_kernels::` (Debian's LTS kernels under QEMU).

mod bpf_equals_userspace;
mod differential;
mod fixed_point;
mod glue_order;
mod lts_kernels;
