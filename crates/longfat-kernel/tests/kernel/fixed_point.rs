//! The fixed-point helpers of `kernel/include/longfat_fixed.h` and the
//! response functions built on them, against f64 and against longfat-cc,
//! with the error bounds the header states (docs/kernel.md, "The C
//! algorithms and their differential tests"). Deterministic: the arguments
//! come from a fixed-seed generator and fixed grids.

use longfat_cc::highspeed::HsResponse;
use longfat_cc::ltcp::LtcpConfig;
use longfat_kernel::userspace::*;

/// splitmix64: a fixed, seeded stream of arguments.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    /// Arguments spread over all magnitudes.
    fn wide(&mut self) -> u64 {
        let shift = self.next() % 64;
        self.next() >> shift
    }
}

const Q32: f64 = 4_294_967_296.0;

#[test]
fn mul_div_and_mul_shr_are_the_exact_128_bit_results_rounded_to_nearest() {
    let mut rng = Rng(1);
    for _ in 0..200_000 {
        let (a, b, c) = (rng.wide(), rng.wide(), rng.wide() | 1);
        let p = u128::from(a) * u128::from(b);
        let (q, r) = (p / u128::from(c), p % u128::from(c));
        let nearest = if 2 * r >= u128::from(c) { q + 1 } else { q };
        // SAFETY: plain integer functions.
        let (got, floor) = unsafe { (lf_us_mul_div(a, b, c), lf_us_mul_div_floor(a, b, c)) };
        if nearest > u128::from(u64::MAX) {
            assert_eq!(got, u64::MAX, "{a} * {b} / {c} saturates");
        } else {
            assert_eq!(u128::from(got), nearest, "{a} * {b} / {c}");
        }
        if q <= u128::from(u64::MAX) {
            assert_eq!(u128::from(floor), q, "floor {a} * {b} / {c}");
        }
        let s = 1 + (rng.next() % 63) as u32;
        let m = (p + (1u128 << (s - 1))) >> s;
        // SAFETY: as above.
        let got = unsafe { lf_us_mul_shr(a, b, s) };
        if m > u128::from(u64::MAX) {
            assert_eq!(got, u64::MAX);
        } else {
            assert_eq!(u128::from(got), m, "({a} * {b}) >> {s}");
        }
    }
}

#[test]
fn isqrt_is_exact() {
    let mut rng = Rng(2);
    for x in (0..10_000u64)
        .chain((0..200_000).map(|_| rng.wide()))
        .chain([u64::MAX])
    {
        // SAFETY: plain integer function.
        let r = u128::from(unsafe { lf_us_isqrt64(x) });
        assert!(
            r * r <= u128::from(x) && (r + 1) * (r + 1) > u128::from(x),
            "{x}"
        );
    }
}

/// longfat_fixed.h: lf_log2_q32 is never above log2(x) and at most 2^-27 below.
#[test]
fn log2_error_is_within_its_stated_bound() {
    let mut rng = Rng(3);
    let mut worst = 0.0f64;
    let near_powers =
        (0..64).flat_map(|n| [-2i64, -1, 0, 1, 2].map(move |d| (1u64 << n).wrapping_add_signed(d)));
    for x in near_powers
        .chain((0..500_000).map(|_| rng.wide()))
        .filter(|&x| x > 0)
    {
        // SAFETY: plain integer function.
        let got = unsafe { lf_us_log2_q32(x) } as f64 / Q32;
        let err = (x as f64).log2() - got;
        // f64's own log2 of a 64-bit x rounded to 53 bits: 2^-52 relative slack.
        assert!(
            err > -1e-14,
            "x = {x}: {got} above log2 = {}",
            (x as f64).log2()
        );
        worst = worst.max(err);
    }
    eprintln!("log2: worst error {worst:e} = 2^{:.2}", worst.log2());
    assert!(worst <= 2f64.powi(-27), "worst log2 error {worst:e}");
    assert!(
        worst > 0.0,
        "a bound that is never approached tests nothing"
    );
}

/// longfat_fixed.h: lf_exp2_q32 within 2^-26 relative for y in [0, 30].
#[test]
fn exp2_error_is_within_its_stated_bound() {
    let mut rng = Rng(4);
    let mut worst = 0.0f64;
    for _ in 0..500_000 {
        let y = rng.next() % (30u64 << 32);
        // SAFETY: plain integer function.
        let got = unsafe { lf_us_exp2_q32(y) } as f64 / Q32;
        let want = (y as f64 / Q32).exp2();
        worst = worst.max((got / want - 1.0).abs());
    }
    eprintln!(
        "exp2: worst relative error {worst:e} = 2^{:.2}",
        worst.log2()
    );
    assert!(worst <= 2f64.powi(-26), "worst exp2 error {worst:e}");
    // SAFETY: as above.
    assert_eq!(unsafe { lf_us_exp2_q32(0) }, Q32_ONE);
    assert_eq!(unsafe { lf_us_exp2_q32(31 << 32) }, u64::MAX, "saturates");
}

