//! The loader of the BPF congestion controls: `longfat kernel list | load |
//! unload | status`.
//!
//! Loading opens and loads an algorithm's skeleton (the verifier checks it),
//! attaches its `tcp_congestion_ops` struct_ops map (the kernel registers it
//! under its name, e.g. `longfat_ltcp`) and pins the link at
//! `/sys/fs/bpf/longfat/<algo>` so that the algorithm stays registered after
//! this process exits. Unloading removes the pin: the link's last reference
//! goes, and the kernel unregisters the algorithm (sockets that use it keep
//! it until they close). The kernel's own list,
//! `/proc/sys/net/ipv4/tcp_available_congestion_control`, is the truth on
//! what is registered.
//!
//! Errors are one line ([`Error`]); a verifier rejection writes libbpf's log
//! (with the verifier's) to a file the line names.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Where the links are pinned.
pub const PIN_DIR: &str = "/sys/fs/bpf/longfat";
/// The bpffs mount point.
pub const BPFFS: &str = "/sys/fs/bpf";
/// The kernel's list of registered congestion controls.
pub const AVAILABLE: &str = "/proc/sys/net/ipv4/tcp_available_congestion_control";

/// One line saying what went wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error(pub String);

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

fn err<T>(msg: impl Into<String>) -> Result<T, Error> {
    Err(Error(msg.into()))
}

/// A BPF program built into this library.
#[derive(Debug)]
pub struct Built {
    /// The algorithm's registry name (`ltcp`), as in longfat-cc.
    pub algo: &'static str,
    /// The name the kernel registers it under (`longfat_ltcp`; at most 15 bytes).
    pub ca_name: &'static str,
    /// Loads and attaches the `-mcpu=v4`, `.struct_ops.link` object ([`Abi::LinkV4`]).
    #[cfg_attr(longfat_no_bpf, allow(dead_code))]
    attach_link_v4: AttachFn,
    /// Loads and attaches the `-mcpu=v3`, `.struct_ops` object ([`Abi::MapV3`]).
    #[cfg_attr(longfat_no_bpf, allow(dead_code))]
    attach_map_v3: AttachFn,
}

/// The object variant a kernel takes: crates/longfat-kernel/build/bpf.rs
/// builds every algorithm both ways, and [`kernel_abi`] picks one from the
/// running kernel's features (docs/kernel.md, "Kernels").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Abi {
    /// `-mcpu=v4` (sign-extending loads: Linux 6.6, "bpf: Support new
    /// sign-extension load insns") and the map in `.struct_ops.link`,
    /// registered through a BPF link (`BPF_LINK_TYPE_STRUCT_OPS`, 6.4):
    /// pinned, the link keeps the algorithm registered; unpinned, it goes.
    LinkV4,
    /// `-mcpu=v3` and a plain `.struct_ops` map, registered by updating its
    /// element (kernel/bpf/bpf_struct_ops.c, `bpf_struct_ops_map_update_elem`)
    /// and unregistered by deleting it: what 6.1-6.5 accept.
    MapV3,
}

impl Abi {
    pub fn as_str(self) -> &'static str {
        match self {
            Abi::LinkV4 => "bpf v4, struct_ops link",
            Abi::MapV3 => "bpf v3, struct_ops map",
        }
    }
}

/// What the running kernel offers, as far as the choice of [`Abi`] goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelFeatures {
    /// `major.minor` of `uname -r`: only to refuse a series older than 6.1.
    pub release: (u32, u32),
    /// The BTF has `struct bpf_struct_ops_tcp_congestion_ops`: BPF may
    /// implement `tcp_congestion_ops` (net/ipv4/bpf_tcp_ca.c).
    pub struct_ops_tcp: bool,
    /// The BTF's `enum bpf_link_type` has `BPF_LINK_TYPE_STRUCT_OPS`.
    pub struct_ops_link: bool,
    /// The verifier accepts a sign-extending load (`BPF_LDX | BPF_MEMSX`).
    pub isa_v4: bool,
}

/// The oldest series longfat supports: the oldest maintained LTS (tested
/// under QEMU by scripts/lts-kernels.sh, as are 6.12 and the host's).
pub const OLDEST_SERIES: (u32, u32) = (6, 1);

/// The variant for a kernel with `f`, or the one line saying why it has none.
pub fn choose_abi(f: &KernelFeatures) -> Result<Abi, Error> {
    if f.release < OLDEST_SERIES {
        return err(format!(
            "Linux {}.{} is too old: longfat's BPF congestion controls need {}.{} or later",
            f.release.0, f.release.1, OLDEST_SERIES.0, OLDEST_SERIES.1
        ));
    }
    if !f.struct_ops_tcp {
        return err("this kernel does not support BPF struct_ops for TCP congestion control (no bpf_struct_ops_tcp_congestion_ops in its BTF: CONFIG_BPF_JIT and CONFIG_BPF_SYSCALL)");
    }
    Ok(if f.struct_ops_link && f.isa_v4 {
        Abi::LinkV4
    } else {
        Abi::MapV3
    })
}

