/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * Fixed-point arithmetic for longfat's C congestion controls.
 *
 * The same source compiles for BPF (clang -target bpf -mcpu=v4 -O2: no
 * floating point, no 128-bit types, bounded loops) and for userspace (gcc or
 * clang). Formats:
 *   - windows: u64 in 1/2^16 packets (LF_FP_SHIFT, longfat_cc.h), "fp";
 *   - dimensionless factors (decreases, betas, ratios): u64 in 1/2^32, "q32";
 *   - times: integer microseconds (some states keep ns where the Rust
 *     controller's rounding must be reproduced exactly).
 *
 * Every function states its rounding and its error bound; the bounds of the
 * approximations (log2, exp2) are also checked against f64 in
 * crates/longfat-kernel/tests/kernel/fixed_point.rs. docs/kernel.md collects them.
 */
#ifndef LONGFAT_FIXED_H
#define LONGFAT_FIXED_H

#include "longfat_cc.h"

#define LF_U64_MAX ((u64)-1)
#define LF_Q32_SHIFT 32
#define LF_Q32_ONE ((u64)1 << LF_Q32_SHIFT)

/*
 * Branch-free predicates (1 or 0). BPF has no set-on-condition instruction,
 * so a comparison turned into a value costs a jump, and every jump inside a
 * loop multiplies the states the verifier walks; the loops below use these
 * instead, so each iteration is straight-line code.
 */
/* Hides a value from the optimizer (libbpf's barrier_var), which would
 * otherwise turn these predicates back into compares and jumps. */
#define lf_opaque(x) asm volatile("" : "+r"(x))

/* x != 0 */
static __always_inline u64 lf_nz(u64 x)
{
	u64 t = x | (0 - x);

	lf_opaque(t);
	t >>= 63;
	lf_opaque(t);
	return t;
}

/* a < b, unsigned (Hacker's Delight 2-12: the borrow of a - b) */
static __always_inline u64 lf_lt(u64 a, u64 b)
{
	u64 t = (~a & b) | ((~a | b) & (a - b));

	lf_opaque(t);
	t >>= 63;
	lf_opaque(t);
	return t;
}

/* min and max, branch-free */
static __always_inline u64 lf_min_u64(u64 a, u64 b)
{
	return b ^ ((a ^ b) & (0 - lf_lt(a, b)));
}

static __always_inline u64 lf_max_u64(u64 a, u64 b)
{
	return a ^ ((a ^ b) & (0 - lf_lt(a, b)));
}

/* The exact 128-bit product a * b as hi:lo (four 32x32 products; BPF has no
 * 128-bit multiply). Exact. */
static __always_inline void lf_mul_128(u64 a, u64 b, u64 *hi, u64 *lo)
{
	u64 a0 = (u32)a, a1 = a >> 32, b0 = (u32)b, b1 = b >> 32;
	u64 p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
	u64 mid = (p00 >> 32) + (u32)p01 + (u32)p10;

	*lo = (mid << 32) | (u32)p00;
	*hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

/* Index of the most significant set bit of x > 0 (0..63). Exact. */
static __always_inline u32 lf_msb64(u64 x)
{
	u64 n = 0, s;

	s = lf_nz(x >> 32) << 5;
	x >>= s;
	n += s;
	s = lf_nz(x >> 16) << 4;
	x >>= s;
	n += s;
	s = lf_nz(x >> 8) << 3;
	x >>= s;
	n += s;
	s = lf_nz(x >> 4) << 2;
	x >>= s;
	n += s;
	s = lf_nz(x >> 2) << 1;
	x >>= s;
	n += s;
	n += lf_nz(x >> 1);
	return (u32)n;
}

/*
 * floor((hi:lo) / d) and the remainder, for d > 0. Exact when the quotient
 * fits in 64 bits (hi < d); otherwise saturates at LF_U64_MAX (remainder
 * 0). d = 0 is read as d = 1 (BPF would return 0; userspace would trap).
 * Knuth's algorithm D with two 32-bit digits (Hacker's Delight, divlu): two
 * 64-bit divisions, each digit corrected at most twice; the corrections are
 * branch-free (see lf_lt), so the whole division is straight-line code.
 */
static __always_inline u64 lf_div_128(u64 hi, u64 lo, u64 d, u64 *rem)
{
	const u64 b = (u64)1 << 32;
	u64 sat, s, vn1, vn0, un32, un10, un1, un0, q1, q0, rhat, un21, c;

	d += 1 - lf_nz(d);
	sat = 0 - (1 - lf_lt(hi, d)); /* all ones when the quotient overflows */
	hi &= ~sat;
	s = 63 - lf_msb64(d); /* normalize: the divisor's top bit set */
	d <<= s;
	vn1 = d >> 32;
	vn0 = d & 0xffffffffULL;
	un32 = (hi << s) | ((lo >> 1) >> (63 - s)); /* lo >> (64 - s), 0 for s = 0 */
	un10 = lo << s;
	un1 = un10 >> 32;
	un0 = un10 & 0xffffffffULL;

	q1 = un32 / vn1;
	rhat = un32 - q1 * vn1;
	/* at most two corrections; the second only while rhat < b */
	c = (1 - lf_lt(q1, b)) | lf_lt(b * rhat + un1, q1 * vn0);
	q1 -= c;
	rhat += vn1 & (0 - c);
	c = c & lf_lt(rhat, b) & ((1 - lf_lt(q1, b)) | lf_lt(b * rhat + un1, q1 * vn0));
	q1 -= c;

	un21 = un32 * b + un1 - q1 * d;
	q0 = un21 / vn1;
	rhat = un21 - q0 * vn1;
	c = (1 - lf_lt(q0, b)) | lf_lt(b * rhat + un0, q0 * vn0);
	q0 -= c;
	rhat += vn1 & (0 - c);
	c = c & lf_lt(rhat, b) & ((1 - lf_lt(q0, b)) | lf_lt(b * rhat + un0, q0 * vn0));
	q0 -= c;

	*rem = ((un21 * b + un0 - q0 * d) >> s) & ~sat;
	return (q1 * b + q0) | sat;
}

/* a * b / c rounded to nearest (halves up), c > 0, with a 128-bit
 * intermediate: error <= 1/2 (in units of the result). Saturates at
 * LF_U64_MAX. */
static __always_inline u64 lf_mul_div(u64 a, u64 b, u64 c)
{
	u64 hi, lo, rem, q;

	lf_mul_128(a, b, &hi, &lo);
	q = lf_div_128(hi, lo, c, &rem);
	/* + 1 when rem >= c - rem, unless saturated */
	return q + ((1 - lf_lt(rem, c - rem)) & lf_nz(~q));
}

/* a * b / c rounded down, c > 0: error in [0, 1). Saturates. */
static __always_inline u64 lf_mul_div_floor(u64 a, u64 b, u64 c)
{
	u64 hi, lo, rem;

	lf_mul_128(a, b, &hi, &lo);
	return lf_div_128(hi, lo, c, &rem);
}

/* n / d rounded to nearest (halves up), d > 0: error <= 1/2. */
static __always_inline u64 lf_div_round(u64 n, u64 d)
{
	u64 q = n / d, r = n - q * d;

	return q + (1 - lf_lt(r, d - r));
}

/* (a * b) >> s rounded to nearest (halves up), 0 < s < 64, with a 128-bit
 * intermediate: error <= 1/2. Saturates at LF_U64_MAX. */
static __always_inline u64 lf_mul_shr(u64 a, u64 b, u32 s)
{
	u64 hi, lo, half = (u64)1 << (s - 1), lo2;

	lf_mul_128(a, b, &hi, &lo);
	lo2 = lo + half;
	hi += lf_lt(lo2, lo); /* the carry */
	/* all ones when the result does not fit */
	return (hi << (64 - s)) | (lo2 >> s) | (0 - lf_nz(hi >> s));
}

/* floor(sqrt(x)), exact: the bit-by-bit method, 32 iterations. */
static __always_inline u64 lf_isqrt64(u64 x)
{
	u64 r = 0, bit = (u64)1 << 62;
	int i;

	for (i = 0; i < 32; i++) {
		u64 ge = 1 - lf_lt(x, r + bit), m = 0 - ge;

		x -= (r + bit) & m;
		r = (r >> 1) + (bit & m);
		bit >>= 2;
	}
	return r;
}

/*
 * log2(x) for an integer x >= 1, in q32 (result < 64 * 2^32).
 * Method: the integer part is the top bit n; the mantissa m = x / 2^n in
 * [1, 2) is kept with 31 fractional bits (truncated when n > 31: relative
 * error < 2^-31) and its 32 fractional bits of log2 come one at a time by
 * squaring (m^2 >= 2: bit set, m /= 2), each square truncated to 31 bits.
 * Bound: the result never exceeds log2(x) and is below it by at most
 * 2^-27 (measured over 2*10^6 arguments and all powers of two and their
 * neighbours: worst 1.4e-9 = 2^-29.4; tests/kernel/fixed_point.rs asserts 2^-27).
 * log2(0) returns 0. Straight-line code (no data-dependent branch).
 */
static __always_inline u64 lf_log2_q32(u64 x)
{
	u64 n = lf_msb64(x), y, r, ge;
	int i;

	/* y = x >> (n - 31) or x << (31 - n), branch-free; x = 0 gives y = 0
	 * and log2 0 */
	ge = 1 - lf_lt(n, 31);
	y = (x >> ((n - 31) & (0 - ge))) << ((31 - n) & (ge - 1));
	r = n << 32;
	for (i = 31; i >= 0; i--) {
		u64 b;

		y = (y * y) >> 31; /* y < 2^32: y * y < 2^64 */
		b = y >> 32;	   /* y < 2^33: the bit is y >= 2 */
		y >>= b;
		r |= b << i;
	}
	return r;
}

/*
 * 2^y for y in q32 with y < 31 * 2^32, the result in q32 (so < 2^63).
 * Method: 2^int(y) times the product of 2^(2^-i) over the set fractional
 * bits i = 1..32 (a 32-entry table of q31 constants rounded to nearest),
 * each product rounded to nearest in q31. Bound: relative error below 2^-26
 * (33 roundings of at most 2^-32 each, plus the final shift; measured worst
 * 2.8e-9 = 2^-28.4 over 2*10^6 arguments; tests/kernel/fixed_point.rs asserts 2^-26).
 * Arguments at or above 31 * 2^32 saturate to LF_U64_MAX. Straight-line.
 */
static __always_inline u64 lf_exp2_q32(u64 y)
{
	/* round(2^(2^-i) * 2^31), i = 1..32 */
	static const u32 tab[32] = {
		3037000500U, 2553802834U, 2341847524U, 2242560872U,
		2194507417U, 2170868212U, 2159144272U, 2153306067U,
		2150392887U, 2148937775U, 2148210589U, 2147847087U,
		2147665360U, 2147574502U, 2147529075U, 2147506361U,
		2147495005U, 2147489326U, 2147486487U, 2147485068U,
		2147484358U, 2147484003U, 2147483825U, 2147483737U,
		2147483692U, 2147483670U, 2147483659U, 2147483654U,
		2147483651U, 2147483649U, 2147483649U, 2147483648U,
	};
	u64 n = y >> 32, f = (u32)y, r = (u64)1 << 31;
	u64 sat = 0 - (1 - lf_lt(n, 31)); /* all ones at or above 31 */
	int i;

	n &= 31;
	for (i = 0; i < 32; i++) {
		/* the factor 2^(2^-(i+1)) when bit i+1 of the fraction is set, else 1 */
		u64 m = (u64)tab[i] - ((u64)1 << 31);

		m = ((u64)1 << 31) + (m & (0 - ((f >> (31 - i)) & 1)));
		r = (r * m + ((u64)1 << 30)) >> 31; /* r < 2^33 */
	}
	return (r << ((n + 1) & 63)) | sat; /* q31 -> q32, times 2^n */
}

/* x^(num/den) for x in fp (x >= 1 packet), result in q32: exp2 of
 * (num/den) log2(x) (the exponent rounded to nearest in q32). Relative error
 * below (num/den) * ln 2 * 2^-27 + 2^-26 + 2^-32 * ln 2 (from the two bounds
 * above and the exponent's rounding); for num/den = 0.8: below 2^-25. */
static __always_inline u64 lf_pow_fp_q32(u64 x_fp, u64 num, u64 den)
{
	/* log2 of the window in packets, 0 for x <= 1 packet */
	u64 l = lf_max_u64(lf_log2_q32(x_fp), (u64)LF_FP_SHIFT << 32) - ((u64)LF_FP_SHIFT << 32);

	return lf_exp2_q32(lf_mul_div(l, num, den));
}

/* a / b in q32 rounded to nearest (b > 0; saturates). Error <= 2^-33. */
static __always_inline u64 lf_ratio_q32(u64 a, u64 b)
{
	return lf_mul_div(a, LF_Q32_ONE, b);
}

/* x * f for a window x (fp) and a factor f (q32), in fp, rounded to
 * nearest: error <= 2^-17 packets beyond f's own. */
static __always_inline u64 lf_scale_fp(u64 x_fp, u64 f_q32)
{
	return lf_mul_shr(x_fp, f_q32, 32);
}

#endif /* LONGFAT_FIXED_H */
