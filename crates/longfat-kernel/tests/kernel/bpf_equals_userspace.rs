//! The BPF build of the algorithm headers computes exactly what the
//! userspace build computes (the one the differential tests compare with
//! longfat-cc): `kernel/userspace/bpf_check.c`, compiled with clang-19 for
//! BPF and loaded into the kernel (so it also passes the verifier), gets the
//! same seeded random events as the userspace library through
//! `BPF_PROG_TEST_RUN`, and after every event the two states must be
//! bit-identical (the arithmetic is integer-only, so there is no tolerance).
//! Twice: built with `-mcpu=v4` and with `-mcpu=v3`, as build/bpf.rs builds
//! the two object variants (docs/kernel.md, "Kernels"): clang emits
//! different code for each (v4's sign-extending loads and moves,
//! `BPF_MEMSX`/`BPF_MOVSX`, and store-immediates become shifts and
//! register stores in v3), so each build's own code is checked.
//!
//! Every kernel algorithm is checked (`for_each_kernel_algo!`: every
//! `kernel/<name>.bpf.c`, build/algos.rs).
//!
//! Ignored by default: loading BPF programs needs root (and a kernel with
//! BTF). Run with `cargo test -p longfat-kernel --test kernel
//! -- --ignored bpf_equals_userspace::`.

use std::path::PathBuf;

use libbpf_rs::{MapCore, MapFlags, Object, ObjectBuilder, ProgramInput};
use longfat_kernel::userspace::*;

/// `struct check_NAME` of bpf_check.c: a state and one event of each kind.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
struct Check<S: Copy> {
    s: S,
    a: lf_ack,
    l: lf_loss,
    r: lf_rto,
    op: u32,
    ret: u32,
}

fn bytes_of<T: Copy>(v: &T) -> Vec<u8> {
    // SAFETY: T is a plain repr(C) struct of integers, built from a zeroed value.
    unsafe {
        std::slice::from_raw_parts((v as *const T).cast::<u8>(), std::mem::size_of::<T>()).to_vec()
    }
}

fn from_bytes<T: Copy>(b: &[u8]) -> T {
    assert_eq!(b.len(), std::mem::size_of::<T>());
    // SAFETY: any bit pattern is a valid value of these integer structs.
    unsafe { std::ptr::read_unaligned(b.as_ptr().cast::<T>()) }
}

/// splitmix64
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

/// bpf_check.c built for the BPF instruction set `mcpu` ("v3", "v4").
fn build_object(mcpu: &str) -> PathBuf {
    let out = std::env::temp_dir().join(format!(
        "longfat_bpf_equals_{}_{mcpu}.o",
        std::process::id()
    ));
    let status = bpf_check_clang(mcpu, &out).status().expect("clang-19");
    assert!(
        status.success(),
        "bpf_check.c does not compile for BPF (-mcpu={mcpu})"
    );
    out
}