/// `major.minor` of a kernel release string (`6.1.0-56-amd64` -> (6, 1)).
fn parse_release(release: &str) -> Option<(u32, u32)> {
    let mut parts = release.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

#[cfg(not(longfat_no_bpf))]
type AttachFn = fn(
    &mut std::mem::MaybeUninit<libbpf_rs::OpenObject>,
    &Path,
    &Path,
) -> Result<libbpf_rs::Link, Stage>;
#[cfg(longfat_no_bpf)]
type AttachFn = fn();

/// Where loading a skeleton failed.
#[cfg(not(longfat_no_bpf))]
enum Stage {
    Open(libbpf_rs::Error),
    Load(libbpf_rs::Error),
    PinState(libbpf_rs::Error),
    PinLink(libbpf_rs::Error),
    Attach(libbpf_rs::Error),
}

/// Opens and loads one skeleton, pins its per-socket state map at
/// `$state`, attaches its struct_ops map and pins the link at `$pin` (the
/// generated table uses it). The pin is made while the skeleton lives: an
/// [`Abi::MapV3`] "link" is libbpf's wrapper of the map's own fd, which the
/// skeleton closes when it goes (libbpf, `bpf_map__attach_struct_ops`).
#[cfg(not(longfat_no_bpf))]
macro_rules! struct_ops {
    ($o:expr, $state:expr, $pin:expr, $m:ident, $builder:ident, $map:ident) => {{
        use libbpf_rs::skel::{OpenSkel as _, SkelBuilder as _};
        let open = $m::$builder::default().open($o).map_err(Stage::Open)?;
        let mut skel = open.load().map_err(Stage::Load)?;
        skel.maps.lfg_state.pin($state).map_err(Stage::PinState)?;
        let mut link = skel.maps.$map.attach_struct_ops().map_err(Stage::Attach)?;
        link.pin($pin).map_err(Stage::PinLink)?;
        Ok(link)
    }};
}

#[cfg(not(longfat_no_bpf))]
mod generated {
    use super::*;
    include!(concat!(env!("OUT_DIR"), "/bpf/programs.rs"));
}
#[cfg(not(longfat_no_bpf))]
use generated::BUILT;

#[cfg(longfat_no_bpf)]
const BUILT: &[Built] = &[];

/// Why the programs were not built, when they were not.
pub fn not_built_reason() -> Option<&'static str> {
    #[cfg(longfat_no_bpf)]
    return Some(env!("LONGFAT_NO_BPF_REASON"));
    #[cfg(not(longfat_no_bpf))]
    None
}

/// The algorithms built into this library, by algorithm name.
pub fn built() -> &'static [Built] {
    BUILT
}

/// The algorithm a user's name means: its registry name (`scalable`), its
/// kernel name (`longfat_stcp`) or `longfat_<registry name>`.
pub fn resolve(name: &str) -> Result<&'static Built, Error> {
    if let Some(reason) = not_built_reason() {
        return err(format!("the BPF programs were not built: {reason}"));
    }
    let found = BUILT.iter().find(|b| {
        name == b.algo || name == b.ca_name || name.strip_prefix("longfat_") == Some(b.algo)
    });
    match found {
        Some(b) => Ok(b),
        None => err(format!(
            "unknown algorithm {name:?}: allowed are {}",
            allowed_names()
        )),
    }
}

fn allowed_names() -> String {
    let names: Vec<String> = BUILT
        .iter()
        .map(|b| format!("{} ({})", b.algo, b.ca_name))
        .collect();
    format!("{}, or all", names.join(", "))
}

/// The congestion controls the kernel has registered now.
pub fn available() -> Result<Vec<String>, Error> {
    let text = fs::read_to_string(AVAILABLE)
        .map_err(|e| Error(format!("cannot read {AVAILABLE}: {e}")))?;
    Ok(parse_available(&text))
}

fn parse_available(text: &str) -> Vec<String> {
    text.split_whitespace().map(str::to_string).collect()
}

/// The pin of an algorithm's link.
pub fn pin_path(algo: &str) -> PathBuf {
    Path::new(PIN_DIR).join(algo)
}

/// The pin of an algorithm's per-socket state map (see [`socket_state`]).
pub fn state_pin_path(algo: &str) -> PathBuf {
    Path::new(PIN_DIR).join(format!("{algo}_state")) // bpffs refuses dots in names
}

/// One algorithm's state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AlgoStatus {
    pub algo: &'static str,
    pub ca_name: &'static str,
    /// Registered with the kernel (in `tcp_available_congestion_control`).
    pub registered: bool,
    /// Our link is pinned in bpffs.
    pub pinned: bool,
}

/// The state of every built algorithm, and the kernel's list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub algos: Vec<AlgoStatus>,
    pub available: Vec<String>,
    /// Why nothing was built, if nothing was.
    pub not_built: Option<&'static str>,
}

pub fn status() -> Result<Status, Error> {
    let available = available()?;
    let algos = BUILT
        .iter()
        .map(|b| AlgoStatus {
            algo: b.algo,
            ca_name: b.ca_name,
            registered: available.iter().any(|a| a == b.ca_name),
            pinned: pin_path(b.algo).exists(),
        })
        .collect();
    Ok(Status {
        algos,
        available,
        not_built: not_built_reason(),
    })
}

