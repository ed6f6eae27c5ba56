//! The C algorithm logic of `kernel/algo/` as a userspace static library.

pub fn build() {}
