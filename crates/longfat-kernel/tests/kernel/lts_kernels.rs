//! The kernel path on every kernel longfat supports (docs/kernel.md,
//! "Kernels"): each BPF program loads (the verifier accepts it), registers,
//! carries a loopback transfer whose window its rules grow, and unloads.
//!
//! `in_a_guest_every_program_loads_verifies_grows_cwnd_and_unloads` does
//! that on the kernel it runs on, which must be a guest of
//! scripts/lts-kernels.sh: it puts netem on the loopback (a 50 ms path, on
//! which every algorithm's rules grow the window; on a sub-millisecond
//! loopback TCP-GT's do not, docs/kernel.md), which it must never do on the
//! host. `the_same_inside_debians_lts_kernels_under_qemu` runs it, this
//! very test binary, inside Debian's 6.1 and 6.12 LTS kernels booted under
//! QEMU. Ignored by default (root: `cargo test --release -p longfat-kernel
//! --test kernel -- --ignored lts_kernels::`); scripts/test.sh runs it as root. The
//! host's own kernel is tested by tests/test_kernel.py.

use std::io::{Read as _, Write as _};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::os::fd::{AsRawFd as _, FromRawFd as _};
use std::path::Path;
use std::process::Command;

use longfat_kernel::programs::{self, SocketState};
use longfat_kernel::userspace;

/// How long each transfer sends: 20 RTTs of the path. The loss-based
/// algorithms grow within one; TCP-GT adds about (f s)^2 / cwnd packets per
/// epoch (eq. (15) over an epoch's packets, TR near rtt_base = 50 ms, s
/// rising by f = srtt / rtt_base, about 1, per epoch), so its first packet
/// takes three undisturbed epochs, and under TCG an epoch whose delay
/// exceeds the minimum by more than rtt_base / 20 = 2.5 ms is a decrease by
/// its eq. (16) (s back to 1). 20 RTTs leave room for that (docs/kernel.md).
const TRANSFER_MS: u64 = 1000;
/// netem's delay on the guest's loopback, which each packet and each ACK
/// crosses once: an RTT of 50 ms, the testbed's (docs/kernel.md: there every
/// algorithm's rules grow the window within 0.5 s).
const ONE_WAY_DELAY_MS: u32 = 25;
/// The sender's MSS: Ethernet's, not loopback's 65,483, so that windows
/// count the packets of a real path.
const MSS_BYTES: libc::c_int = 1448;
/// Linux's initial window (include/net/tcp.h, TCP_INIT_CWND), in 1/2^16 packets.
const INIT_CWND_FP: u64 = 10 << 16;

fn setsockopt<T>(fd: i32, level: i32, name: i32, v: &T, len: usize) -> Result<(), String> {
    // SAFETY: v points to len readable bytes.
    let rc = unsafe { libc::setsockopt(fd, level, name, (v as *const T).cast(), len as _) };
    if rc == 0 {
        Ok(())
    } else {
        Err(format!(
            "setsockopt({name}): {}",
            std::io::Error::last_os_error()
        ))
    }
}

/// A client socket to `to` with congestion control `ca_name` and MSS_BYTES.
fn connect_with(ca_name: &str, to: SocketAddrV4) -> Result<TcpStream, String> {
    // SAFETY: plain socket(2).
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(format!("socket: {}", std::io::Error::last_os_error()));
    }
    // SAFETY: fd is a new socket we own.
    let stream = unsafe { TcpStream::from_raw_fd(fd) };
    setsockopt(
        fd,
        libc::IPPROTO_TCP,
        libc::TCP_CONGESTION,
        &ca_name.as_bytes()[0],
        ca_name.len(),
    )?;
    setsockopt(fd, libc::IPPROTO_TCP, libc::TCP_MAXSEG, &MSS_BYTES, 4)?;
    let sa = libc::sockaddr_in {
        sin_family: libc::AF_INET as _,
        sin_port: to.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*to.ip()).to_be(),
        },
        sin_zero: [0; 8],
    };
    // SAFETY: sa is a valid sockaddr_in.
    let rc = unsafe {
        libc::connect(
            fd,
            (&sa as *const libc::sockaddr_in).cast(),
            std::mem::size_of_val(&sa) as _,
        )
    };
    if rc != 0 {
        return Err(format!("connect: {}", std::io::Error::last_os_error()));
    }
    Ok(stream)
}

