//! The one declaration of the kernel algorithms: the directory `kernel/`.
//!
//! An algorithm is a `kernel/<name>.bpf.c` (its `#define LF_CA_NAME "..."`,
//! and `#define LF_HAS_ON_SEND` when it has `lf_<name>_on_send`) with its
//! `kernel/algo/<name>.h` (its `struct lf_<name>`, and, when it takes a
//! configuration, `struct lf_<name>_cfg` with `lf_<name>_default_cfg` and
//! `lf_<name>_init_cfg`). Everything that lists algorithms reads what
//! [`discover`] finds, through two generated files in OUT_DIR:
//!
//! - `longfat_algos.h`, for C: the algorithm headers and the X-macros
//!   `LF_FOR_EACH_ALGO(X)`, `LF_FOR_EACH_ALGO_ON_SEND(X)`,
//!   `LF_FOR_EACH_ALGO_CFG(X)`, `LF_IF_ON_SEND_<name>(code)` (the userspace
//!   shim's exports and bpf_check.c's programs), and `LF_MIRRORED_LAYOUTS`, the `case`s of the
//!   shim's `lf_us_layout` (the size and field offsets of every mirrored
//!   struct, as the C compiler lays them out);
//! - `userspace.rs`, for `src/userspace.rs`: the `#[repr(C)]` mirrors of
//!   `struct lf_ack`, `lf_loss`, `lf_rto` (kernel/include/longfat_cc.h) and
//!   of each algorithm's state and configuration, read from the C structs
//!   (fields of u8..u64, s8..s64, arrays of them, a nested `struct lf_*`);
//!   the wrappers' FFI declarations and `CAlgo` impls; `ALGOS`, the
//!   algorithms by name; the macro `for_each_kernel_algo!` for the tests;
//!   and the Rust side of the layout check in the order of the C side's.
//!
//! The BPF programs (`build/bpf.rs`) are built from the same list.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// One kernel algorithm.
pub struct Algo {
    /// Its registry name, as in longfat-cc (`ltcp`).
    pub name: String,
    /// The name the kernel registers it under (`longfat_ltcp`).
    pub ca_name: String,
    /// `kernel/<name>.bpf.c`.
    pub source: PathBuf,
    /// It defines `LF_HAS_ON_SEND`.
    pub has_on_send: bool,
    /// `struct lf_<name>_cfg`, when its header declares one.
    pub cfg: Option<CStruct>,
    /// `struct lf_<name>`.
    pub state: CStruct,
}

/// A plain C struct of the headers, as the mirrors need it.
pub struct CStruct {
    /// `lf_ltcp`
    pub name: String,
    /// Where it is declared, for the mirror's doc comment.
    pub header: String,
    /// Field name and Rust type, in declaration order.
    pub fields: Vec<(String, String)>,
}