/// What `load` or `unload` did for one algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Loaded,
    /// It was registered (and pinned) already: nothing to do.
    AlreadyLoaded,
    Unloaded,
    /// It was not registered: nothing to do.
    NotLoaded,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Loaded => "loaded",
            Outcome::AlreadyLoaded => "already loaded",
            Outcome::Unloaded => "unloaded",
            Outcome::NotLoaded => "not loaded",
        }
    }
}

/// Resolves all names first (one bad name loads nothing), without duplicates.
fn resolve_all(names: &[String]) -> Result<Vec<&'static Built>, Error> {
    if names.is_empty() {
        return err(format!(
            "no algorithm named: allowed are {}",
            allowed_names_or_reason()
        ));
    }
    let mut out: Vec<&'static Built> = Vec::new();
    for n in names {
        if n == "all" {
            if let Some(reason) = not_built_reason() {
                return err(format!("the BPF programs were not built: {reason}"));
            }
            for b in BUILT {
                if !out.iter().any(|o| o.algo == b.algo) {
                    out.push(b);
                }
            }
            continue;
        }
        let b = resolve(n)?;
        if !out.iter().any(|o| o.algo == b.algo) {
            out.push(b);
        }
    }
    Ok(out)
}

fn allowed_names_or_reason() -> String {
    match not_built_reason() {
        Some(r) => format!("none (the BPF programs were not built: {r})"),
        None => allowed_names(),
    }
}

/// Registers the named algorithms (idempotent). `log_dir` receives the
/// libbpf/verifier log of a program that fails to load.
pub fn load(names: &[String], log_dir: &Path) -> Result<Vec<(&'static str, Outcome)>, Error> {
    let todo = resolve_all(names)?;
    let abi = preflight()?;
    let mut done = Vec::new();
    for b in todo {
        done.push((b.ca_name, load_one(b, abi, log_dir)?));
    }
    Ok(done)
}

/// Unregisters the named algorithms; nothing of them stays registered or pinned.
pub fn unload(names: &[String]) -> Result<Vec<(&'static str, Outcome)>, Error> {
    let todo = resolve_all(names)?;
    let mut done = Vec::new();
    for b in todo {
        done.push((b.ca_name, unload_one(b)?));
    }
    Ok(done)
}

fn unload_one(b: &Built) -> Result<Outcome, Error> {
    let pin = pin_path(b.algo);
    let was_pinned = pin.exists();
    let state_pin = state_pin_path(b.algo);
    if state_pin.exists() {
        fs::remove_file(&state_pin).map_err(|e| {
            Error(format!(
                "cannot remove {}: {}",
                state_pin.display(),
                io_reason(&e)
            ))
        })?;
    }
    if was_pinned {
        unregister_map_pin(b, &pin)?;
        fs::remove_file(&pin).map_err(|e| {
            Error(format!(
                "cannot remove {}: {}",
                pin.display(),
                io_reason(&e)
            ))
        })?;
    }
    // The kernel releases the link in a work item after the last reference.
    if !wait_registered(b.ca_name, false)? {
        return err(if was_pinned {
            format!(
                "{}: unpinned {} but the kernel still lists it after 5 s",
                b.ca_name,
                pin.display()
            )
        } else {
            format!(
                "{}: registered, but not by longfat (no pin at {}): another process holds it",
                b.ca_name,
                pin.display()
            )
        });
    }
    Ok(if was_pinned {
        Outcome::Unloaded
    } else {
        Outcome::NotLoaded
    })
}

/// An [`Abi::MapV3`] pin is the struct_ops map itself, which stays
/// registered until its element is deleted (kernel/bpf/bpf_struct_ops.c,
/// `bpf_struct_ops_map_delete_elem`); a link's pin needs nothing here.
#[cfg(not(longfat_no_bpf))]
fn unregister_map_pin(b: &Built, pin: &Path) -> Result<(), Error> {
    use libbpf_rs::libbpf_sys;
    use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};

    let c =
        std::ffi::CString::new(pin.as_os_str().as_encoded_bytes()).expect("no NUL in a pin path");
    // SAFETY: c is NUL-terminated; a non-negative result is a new fd we own.
    let fd = unsafe { libbpf_sys::bpf_obj_get(c.as_ptr()) };
    if fd < 0 {
        let e = io::Error::from_raw_os_error(-fd);
        return err(format!("cannot open {}: {}", pin.display(), io_reason(&e)));
    }
    // SAFETY: fd was just returned to us and is not owned elsewhere.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let kind = fs::read_link(format!("/proc/self/fd/{}", fd.as_raw_fd())).unwrap_or_default();
    if kind.as_os_str() != "anon_inode:bpf-map" {
        return Ok(());
    }
    let zero = 0u32;
    // SAFETY: a struct_ops map's key is one u32.
    let rc =
        unsafe { libbpf_sys::bpf_map_delete_elem(fd.as_raw_fd(), (&zero as *const u32).cast()) };
    // ENOENT: nothing registered through it any more.
    if rc < 0 && rc != -libc::ENOENT {
        let e = io::Error::from_raw_os_error(-rc);
        return err(format!(
            "{}: cannot unregister its struct_ops map {}: {}",
            b.ca_name,
            pin.display(),
            io_reason(&e)
        ));
    }
    Ok(())
}