fn congestion_control_of(s: &TcpStream) -> String {
    let mut buf = [0u8; 16];
    let mut len = buf.len() as libc::socklen_t;
    // SAFETY: buf has len bytes.
    let rc = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_CONGESTION,
            buf.as_mut_ptr().cast(),
            &mut len,
        )
    };
    assert_eq!(rc, 0, "getsockopt(TCP_CONGESTION)");
    String::from_utf8_lossy(&buf[..len as usize])
        .trim_end_matches('\0')
        .to_string()
}

/// One transfer with `b`: the glue's state when the connection is
/// established and after the last byte was acknowledged.
fn transfer(b: &programs::Built) -> Result<(SocketState, SocketState), String> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).map_err(|e| e.to_string())?;
    let std::net::SocketAddr::V4(addr) = listener.local_addr().map_err(|e| e.to_string())? else {
        unreachable!("bound to an IPv4 address")
    };
    let sink = std::thread::spawn(move || -> std::io::Result<usize> {
        let (mut s, _) = listener.accept()?;
        let mut buf = vec![0u8; 1 << 16];
        let mut got = 0;
        loop {
            match s.read(&mut buf)? {
                0 => return Ok(got),
                n => got += n,
            }
        }
    });
    let mut s = connect_with(b.ca_name, addr)?;
    let uses = congestion_control_of(&s);
    if uses != b.ca_name {
        return Err(format!("the socket uses {uses}, not {}", b.ca_name));
    }
    let state = |s: &TcpStream| {
        programs::socket_state(b.algo, s.as_raw_fd())
            .map_err(|e| e.to_string())?
            .ok_or_else(|| "the glue has no state for the socket: its init did not run".to_string())
    };
    let at_start = state(&s)?;
    let chunk = vec![0x5a; 1 << 16];
    let mut sent = 0;
    let start = std::time::Instant::now();
    while start.elapsed() < std::time::Duration::from_millis(TRANSFER_MS) {
        s.write_all(&chunk).map_err(|e| format!("write: {e}"))?;
        sent += chunk.len();
    }
    s.shutdown(std::net::Shutdown::Write)
        .map_err(|e| e.to_string())?;
    let got = sink
        .join()
        .expect("sink thread")
        .map_err(|e| format!("read: {e}"))?;
    if got != sent {
        return Err(format!("the receiver got {got} bytes of {sent}"));
    }
    // The receiver has everything and closed: every byte is acknowledged.
    Ok((at_start, state(&s)?))
}

fn release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|r| r.trim().to_string())
        .unwrap_or_default()
}