/// Every `kernel/<name>.bpf.c` whose `kernel/algo/<name>.h` exists, by name.
pub fn discover(kernel: &Path) -> Result<Vec<Algo>, String> {
    let mut out = Vec::new();
    let entries = fs::read_dir(kernel).map_err(|e| format!("{}: {e}", kernel.display()))?;
    for entry in entries.flatten() {
        let path = entry.path();
        let Some(file) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(name) = file.strip_suffix(".bpf.c") else {
            continue;
        };
        let header = kernel.join("algo").join(format!("{name}.h"));
        if !header.exists() {
            println!("cargo:warning=kernel/{file}: kernel/algo/{name}.h is missing, not built");
            continue;
        }
        let text = read(&path)?;
        let define = |macro_name: &str| {
            text.lines()
                .find_map(|l| l.trim().strip_prefix(macro_name))
                .filter(|rest| rest.is_empty() || rest.starts_with([' ', '\t']))
                .map(str::trim)
        };
        let ca_name = define("#define LF_CA_NAME")
            .map(|v| v.trim_matches('"').to_string())
            .ok_or_else(|| format!("{}: no #define LF_CA_NAME", path.display()))?;
        // TCP_CA_NAME_MAX (include/net/tcp.h) is 16 bytes with the NUL.
        if ca_name.len() >= 16 {
            return Err(format!(
                "{}: LF_CA_NAME {ca_name:?} is longer than 15 bytes",
                path.display()
            ));
        }
        let h = read(&header)?;
        let rel = format!("kernel/algo/{name}.h");
        let state = c_struct(&h, &format!("lf_{name}"), &rel)?
            .ok_or_else(|| format!("{rel}: no struct lf_{name}"))?;
        out.push(Algo {
            name: name.to_string(),
            ca_name,
            source: path.clone(),
            has_on_send: define("#define LF_HAS_ON_SEND").is_some(),
            cfg: c_struct(&h, &format!("lf_{name}_cfg"), &rel)?,
            state,
        });
    }
    if out.is_empty() {
        return Err("no kernel/<name>.bpf.c with its kernel/algo/<name>.h".into());
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// The interface structs every algorithm takes (kernel/include/longfat_cc.h).
pub fn interface(kernel: &Path) -> Result<Vec<CStruct>, String> {
    let rel = "kernel/include/longfat_cc.h";
    let h = read(&kernel.join("include/longfat_cc.h"))?;
    ["lf_ack", "lf_loss", "lf_rto"]
        .iter()
        .map(|s| c_struct(&h, s, rel)?.ok_or_else(|| format!("{rel}: no struct {s}")))
        .collect()
}

fn read(path: &Path) -> Result<String, String> {
    println!("cargo:rerun-if-changed={}", path.display());
    fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

/// `text` without its `/* */` and `//` comments.
fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("/*") {
        out.push_str(&rest[..i]);
        rest = rest[i + 2..]
            .find("*/")
            .map_or("", |j| &rest[i + 2 + j + 2..]);
    }
    out.push_str(rest);
    out.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `struct <name> { ... };` of a header with its fields' Rust types, or None
/// when the header has no such struct. Array lengths may be a `#define` of
/// the same header.
fn c_struct(header: &str, name: &str, rel: &str) -> Result<Option<CStruct>, String> {
    let text = strip_comments(header);
    let defines: HashMap<&str, &str> = text
        .lines()
        .filter_map(|l| l.trim().strip_prefix("#define "))
        .filter_map(|d| d.split_once(char::is_whitespace))
        .map(|(k, v)| (k, v.trim()))
        .collect();
    let open = format!("struct {name} {{");
    let Some(start) = text.find(&open) else {
        return Ok(None);
    };
    let body = &text[start + open.len()..];
    let body = &body[..body
        .find("};")
        .ok_or_else(|| format!("{rel}: struct {name} has no end"))?];
    let bad = |decl: &str| {
        format!(
            "{rel}: struct {name}: cannot mirror `{decl}` in Rust \
             (build/algos.rs takes u8..u64, s8..s64, arrays of them and struct lf_*)"
        )
    };
    let mut fields = Vec::new();
    for decl in body.split(';').map(str::trim).filter(|d| !d.is_empty()) {
        let (ty, declarators) = match decl.strip_prefix("struct ") {
            Some(rest) => {
                let (s, d) = rest
                    .split_once(char::is_whitespace)
                    .ok_or_else(|| bad(decl))?;
                (s.to_string(), d)
            }
            None => {
                let (t, d) = decl
                    .split_once(char::is_whitespace)
                    .ok_or_else(|| bad(decl))?;
                let rust = match t {
                    "u8" | "u16" | "u32" | "u64" => t.to_string(),
                    "s8" | "s16" | "s32" | "s64" => t.replacen('s', "i", 1),
                    _ => return Err(bad(decl)),
                };
                (rust, d)
            }
        };
        for d in declarators.split(',').map(str::trim) {
            let (field, ty) = match d.split_once('[') {
                Some((f, len)) => {
                    let len = len.strip_suffix(']').ok_or_else(|| bad(decl))?.trim();
                    let len = defines.get(len).copied().unwrap_or(len);
                    let n: usize = len.parse().map_err(|_| bad(decl))?;
                    (f.trim(), format!("[{ty}; {n}]"))
                }
                None => (d, ty.clone()),
            };
            if field.is_empty() || !field.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(bad(decl));
            }
            fields.push((field.to_string(), ty));
        }
    }
    Ok(Some(CStruct {
        name: name.to_string(),
        header: rel.to_string(),
        fields,
    }))
}

/// Writes `OUT_DIR/longfat_algos.h` and `OUT_DIR/userspace.rs`.
pub fn write(out_dir: &Path, interface: &[CStruct], algos: &[Algo]) {
    let mirrored: Vec<&CStruct> = interface
        .iter()
        .chain(algos.iter().flat_map(|a| a.cfg.iter().chain([&a.state])))
        .collect();
    fs::write(out_dir.join("longfat_algos.h"), c_header(&mirrored, algos))
        .expect("write longfat_algos.h");
    fs::write(out_dir.join("userspace.rs"), rust_mirrors(&mirrored, algos))
        .expect("write userspace.rs");
}

fn c_header(mirrored: &[&CStruct], algos: &[Algo]) -> String {
    let mut h = String::from(
        "/* Generated by crates/longfat-kernel/build/algos.rs from kernel/<name>.bpf.c\n \
         * and kernel/algo/<name>.h: every kernel algorithm. */\n\
         #ifndef LONGFAT_ALGOS_H\n#define LONGFAT_ALGOS_H\n\n",
    );
    for a in algos {
        let _ = writeln!(h, "#include \"algo/{}.h\"", a.name);
    }
    let each = |h: &mut String, macro_name: &str, filter: &dyn Fn(&Algo) -> bool| {
        let _ = write!(h, "\n#define {macro_name}(X)");
        for a in algos.iter().filter(|a| filter(a)) {
            let _ = write!(h, " X({})", a.name);
        }
        h.push('\n');
    };
    each(&mut h, "LF_FOR_EACH_ALGO", &|_| true);
    each(&mut h, "LF_FOR_EACH_ALGO_ON_SEND", &|a| a.has_on_send);
    each(&mut h, "LF_FOR_EACH_ALGO_CFG", &|a| a.cfg.is_some());
    h.push_str("\n/* LF_IF_ON_SEND_<name>(code): the code where the algorithm has on_send. */\n");
    for a in algos {
        let then = if a.has_on_send { " __VA_ARGS__" } else { "" };
        let _ = writeln!(h, "#define LF_IF_ON_SEND_{}(...){then}", a.name);
    }
    h.push_str(
        "\n/* The cases of lf_us_layout: sizeof, then each field's offset, for the\n \
         * struct with each id (the order of userspace.rs's rust_layouts). */\n\
         #define LF_MIRRORED_LAYOUTS",
    );
    for (id, s) in mirrored.iter().enumerate() {
        let _ = write!(h, " \\\n\tcase {id}: LF_LAYOUT({}", s.name);
        for (f, _) in &s.fields {
            let _ = write!(h, ", LF_OFF({}, {f})", s.name);
        }
        h.push(')');
    }
    h.push_str("\n\n#endif\n");
    h
}

fn rust_mirrors(mirrored: &[&CStruct], algos: &[Algo]) -> String {
    let mut r = String::from("// Generated by crates/longfat-kernel/build/algos.rs.\n\n");
    for s in mirrored {
        let _ = writeln!(
            r,
            "/// `struct {}` ({})\n#[repr(C)]\n#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]\npub struct {} {{",
            s.name, s.header, s.name
        );
        for (f, ty) in &s.fields {
            let _ = writeln!(r, "    pub {f}: {ty},");
        }
        r.push_str("}\n\n");
    }
    for a in algos {
        let n = &a.name;
        let _ = write!(
            r,
            "calgo!(lf_{n}, lf_us_{n}_init, lf_us_{n}_on_ack, lf_us_{n}_on_loss, \
             lf_us_{n}_on_recovery_exit, lf_us_{n}_on_timeout_recovery_exit, lf_us_{n}_on_rto"
        );
        if a.has_on_send {
            let _ = write!(r, "; on_send lf_us_{n}_on_send");
        }
        r.push_str(");\n");
        if a.cfg.is_some() {
            let _ = writeln!(
                r,
                "calgo_cfg!(lf_{n}, lf_{n}_cfg, lf_us_{n}_default_cfg, lf_us_{n}_init_cfg);"
            );
        }
    }
    r.push_str("\n/// The kernel algorithms by registry name (every `kernel/<name>.bpf.c`).\npub const ALGOS: &[&str] = &[");
    for a in algos {
        let _ = write!(r, "{:?}, ", a.name);
    }
    r.push_str(
        "];\n\n/// `$m!(name, state type)` for every kernel algorithm.\n#[macro_export]\n\
         macro_rules! for_each_kernel_algo {\n    ($m:ident) => {\n",
    );
    for a in algos {
        let _ = writeln!(
            r,
            "        $m!({}, $crate::userspace::lf_{});",
            a.name, a.name
        );
    }
    r.push_str(
        "    };\n}\n\n/// Each mirrored struct's name, size and field offsets as Rust lays them\n\
         /// out, in the order of the C side's `LF_MIRRORED_LAYOUTS` ids.\n\
         #[cfg(test)]\nfn rust_layouts() -> Vec<(&'static str, Vec<usize>)> {\n    \
         use std::mem::{offset_of, size_of};\n    vec![\n",
    );
    for s in mirrored {
        let _ = write!(r, "        ({:?}, vec![size_of::<{}>()", s.name, s.name);
        for (f, _) in &s.fields {
            let _ = write!(r, ", offset_of!({}, {f})", s.name);
        }
        r.push_str("]),\n");
    }
    r.push_str("    ]\n}\n");
    r
}