#[cfg(longfat_no_bpf)]
fn unregister_map_pin(_b: &Built, _pin: &Path) -> Result<(), Error> {
    Ok(())
}

/// Waits until the kernel lists (or no longer lists) `ca_name`; false on timeout.
fn wait_registered(ca_name: &str, registered: bool) -> Result<bool, Error> {
    let start = Instant::now();
    loop {
        if available()?.iter().any(|a| a == ca_name) == registered {
            return Ok(true);
        }
        if start.elapsed() > Duration::from_secs(5) {
            return Ok(false);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn io_reason(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::EPERM) | Some(libc::EACCES) => "permission denied (run as root)".into(),
        _ => e.to_string(),
    }
}

/// The checks that explain a failure better than libbpf's errno, and the
/// variant to load.
fn preflight() -> Result<Abi, Error> {
    if let Some(reason) = not_built_reason() {
        return err(format!("the BPF programs were not built: {reason}"));
    }
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return err("loading BPF congestion controls needs root (CAP_BPF, CAP_NET_ADMIN, CAP_SYS_ADMIN for bpffs): run as root");
    }
    kernel_abi()
}

/// The variant the running kernel takes, from its features (root: the
/// instruction-set probe loads a program).
pub fn kernel_abi() -> Result<Abi, Error> {
    choose_abi(&kernel_features()?)
}

/// Probes the running kernel. libbpf's own struct_ops probe
/// (`libbpf_probe_bpf_map_type`) is not used: it sets
/// `value_type_btf_obj_fd`, which kernels before 6.9 reject, so it called
/// 6.1-6.8 unsupported.
#[cfg(not(longfat_no_bpf))]
pub fn kernel_features() -> Result<KernelFeatures, Error> {
    use libbpf_rs::btf::{types, Btf};

    // SAFETY: uname fills the struct it is given.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    // SAFETY: u is a valid utsname.
    if unsafe { libc::uname(&mut u) } != 0 {
        return err(format!("uname failed: {}", io::Error::last_os_error()));
    }
    // SAFETY: uname NUL-terminates release.
    let release = unsafe { std::ffi::CStr::from_ptr(u.release.as_ptr()) }.to_string_lossy();
    let release = parse_release(&release)
        .ok_or_else(|| Error(format!("cannot read the kernel release {release:?}")))?;
    if !Path::new("/sys/kernel/btf/vmlinux").exists() {
        return err("the kernel has no BTF (/sys/kernel/btf/vmlinux is missing): struct_ops needs CONFIG_DEBUG_INFO_BTF");
    }
    let btf = Btf::from_vmlinux()
        .map_err(|e| Error(format!("cannot read /sys/kernel/btf/vmlinux: {e}")))?;
    let struct_ops_tcp = btf
        .type_by_name::<types::Struct>("bpf_struct_ops_tcp_congestion_ops")
        .is_some();
    let struct_ops_link = btf
        .type_by_name::<types::Enum>("bpf_link_type")
        .is_some_and(|e| {
            e.iter()
                .any(|m| m.name.is_some_and(|n| n == "BPF_LINK_TYPE_STRUCT_OPS"))
        });
    Ok(KernelFeatures {
        release,
        struct_ops_tcp,
        struct_ops_link,
        isa_v4: probe_isa_v4()?,
    })
}

#[cfg(longfat_no_bpf)]
pub fn kernel_features() -> Result<KernelFeatures, Error> {
    err(format!(
        "the BPF programs were not built: {}",
        env!("LONGFAT_NO_BPF_REASON")
    ))
}