#[test]
#[ignore = "loads BPF programs inside a guest of scripts/lts-kernels.sh (cargo test -- --ignored)"]
fn in_a_guest_every_program_loads_verifies_grows_cwnd_and_unloads() {
    if std::env::var_os("LONGFAT_QEMU_GUEST").is_none() {
        eprintln!(
            "in_a_guest_every_program_loads_verifies_grows_cwnd_and_unloads: SKIPPED: runs only \
             inside scripts/lts-kernels.sh's guests (it puts netem on the loopback)"
        );
        return;
    }
    let delay = format!("{ONE_WAY_DELAY_MS}ms");
    let tc = Command::new("tc")
        .args([
            "qdisc", "replace", "dev", "lo", "root", "netem", "delay", &delay, "limit", "100000",
        ])
        .status()
        .expect("tc");
    assert!(tc.success(), "tc qdisc replace dev lo root netem: {tc}");
    let release = release();
    let abi = programs::kernel_abi().unwrap_or_else(|e| panic!("Linux {release}: {e}"));
    let log_dir = std::env::temp_dir().join("longfat-kernel");
    let names: Vec<String> = programs::built()
        .iter()
        .map(|b| b.algo.to_string())
        .collect();
    assert_eq!(names, userspace::ALGOS, "every kernel algorithm is built");
    programs::load(&names, &log_dir)
        .unwrap_or_else(|e| panic!("Linux {release} ({}): {e}", abi.as_str()));
    let mut failures = Vec::new();
    let available = programs::available().expect("the kernel's list");
    for b in programs::built() {
        if !available.iter().any(|a| a == b.ca_name) {
            failures.push(format!("{}: loaded but not registered", b.ca_name));
            continue;
        }
        match transfer(b) {
            Ok((start, end)) => {
                println!(
                    "lts: Linux {release} ({}): {}: cwnd {:.5} -> {:.5} packets, {} of {} ACKs grew it",
                    abi.as_str(),
                    b.ca_name,
                    start.cwnd_fp as f64 / 65536.0,
                    end.cwnd_fp as f64 / 65536.0,
                    end.acks_grown,
                    end.acks_delivered
                );
                if start.cwnd_fp != INIT_CWND_FP {
                    failures.push(format!(
                        "{}: initial window {} / 2^16, not 10 packets",
                        b.ca_name, start.cwnd_fp
                    ));
                }
                // The glue handed the algorithm ACKs with growth, and its rules grew
                // the window (what a glue that loses the growth leaves at 10).
                // TCP-GT also shrinks the window at an epoch whose duration at the
                // receiver exceeds its minimum by 3.6 % (docs/algorithms.md), which
                // the guest's timing under TCG decides on a loaded host (10 ->
                // 9.8 packets with 36 of 36 ACKs growing it, with a build running
                // beside it): for it the ACKs that grew the window are the check.
                let must_end_larger = b.algo != "tcpgt";
                if end.acks_grown == 0 || (must_end_larger && end.cwnd_fp <= start.cwnd_fp) {
                    failures.push(format!(
                        "{}: the window did not grow ({} -> {} / 2^16, {} ACKs with growth)",
                        b.ca_name, start.cwnd_fp, end.cwnd_fp, end.acks_grown
                    ));
                }
            }
            Err(e) => failures.push(format!("{}: {e}", b.ca_name)),
        }
    }
    let unloaded = programs::unload(&names);
    let available = programs::available().expect("the kernel's list");
    match unloaded {
        Ok(_) => {
            for b in programs::built() {
                if available.iter().any(|a| a == b.ca_name) {
                    failures.push(format!("{}: still registered after unload", b.ca_name));
                }
                for pin in [programs::pin_path(b.algo), programs::state_pin_path(b.algo)] {
                    if pin.exists() {
                        failures.push(format!(
                            "{}: {} is still pinned after unload",
                            b.ca_name,
                            pin.display()
                        ));
                    }
                }
            }
        }
        Err(e) => failures.push(format!("unload: {e}")),
    }
    assert!(
        failures.is_empty(),
        "Linux {release} ({}):\n{}",
        abi.as_str(),
        failures.join("\n")
    );
}

/// The series scripts/lts-kernels.sh boots: bookworm's 6.1 and
/// bookworm-backports' 6.12.
const GUEST_SERIES: [&str; 2] = ["linux-image-6.1.0-", "linux-image-6.12."];

#[test]
#[ignore = "boots Debian's LTS kernels under QEMU: needs qemu-system-x86 and the network or a cache (cargo test -- --ignored)"]
fn the_same_inside_debians_lts_kernels_under_qemu() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/lts-kernels.sh");
    let exe = std::env::current_exe().expect("the test binary");
    let out = Command::new("bash")
        .arg(&script)
        .arg(&exe)
        .args([
            "--ignored",
            "--exact",
            "lts_kernels::in_a_guest_every_program_loads_verifies_grows_cwnd_and_unloads",
            "--nocapture",
        ])
        .stderr(std::process::Stdio::inherit())
        .output()
        .expect("bash scripts/lts-kernels.sh");
    let stdout = String::from_utf8_lossy(&out.stdout);
    print!("{stdout}");
    if out.status.code() == Some(77) {
        // The script printed why (no QEMU; no download and nothing cached).
        eprintln!("the_same_inside_debians_lts_kernels_under_qemu: SKIPPED (reason above)");
        return;
    }
    for series in GUEST_SERIES {
        let verdict = stdout
            .lines()
            .find_map(|l| {
                l.strip_prefix("lts-kernels: ")
                    .filter(|l| l.starts_with(series))
            })
            .unwrap_or_else(|| panic!("no verdict for {series}*: the kernel did not run"));
        assert!(verdict.contains(": passed ("), "{verdict}");
    }
    // (libtest may print "test NAME ... " before the first line)
    let guests: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.find("lts: Linux ").map(|i| &l[i..]))
        .collect();
    assert_eq!(
        guests.len(),
        6 * GUEST_SERIES.len(),
        "one line per algorithm and kernel:\n{}",
        guests.join("\n")
    );
    assert!(
        out.status.success(),
        "scripts/lts-kernels.sh: {}",
        out.status
    );
}
