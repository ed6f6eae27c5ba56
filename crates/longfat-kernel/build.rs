//! Builds the C algorithms of `kernel/` twice: as a userspace library (for
//! the differential tests against `longfat-cc`) and, where the toolchain and
//! the kernel's BTF allow, as BPF struct_ops objects with libbpf skeletons.

#[path = "build/bpf.rs"]
mod bpf;
#[path = "build/userspace.rs"]
mod userspace;

fn main() {
    userspace::build();
    bpf::build();
}