/// Loads a three-instruction socket filter with a sign-extending load
/// (BPF_LDX | BPF_MEMSX, include/uapi/linux/bpf.h): a verifier before 6.6
/// refuses its opcode with EINVAL.
#[cfg(not(longfat_no_bpf))]
fn probe_isa_v4() -> Result<bool, Error> {
    use libbpf_rs::libbpf_sys;

    /// struct bpf_insn on a little-endian host: code, dst_reg | src_reg << 4, off, imm.
    const fn insn(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> u64 {
        (code as u64)
            | (((dst | (src << 4)) as u64) << 8)
            | ((off as u16 as u64) << 16)
            | ((imm as u32 as u64) << 32)
    }
    const _: () = assert!(cfg!(target_endian = "little"), "insn() is little-endian");
    let prog = [
        insn(0x7a, 10, 0, -8, 0), // BPF_ST | BPF_MEM | BPF_DW: *(u64 *)(r10 - 8) = 0
        insn(0x91, 0, 10, -8, 0), // BPF_LDX | BPF_MEMSX | BPF_B: r0 = *(s8 *)(r10 - 8)
        insn(0x95, 0, 0, 0, 0),   // BPF_JMP | BPF_EXIT
    ];
    let license = c"GPL";
    // SAFETY: prog is 3 valid struct bpf_insn (8 bytes each); no options.
    let fd = unsafe {
        libbpf_sys::bpf_prog_load(
            libbpf_sys::BPF_PROG_TYPE_SOCKET_FILTER,
            std::ptr::null(),
            license.as_ptr(),
            prog.as_ptr().cast(),
            prog.len() as _,
            std::ptr::null_mut(),
        )
    };
    if fd >= 0 {
        // SAFETY: fd is ours.
        unsafe { libc::close(fd) };
        return Ok(true);
    }
    match -fd {
        libc::EINVAL => Ok(false),
        e => err(format!(
            "cannot probe the kernel's BPF instruction set: {}",
            io_reason(&io::Error::from_raw_os_error(e))
        )),
    }
}

#[cfg(not(longfat_no_bpf))]
fn load_one(b: &Built, abi: Abi, log_dir: &Path) -> Result<Outcome, Error> {
    use std::mem::MaybeUninit;

    let pin = pin_path(b.algo);
    let registered = available()?.iter().any(|a| a == b.ca_name);
    match (registered, pin.exists()) {
        (true, true) => return Ok(Outcome::AlreadyLoaded),
        (true, false) => {
            return err(format!(
            "{}: already registered, but not by longfat (no pin at {}): another process holds it",
            b.ca_name,
            pin.display()
        ))
        }
        // A pin whose link no longer registers anything: replace it.
        (false, true) => fs::remove_file(&pin)
            .map_err(|e| Error(format!("cannot remove stale {}: {e}", pin.display())))?,
        (false, false) => {}
    }
    let state_pin = state_pin_path(b.algo);
    if state_pin.exists() {
        fs::remove_file(&state_pin)
            .map_err(|e| Error(format!("cannot remove stale {}: {e}", state_pin.display())))?;
    }
    ensure_pin_dir()?;

    let log = LibbpfLog::capture();
    let mut obj = MaybeUninit::uninit();
    let attach = match abi {
        Abi::LinkV4 => b.attach_link_v4,
        Abi::MapV3 => b.attach_map_v3,
    };
    let attached = attach(&mut obj, &state_pin, &pin);
    let text = log.finish();
    let mut link = match attached {
        Ok(link) => link,
        Err(stage) => {
            let _ = fs::remove_file(&state_pin);
            return Err(load_error(b, stage, &text, log_dir));
        }
    };
    if abi == Abi::MapV3 {
        // Not a kernel link: dropping it would delete the map's element and
        // unregister the algorithm; the pinned map keeps it registered.
        link.disconnect();
    }
    if !wait_registered(b.ca_name, true)? {
        return err(format!(
            "{}: attached and pinned, but the kernel does not list it",
            b.ca_name
        ));
    }
    Ok(Outcome::Loaded)
}

#[cfg(longfat_no_bpf)]
fn load_one(_b: &Built, _abi: Abi, _log_dir: &Path) -> Result<Outcome, Error> {
    unreachable!("nothing is built")
}

#[cfg(not(longfat_no_bpf))]
fn load_error(b: &Built, stage: Stage, log: &str, log_dir: &Path) -> Error {
    let (what, e) = match stage {
        Stage::Open(e) => ("opening the BPF object failed", e),
        Stage::Load(e) => ("loading failed", e),
        Stage::PinState(e) => ("pinning its state map failed", e),
        Stage::Attach(e) => ("registering failed", e),
        Stage::PinLink(e) => ("pinning its link failed", e),
    };
    let file = write_log(log_dir, b.algo, log);
    let saved = match &file {
        Ok(p) => format!("libbpf's log: {}", p.display()),
        Err(e) => format!("the log could not be written: {e}"),
    };
    if let Some((prog, reason)) = verifier_reason(log) {
        return Error(format!(
            "{}: the verifier rejected program {prog}: {reason}; the verifier's log: {}",
            b.ca_name,
            file.as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|e| format!("not written ({e})"))
        ));
    }
    let errno = e.kind();
    let hint = match errno {
        libbpf_rs::ErrorKind::PermissionDenied => " (permission denied: run as root)",
        libbpf_rs::ErrorKind::AlreadyExists => {
            " (the kernel already has a congestion control of that name)"
        }
        _ => "",
    };
    Error(format!("{}: {what}: {e}{hint}; {saved}", b.ca_name))
}

/// The failing program and the verifier's last word, from libbpf's log:
/// `prog 'NAME': BPF program load failed` then the log between
/// `-- BEGIN PROG LOAD LOG --` and `-- END PROG LOAD LOG --`.
#[cfg_attr(longfat_no_bpf, allow(dead_code))]
fn verifier_reason(log: &str) -> Option<(String, String)> {
    let start = log.find("-- BEGIN PROG LOAD LOG --")?;
    let before = &log[..start];
    let prog = before
        .rfind("prog '")
        .and_then(|i| before[i + 6..].split('\'').next())
        .unwrap_or("?")
        .to_string();
    let body = &log[start..];
    let body = &body[..body.find("-- END PROG LOAD LOG --").unwrap_or(body.len())];
    let reason = body
        .lines()
        .skip(1)
        .map(str::trim)
        .filter(|l| {
            !l.is_empty() && !l.starts_with("processed ") && !l.starts_with("verification time")
        })
        .last()
        .unwrap_or("no reason in the log")
        .to_string();
    Some((prog, reason))
}