/// Drives the BPF program `check_NAME` and the userspace `S` with `events`
/// random events from `cases` random initial windows.
fn compare<S: CAlgo + std::fmt::Debug + PartialEq>(
    obj: &mut Object,
    name: &str,
    seed: u64,
    cases: u32,
    events: u32,
) {
    let map = {
        let map = obj
            .maps()
            .find(|m| m.name() == format!("map_{name}").as_str())
            .expect("map");
        assert_eq!(
            map.value_size() as usize,
            std::mem::size_of::<Check<S>>(),
            "{name}: struct check_{name} layout"
        );
        libbpf_rs::MapHandle::try_from(&map).expect("map handle")
    };
    let mut progs = obj.progs_mut();
    let prog = progs
        .find(|p| p.name() == format!("check_{name}").as_str())
        .expect("program");
    let key = 0u32.to_ne_bytes();
    let mut rng = Rng(seed);
    for case in 0..cases {
        let cwnd = 1 + rng.below(60_000);
        let ss = if rng.below(2) == 0 {
            INFINITE_FP
        } else {
            (2 + rng.below(80_000)) << FP_SHIFT
        };
        let mut us = S::init(cwnd << FP_SHIFT, ss);
        let mut now = 1_000_000 + rng.below(1 << 34);
        let (mut min_rtt, mut srtt) = (0u64, 0u64);
        let offset = rng.below(1 << 40);
        for i in 0..events {
            now += rng.below(20_000)
                + if rng.below(500) == 0 {
                    rng.below(5_000_000)
                } else {
                    0
                };
            let base = 1_000 + rng.below(300_000);
            let rtt = base + rng.below(base);
            min_rtt = if min_rtt == 0 { rtt } else { min_rtt.min(rtt) };
            srtt = if srtt == 0 { rtt } else { (7 * srtt + rtt) / 8 };
            // SAFETY: zeroed integer structs are valid.
            let mut c: Check<S> = unsafe { std::mem::zeroed() };
            c.s = us;
            let delivered = 1 + rng.below(64) as u32;
            let in_recovery = rng.below(10) == 0;
            // echo the current epoch often (TCP-GT's epochs end), else another tag
            let tag = us.on_send_peek().wrapping_sub(rng.below(3) as u32);
            c.a = lf_ack {
                now_us: now,
                delivered_pkts: delivered,
                growth_pkts: if in_recovery || rng.below(7) == 0 {
                    0
                } else {
                    delivered
                },
                cum_acked_pkts: delivered,
                in_flight_pkts: 10,
                in_recovery: u8::from(in_recovery),
                rtt_updated: u8::from(rng.below(10) != 0),
                has_ts: u8::from(rng.below(5) != 0),
                rtt_latest_us: rtt,
                rtt_min_us: min_rtt,
                rtt_smoothed_us: srtt,
                ts_echoed_sender_us: now - rtt,
                ts_receiver_us: now - rng.below(rtt) + offset,
                ts_echoed_tag: tag,
            };
            c.l = lf_loss {
                now_us: now,
                in_flight_pkts: 10,
                lost_pkts: 1,
                rtt_latest_us: rtt,
                rtt_min_us: min_rtt,
                rtt_smoothed_us: srtt,
            };
            c.r = lf_rto {
                now_us: now,
                backoff: 1 + rng.below(3) as u32,
                reduce: u8::from(rng.below(2) == 0),
                in_flight_pkts: if rng.below(2) == 0 {
                    0
                } else {
                    rng.below(cwnd + 1) as u32
                },
            };
            // bpf_check.c's ops: 1 on_ack, 2 on_loss, 3 on_recovery_exit,
            // 4 on_rto, 5 on_timeout_recovery_exit, else on_send
            c.op = match rng.below(100) {
                0..=2 => 2,
                3..=4 => 3,
                5..=6 => 5,
                7..=8 => 4,
                9..=10 => 6,
                _ => 1,
            };
            map.update(&key, &bytes_of(&c), MapFlags::ANY)
                .expect("map update");
            let out = prog
                .test_run(ProgramInput::default())
                .expect("BPF_PROG_TEST_RUN");
            assert_eq!(out.return_value, 0);
            let after: Check<S> = from_bytes(
                &map.lookup(&key, MapFlags::ANY)
                    .expect("lookup")
                    .expect("value"),
            );
            let ret = match c.op {
                1 => {
                    us.on_ack(&c.a);
                    0
                }
                2 => {
                    us.on_loss(&c.l);
                    0
                }
                3 => {
                    us.on_recovery_exit(now);
                    0
                }
                4 => {
                    us.on_rto(&c.r);
                    0
                }
                5 => {
                    us.on_timeout_recovery_exit(now);
                    0
                }
                _ => us.on_send(now, 0, 1448, false),
            };
            assert_eq!(
                after.s, us,
                "{name}: case {case}, event {i} (op {}): BPF and userspace states differ",
                c.op
            );
            if c.op == 6 {
                // 0 from both where the algorithm has no on_send
                assert_eq!(after.ret, ret, "{name}: on_send tag");
            }
        }
    }
}

/// The epoch a TCP-GT packet sent now would carry; 0 for the others.
trait Peek {
    fn on_send_peek(&self) -> u32;
}
impl<S: CAlgo> Peek for S {
    fn on_send_peek(&self) -> u32 {
        let mut copy = *self;
        copy.on_send(0, 0, 0, false)
    }
}

#[test]
#[ignore = "loads BPF programs: needs root and BTF (cargo test -- --ignored)"]
fn algorithm_headers_pass_the_verifier_and_equal_the_userspace_build() {
    for mcpu in ["v4", "v3"] {
        let path = build_object(mcpu);
        let mut obj = ObjectBuilder::default()
            .open_file(&path)
            .unwrap_or_else(|e| panic!("open bpf_check.o (-mcpu={mcpu}): {e}"))
            .load()
            .unwrap_or_else(|e| {
                panic!("load (verifier) bpf_check.o (-mcpu={mcpu}): {e}: see libbpf's log above")
            });
        let _ = std::fs::remove_file(&path);
        eprintln!("bpf_check.o with -mcpu={mcpu}");
        let mut compared = Vec::new();
        macro_rules! check {
            ($name:ident, $state:ty) => {
                let name = stringify!($name);
                // a seed of its own for each algorithm, 1, 2, ... by name
                let seed = 1 + ALGOS.iter().position(|a| *a == name).expect("in ALGOS") as u64;
                compare::<$state>(&mut obj, name, seed, 20, 1_000);
                compared.push(name);
            };
        }
        longfat_kernel::for_each_kernel_algo!(check);
        assert_eq!(compared, ALGOS, "every kernel algorithm, once");
    }
}
