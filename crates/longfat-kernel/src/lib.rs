//! longfat on real Linux TCP.
//!
//! - The congestion-control algorithms of `kernel/` (C, one file per
//!   algorithm) built as BPF `struct_ops` programs and registered with the
//!   kernel as `longfat_<name>`; the same C logic built as a userspace
//!   library for the differential tests against `longfat-cc`.
//! - The namespace testbed's userspace delay line.

pub mod delayline;
pub mod programs;
pub mod userspace;