#[cfg_attr(longfat_no_bpf, allow(dead_code))]
fn write_log(dir: &Path, algo: &str, log: &str) -> io::Result<PathBuf> {
    fs::create_dir_all(dir)?;
    let path = dir.join(format!("{algo}-load.log"));
    fs::write(&path, log)?;
    Ok(path)
}

/// Mounts bpffs at /sys/fs/bpf when it is not, and makes the pin directory.
#[cfg_attr(longfat_no_bpf, allow(dead_code))]
fn ensure_pin_dir() -> Result<(), Error> {
    if !is_bpffs(Path::new(BPFFS)) {
        fs::create_dir_all(BPFFS)
            .map_err(|e| Error(format!("cannot create {BPFFS}: {}", io_reason(&e))))?;
        let target = std::ffi::CString::new(BPFFS).expect("no NUL");
        let fstype = std::ffi::CString::new("bpf").expect("no NUL");
        // SAFETY: valid NUL-terminated strings; no data argument.
        let rc = unsafe {
            libc::mount(
                fstype.as_ptr(),
                target.as_ptr(),
                fstype.as_ptr(),
                0,
                std::ptr::null(),
            )
        };
        if rc != 0 {
            let e = io::Error::last_os_error();
            return err(format!("cannot mount bpffs at {BPFFS}: {}", io_reason(&e)));
        }
    }
    fs::create_dir_all(PIN_DIR)
        .map_err(|e| Error(format!("cannot create {PIN_DIR}: {}", io_reason(&e))))
}

#[cfg_attr(longfat_no_bpf, allow(dead_code))]
fn is_bpffs(path: &Path) -> bool {
    const BPF_FS_MAGIC: u32 = 0xcafe_4a11;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    let mut st = std::mem::MaybeUninit::<libc::statfs>::uninit();
    // SAFETY: c is NUL-terminated; st is written by statfs on success.
    let rc = unsafe { libc::statfs(c.as_ptr(), st.as_mut_ptr()) };
    // SAFETY: statfs succeeded.
    rc == 0 && unsafe { st.assume_init() }.f_type as u32 == BPF_FS_MAGIC
}

/// What the glue keeps for one socket (`struct lfg_glue_head` of
/// kernel/include/longfat_glue.h): the algorithm's window and threshold,
/// and how many events of each kind the socket's callbacks produced.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SocketState {
    pub cwnd_fp: u64,
    pub ssthresh_fp: u64,
    pub acks_gathered: u32,
    pub acks_delivered: u32,
    pub acks_grown: u32,
    pub losses: u32,
    pub losses_taken_back: u32,
    pub recoveries: u32,
    pub cwrs: u32,
    pub recovery_exits: u32,
    pub rtos_reduce: u32,
    pub rtos_keep: u32,
    pub undos: u32,
    pub ack_pending: u32,
    pub recoveries_in_reduction: u32,
    /// State changes the glue did not see (its set_state was not run).
    pub missed_callbacks: u32,
    /// ACKs whose echoed timestamp (TSecr), on the sender's clock, lies more
    /// than 1 s after the ACK's arrival: impossible for a TSval the socket
    /// sent (EDT pacing stamps at most a little ahead), so a clock error.
    pub ts_echoes_ahead: u32,
    /// ACKs whose echoed timestamp lies before the glue's init (an accepted
    /// socket's first ACKs may echo its SYN-ACK; otherwise a clock error).
    pub ts_echoes_before_init: u32,
    /// 1 when the kernel did not run the socket's init and the first
    /// callback that ran initialised the state (`lfg_glue_ready`).
    pub late_inits: u32,
}

