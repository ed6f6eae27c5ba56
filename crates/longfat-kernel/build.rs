//! Builds the C algorithms of `kernel/` twice: as a userspace library (for
//! the differential tests against `longfat-cc`) and, where the toolchain and
//! the kernel's BTF allow, as BPF struct_ops objects with libbpf skeletons.
//! Both read the one list of algorithms, the directory `kernel/`
//! (`build/algos.rs`).

#[path = "build/algos.rs"]
mod algos;
#[path = "build/bpf.rs"]
mod bpf;
#[path = "build/userspace.rs"]
mod userspace;

use std::path::{Path, PathBuf};

fn main() {
    let kernel = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../kernel");
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    // A malformed algorithm is an error of the tree, not a missing tool.
    let (interface, algos) = match (algos::interface(&kernel), algos::discover(&kernel)) {
        (Ok(i), Ok(a)) => (i, a),
        (Err(e), _) | (_, Err(e)) => panic!("the kernel algorithms: {e}"),
    };
    algos::write(&out_dir, &interface, &algos);
    userspace::build(&kernel, &out_dir);
    bpf::build(&kernel, &algos);
}