/// hs_response.h against longfat-cc's HsResponse (the f64 original): b(w)
/// within 2^-30, a(w) within 2^-24 relative, over every window from 1 to
/// 200,000 packets in steps of 1/7 packet near the ends and coarser between.
#[test]
fn highspeed_response_matches_rust_within_its_bounds() {
    let r = HsResponse::default();
    let mut w = 1.0f64;
    let (mut worst_a, mut worst_b) = (0.0f64, 0.0f64);
    while w < 200_000.0 {
        let fp = to_fp(w);
        let wq = from_fp(fp); // the window the C side sees
                              // SAFETY: plain integer functions.
        let (a, b) = unsafe {
            (
                lf_us_hs_a_q32(fp) as f64 / Q32,
                lf_us_hs_b_q32(fp) as f64 / Q32,
            )
        };
        worst_b = worst_b.max((b - r.b(wq)).abs());
        worst_a = worst_a.max((a / r.a(wq) - 1.0).abs());
        w += if (30.0..50.0).contains(&w) || (82_000.0..84_000.0).contains(&w) {
            1.0 / 7.0
        } else {
            0.37 * w.sqrt()
        };
    }
    eprintln!(
        "b(w): worst error {worst_b:e} = 2^{:.2}; a(w): worst relative error {worst_a:e} = 2^{:.2}",
        worst_b.log2(),
        worst_a.log2()
    );
    assert!(worst_b <= 2f64.powi(-30), "b(w) error {worst_b:e}");
    assert!(worst_a <= 2f64.powi(-24), "a(w) relative error {worst_a:e}");
}

/// hs_response.h's precomputed log2 of Low_Window and High_Window are what
/// lf_log2_q32 gives (so b(w) is exactly 0.5 and 0.1 at the two ends).
#[test]
fn highspeed_precomputed_logs_are_lf_log2() {
    // SAFETY: plain integer functions.
    unsafe {
        assert_eq!(lf_us_hs_log2_low_q32(), lf_us_log2_q32(38 << 16));
        assert_eq!(lf_us_hs_log2_high_q32(), lf_us_log2_q32(83_000 << 16));
        assert_eq!(lf_us_hs_b_q32(38 << 16), Q32_ONE / 2);
        assert_eq!(lf_us_hs_b_q32(83_000 << 16), 429_496_730);
        assert_eq!(lf_us_hs_a_q32(38 << 16), Q32_ONE);
    }
}

/// ltcp.h's binary search gives ltcp.rs's layer count (eq. (1)) for windows
/// on, just below and just above every threshold W_K up to K = 60.
#[test]
fn ltcp_layers_for_matches_rust() {
    let cfg = LtcpConfig::default();
    for k in 1..=60u32 {
        let w_k = cfg.layer_start_pkts(k);
        for w in [w_k - 1.0 / 65536.0, w_k, w_k + 1.0 / 65536.0, w_k + 0.5] {
            if w < 0.0 {
                continue;
            }
            // SAFETY: plain integer function.
            let c = unsafe { lf_us_ltcp_layers_for(to_fp(w)) };
            assert_eq!(c, cfg.layers_for(w), "cwnd {w}");
        }
    }
}

/// Every algorithm header compiles as BPF (`clang-19 -target bpf -mcpu=v4
/// -O2`): kernel/userspace/bpf_check.c calls each function of each header.
/// The build script runs the same check; this test fails, rather than skips,
/// when clang-19 is missing, since the kernel path needs it.
#[test]
fn algorithm_headers_compile_for_bpf() {
    let out = std::env::temp_dir().join(format!("longfat_bpf_check_{}.o", std::process::id()));
    let result = bpf_check_clang("v4", &out)
        .args(["-Wall", "-Werror"])
        .output()
        .expect("clang-19 is needed for the kernel path (scripts/setup.sh installs it)");
    let _ = std::fs::remove_file(&out);
    assert!(
        result.status.success(),
        "BPF compile of kernel/algo/*.h failed:\n{}",
        String::from_utf8_lossy(&result.stderr)
    );
}