impl SocketState {
    /// The fields in order, with their names (for Python).
    pub fn fields(&self) -> [(&'static str, u64); 19] {
        [
            ("cwnd_fp", self.cwnd_fp),
            ("ssthresh_fp", self.ssthresh_fp),
            ("acks_gathered", self.acks_gathered.into()),
            ("acks_delivered", self.acks_delivered.into()),
            ("acks_grown", self.acks_grown.into()),
            ("losses", self.losses.into()),
            ("losses_taken_back", self.losses_taken_back.into()),
            ("recoveries", self.recoveries.into()),
            ("cwrs", self.cwrs.into()),
            ("recovery_exits", self.recovery_exits.into()),
            ("rtos_reduce", self.rtos_reduce.into()),
            ("rtos_keep", self.rtos_keep.into()),
            ("undos", self.undos.into()),
            ("ack_pending", self.ack_pending.into()),
            (
                "recoveries_in_reduction",
                self.recoveries_in_reduction.into(),
            ),
            ("missed_callbacks", self.missed_callbacks.into()),
            ("ts_echoes_ahead", self.ts_echoes_ahead.into()),
            ("ts_echoes_before_init", self.ts_echoes_before_init.into()),
            ("late_inits", self.late_inits.into()),
        ]
    }

    /// Decodes `struct lfg_glue_head` (native endian, no padding: 2 u64 then 18 u32).
    #[cfg_attr(longfat_no_bpf, allow(dead_code))]
    fn parse(raw: &[u8]) -> Option<Self> {
        if raw.len() < 88 {
            return None;
        }
        let u64_at = |i: usize| u64::from_ne_bytes(raw[i..i + 8].try_into().expect("8 bytes"));
        let u32_at = |i: usize| u32::from_ne_bytes(raw[i..i + 4].try_into().expect("4 bytes"));
        Some(Self {
            cwnd_fp: u64_at(0),
            ssthresh_fp: u64_at(8),
            acks_gathered: u32_at(16),
            acks_delivered: u32_at(20),
            acks_grown: u32_at(24),
            losses: u32_at(28),
            losses_taken_back: u32_at(32),
            recoveries: u32_at(36),
            cwrs: u32_at(40),
            recovery_exits: u32_at(44),
            rtos_reduce: u32_at(48),
            rtos_keep: u32_at(52),
            undos: u32_at(56),
            ack_pending: u32_at(60),
            recoveries_in_reduction: u32_at(64),
            missed_callbacks: u32_at(68),
            ts_echoes_ahead: u32_at(72),
            ts_echoes_before_init: u32_at(76),
            late_inits: u32_at(80),
        })
    }
}

/// The glue's state for the TCP socket `fd` of this process, which uses the
/// loaded algorithm `name`; None when the socket has none (another
/// congestion control, or not yet connected).
pub fn socket_state(name: &str, fd: i32) -> Result<Option<SocketState>, Error> {
    let b = resolve(name)?;
    socket_state_of(b, fd)
}

#[cfg(not(longfat_no_bpf))]
fn socket_state_of(b: &Built, fd: i32) -> Result<Option<SocketState>, Error> {
    use libbpf_rs::MapCore as _;

    let pin = state_pin_path(b.algo);
    if !pin.exists() {
        return err(format!("{}: not loaded (no {})", b.ca_name, pin.display()));
    }
    let map = libbpf_rs::MapHandle::from_pinned_path(&pin)
        .map_err(|e| Error(format!("cannot open {}: {e}", pin.display())))?;
    match map.lookup(&fd.to_ne_bytes(), libbpf_rs::MapFlags::ANY) {
        Ok(Some(raw)) => Ok(SocketState::parse(&raw)),
        Ok(None) => Ok(None),
        Err(e) if e.kind() == libbpf_rs::ErrorKind::NotFound => Ok(None),
        Err(e) => err(format!(
            "{}: cannot read the state of socket fd {fd}: {e}",
            b.ca_name
        )),
    }
}

#[cfg(longfat_no_bpf)]
fn socket_state_of(_b: &Built, _fd: i32) -> Result<Option<SocketState>, Error> {
    unreachable!("nothing is built")
}

/// libbpf's messages while loading (its print callback is process-wide).
static LOG: Mutex<String> = Mutex::new(String::new());

#[cfg_attr(longfat_no_bpf, allow(dead_code))]
struct LibbpfLog {
    prev: Option<(libbpf_rs::PrintLevel, libbpf_rs::PrintCallback)>,
}

#[cfg_attr(longfat_no_bpf, allow(dead_code))]
impl LibbpfLog {
    fn capture() -> Self {
        LOG.lock().unwrap_or_else(|p| p.into_inner()).clear();
        fn keep(_level: libbpf_rs::PrintLevel, msg: String) {
            LOG.lock().unwrap_or_else(|p| p.into_inner()).push_str(&msg);
        }
        let prev = libbpf_rs::set_print(Some((libbpf_rs::PrintLevel::Debug, keep)));
        Self { prev }
    }

