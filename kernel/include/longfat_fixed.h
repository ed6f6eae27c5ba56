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
 * crates/longfat-kernel/tests/fixed_point.rs. docs/kernel.md collects them.
 */
#ifndef LONGFAT_FIXED_H
#define LONGFAT_FIXED_H

#include "longfat_cc.h"

#define LF_U64_MAX ((u64)-1)
#define LF_Q32_SHIFT 32
#define LF_Q32_ONE ((u64)1 << LF_Q32_SHIFT)

static __always_inline u64 lf_min_u64(u64 a, u64 b)
{
	return a < b ? a : b;
}

static __always_inline u64 lf_max_u64(u64 a, u64 b)
{
	return a > b ? a : b;
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

/* floor((hi:lo) / d) for d > 0, and the remainder. Saturates at LF_U64_MAX
 * (remainder 0) when the quotient does not fit in 64 bits. Exact otherwise:
 * restoring long division, 64 iterations (a bounded loop). */
static __always_inline u64 lf_div_128(u64 hi, u64 lo, u64 d, u64 *rem)
{
	u64 q = 0, r = hi;
	int i;

	if (hi == 0) {
		*rem = lo % d;
		return lo / d;
	}
	if (hi >= d) {
		*rem = 0;
		return LF_U64_MAX;
	}
	/* invariant: r < d */
	for (i = 0; i < 64; i++) {
		u64 top = r >> 63;

		r = (r << 1) | (lo >> 63);
		lo <<= 1;
		q <<= 1;
		/* with top set the true remainder is 2^64 + r >= d; r - d wraps right */
		if (top || r >= d) {
			r -= d;
			q |= 1;
		}
	}
	*rem = r;
	return q;
}

/* a * b / c rounded to nearest (halves up), c > 0, with a 128-bit
 * intermediate: error <= 1/2 (in units of the result). Saturates at
 * LF_U64_MAX. */
static __always_inline u64 lf_mul_div(u64 a, u64 b, u64 c)
{
	u64 hi, lo, rem, q;

	lf_mul_128(a, b, &hi, &lo);
	q = lf_div_128(hi, lo, c, &rem);
	if (q != LF_U64_MAX && rem >= c - rem)
		q++;
	return q;
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

	return r >= d - r ? q + 1 : q;
}

/* (a * b) >> s rounded to nearest (halves up), 0 < s < 64, with a 128-bit
 * intermediate: error <= 1/2. Saturates at LF_U64_MAX. */
static __always_inline u64 lf_mul_shr(u64 a, u64 b, u32 s)
{
	u64 hi, lo, half = (u64)1 << (s - 1), lo2;

	lf_mul_128(a, b, &hi, &lo);
	lo2 = lo + half;
	if (lo2 < lo)
		hi++;
	if (hi >> s)
		return LF_U64_MAX;
	return (hi << (64 - s)) | (lo2 >> s);
}

/* Index of the most significant set bit of x > 0 (0..63). Exact. */
static __always_inline u32 lf_msb64(u64 x)
{
	u32 n = 0;

	if (x >> 32) {
		n += 32;
		x >>= 32;
	}
	if (x >> 16) {
		n += 16;
		x >>= 16;
	}
	if (x >> 8) {
		n += 8;
		x >>= 8;
	}
	if (x >> 4) {
		n += 4;
		x >>= 4;
	}
	if (x >> 2) {
		n += 2;
		x >>= 2;
	}
	if (x >> 1)
		n += 1;
	return n;
}

/* floor(sqrt(x)), exact: the bit-by-bit method, 32 iterations. */
static __always_inline u64 lf_isqrt64(u64 x)
{
	u64 r = 0, bit = (u64)1 << 62;
	int i;

	for (i = 0; i < 32; i++) {
		if (x >= r + bit) {
			x -= r + bit;
			r = (r >> 1) + bit;
		} else {
			r >>= 1;
		}
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
 * neighbours: worst 1.4e-9 = 2^-29.4; tests/fixed_point.rs asserts 2^-27).
 * log2(0) returns 0.
 */
static __always_inline u64 lf_log2_q32(u64 x)
{
	u32 n;
	u64 y, r;
	int i;

	if (x == 0)
		return 0;
	n = lf_msb64(x);
	y = n >= 31 ? x >> (n - 31) : x << (31 - n);
	r = (u64)n << 32;
	for (i = 31; i >= 0; i--) {
		y = (y * y) >> 31; /* y < 2^32: y * y < 2^64 */
		if (y >= ((u64)1 << 32)) {
			y >>= 1;
			r |= (u64)1 << i;
		}
	}
	return r;
}

/*
 * 2^y for y in q32 with y < 31 * 2^32, the result in q32 (so < 2^63).
 * Method: 2^int(y) times the product of 2^(2^-i) over the set fractional
 * bits i = 1..32 (a 32-entry table of q31 constants rounded to nearest),
 * each product rounded to nearest in q31. Bound: relative error below 2^-26
 * (33 roundings of at most 2^-32 each, plus the final shift; measured worst
 * 2.8e-9 = 2^-28.4 over 2*10^6 arguments; tests/fixed_point.rs asserts 2^-26).
 * Arguments at or above 31 * 2^32 saturate to LF_U64_MAX.
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
	int i;

	if (n >= 31)
		return LF_U64_MAX;
	for (i = 0; i < 32; i++) {
		if ((f >> (31 - i)) & 1)
			r = (r * tab[i] + ((u64)1 << 30)) >> 31; /* r < 2^33 */
	}
	return r << (n + 1); /* q31 -> q32, times 2^n */
}

/* x^(num/den) for x in fp (x >= 1 packet), result in q32: exp2 of
 * (num/den) log2(x) (the exponent rounded to nearest in q32). Relative error
 * below (num/den) * ln 2 * 2^-27 + 2^-26 + 2^-32 * ln 2 (from the two bounds
 * above and the exponent's rounding); for num/den = 0.8: below 2^-25. */
static __always_inline u64 lf_pow_fp_q32(u64 x_fp, u64 num, u64 den)
{
	u64 l = lf_log2_q32(x_fp);

	if (l <= ((u64)LF_FP_SHIFT << 32))
		return LF_Q32_ONE; /* x <= 1 */
	l -= (u64)LF_FP_SHIFT << 32;
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
