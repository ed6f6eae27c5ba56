//! The BPF struct_ops objects of `kernel/*.bpf.c` and their libbpf-rs skeletons.

pub fn build() {}