    fn finish(self) -> String {
        libbpf_rs::set_print(self.prev);
        std::mem::take(&mut *LOG.lock().unwrap_or_else(|p| p.into_inner()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_socket_state_head_decodes_in_order() {
        let mut raw = Vec::new();
        raw.extend_from_slice(&(5u64 << 16).to_ne_bytes());
        raw.extend_from_slice(&u64::MAX.to_ne_bytes());
        // 17 counters, then the head's reserved word
        for i in 1..=18u32 {
            raw.extend_from_slice(&i.to_ne_bytes());
        }
        raw.extend_from_slice(&[0xaa; 40]); // the algorithm's state follows
        let s = SocketState::parse(&raw).unwrap();
        assert_eq!((s.cwnd_fp, s.ssthresh_fp), (5 << 16, u64::MAX));
        let counters: Vec<u64> = s.fields()[2..].iter().map(|f| f.1).collect();
        assert_eq!(counters, (1..=17).collect::<Vec<u64>>());
        assert_eq!(s.late_inits, 17);
        assert_eq!(SocketState::parse(&raw[..87]), None);
    }

    /// The features each supported series has (6.1: struct_ops, no link
    /// type, no v4; 6.6 and later: all), and what is refused.
    #[test]
    fn each_kernel_gets_the_variant_its_features_allow() {
        let f = |release, tcp, link, v4| KernelFeatures {
            release,
            struct_ops_tcp: tcp,
            struct_ops_link: link,
            isa_v4: v4,
        };
        assert_eq!(choose_abi(&f((6, 1), true, false, false)), Ok(Abi::MapV3));
        // 6.4-6.5: links but no v4; the v3 object has no link section.
        assert_eq!(choose_abi(&f((6, 4), true, true, false)), Ok(Abi::MapV3));
        assert_eq!(choose_abi(&f((6, 6), true, true, true)), Ok(Abi::LinkV4));
        assert_eq!(choose_abi(&f((6, 18), true, true, true)), Ok(Abi::LinkV4));
        for (bad, says) in [
            (
                f((6, 0), true, false, false),
                "Linux 6.0 is too old: longfat's BPF congestion controls need 6.1 or later",
            ),
            (f((5, 15), true, false, false), "Linux 5.15 is too old"),
            (
                f((6, 12), false, true, true),
                "does not support BPF struct_ops for TCP",
            ),
        ] {
            let e = choose_abi(&bad).unwrap_err().0;
            assert!(e.starts_with(says) || e.contains(says), "{e}");
            assert!(!e.contains('\n'), "{e}");
        }
    }

    #[test]
    fn reads_major_and_minor_of_a_release() {
        assert_eq!(parse_release("6.1.0-56-amd64"), Some((6, 1)));
        assert_eq!(parse_release("6.12.117+deb12-amd64"), Some((6, 12)));
        assert_eq!(parse_release("6.18.44-fc-v595"), Some((6, 18)));
        assert_eq!(parse_release("6"), None);
        assert_eq!(parse_release(""), None);
    }

    #[test]
    fn parses_the_kernels_list() {
        assert_eq!(
            parse_available("reno bbr cubic longfat_ltcp\n"),
            ["reno", "bbr", "cubic", "longfat_ltcp"]
        );
        assert!(parse_available("\n").is_empty());
    }

    #[test]
    fn kernel_names_fit_tcp_ca_name_max_and_are_unique() {
        for b in built() {
            assert!(b.ca_name.len() < 16, "{}", b.ca_name);
            assert!(b.ca_name.starts_with("longfat_"), "{}", b.ca_name);
            assert_eq!(built().iter().filter(|o| o.ca_name == b.ca_name).count(), 1);
        }
    }

    #[test]
    fn names_resolve_in_all_three_spellings() {
        for b in built() {
            for n in [
                b.algo.to_string(),
                b.ca_name.to_string(),
                format!("longfat_{}", b.algo),
            ] {
                assert_eq!(resolve(&n).map(|r| r.algo), Ok(b.algo), "{n}");
            }
        }
    }

    #[test]
    fn a_bad_name_is_one_line_listing_the_allowed_names() {
        let e = resolve("cubic").unwrap_err().0;
        assert!(!e.contains('\n'), "{e}");
        match not_built_reason() {
            Some(r) => assert!(e.contains(r), "{e}"),
            None => {
                assert!(
                    e.starts_with("unknown algorithm \"cubic\": allowed are "),
                    "{e}"
                );
                for b in built() {
                    assert!(e.contains(b.algo) && e.contains(b.ca_name), "{e}");
                }
            }
        }
        let e = load(&["cubic".to_string()], Path::new("/nonexistent"))
            .unwrap_err()
            .0;
        assert!(!e.contains('\n'), "{e}");
        let e = load(&[], Path::new("/nonexistent")).unwrap_err().0;
        assert!(e.starts_with("no algorithm named"), "{e}");
    }

    #[test]
    fn duplicates_and_all_resolve_once() {
        if not_built_reason().is_some() {
            return;
        }
        let b = &built()[0];
        let got = resolve_all(&[b.algo.to_string(), b.ca_name.to_string()]).unwrap();
        assert_eq!(got.len(), 1);
        let all = resolve_all(&["all".to_string(), b.algo.to_string()]).unwrap();
        assert_eq!(all.len(), built().len());
    }

    #[test]
    fn the_verifiers_reason_is_the_last_line_of_its_log() {
        let log = "libbpf: prog 'lfg_cong_avoid': BPF program load failed: Permission denied\n\
                   libbpf: prog 'lfg_cong_avoid': -- BEGIN PROG LOAD LOG --\n\
                   0: R1=ctx() R10=fp0\n\
                   ; int x = *p @ algo.h:12\n\
                   12: (61) r0 = *(u32 *)(r1 +0)\n\
                   R1 invalid mem access 'scalar'\n\
                   processed 13 insns (limit 1000000) max_states_per_insn 0\n\
                   -- END PROG LOAD LOG --\n\
                   libbpf: failed to load object 'scalable'\n";
        assert_eq!(
            verifier_reason(log),
            Some((
                "lfg_cong_avoid".to_string(),
                "R1 invalid mem access 'scalar'".to_string()
            ))
        );
        assert_eq!(verifier_reason("libbpf: failed to open\n"), None);
    }

    #[test]
    fn the_not_built_path_names_its_reason() {
        match not_built_reason() {
            Some(r) => {
                assert!(built().is_empty());
                assert!(!r.is_empty());
            }
            None => assert!(!built().is_empty()),
        }
    }
}
