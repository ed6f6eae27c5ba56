/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * HighSpeed TCP's response function (RFC 3649 §5) in fixed point, shared by
 * highspeed.h and ehstcp.h: longfat-cc's HsResponse with its defaults
 * (Low_Window 38, High_Window 83,000, High_Decrease 0.1).
 */
#ifndef LONGFAT_ALGO_HS_RESPONSE_H
#define LONGFAT_ALGO_HS_RESPONSE_H

#include "window.h"

/* The windows and lf_log2_q32 of them (precomputed for the defaults, so
 * that b(w) takes one log2, not three; tests/kernel/fixed_point.rs checks the
 * constants against lf_log2_q32). */
#ifndef LF_HS_LOW_WINDOW_FP
#define LF_HS_LOW_WINDOW_FP (38 * LF_FP_ONE)
#define LF_HS_LOG2_LOW_Q32 91259153777ULL
#else
#define LF_HS_LOG2_LOW_Q32 lf_log2_q32(LF_HS_LOW_WINDOW_FP)
#endif
#ifndef LF_HS_HIGH_WINDOW_FP
#define LF_HS_HIGH_WINDOW_FP (83000 * LF_FP_ONE)
#define LF_HS_LOG2_HIGH_Q32 138902780185ULL
#else
#define LF_HS_LOG2_HIGH_Q32 lf_log2_q32(LF_HS_HIGH_WINDOW_FP)
#endif
/* round(0.1 * 2^32): 0.1 + 1.6e-11 */
#ifndef LF_HS_HIGH_DECREASE_Q32
#define LF_HS_HIGH_DECREASE_Q32 429496730ULL
#endif

/*
 * b(w) in q32 (HsResponse::b): 0.5 at or below Low_Window, High_Decrease at
 * or above High_Window, between them the RFC 3649 §5 log line
 *   b = 0.5 + (High_Decrease - 0.5) (ln w - ln Low) / (ln High - ln Low).
 * The logs are lf_log2_q32 of the fp windows (the base and the 2^16 scale
 * cancel in the differences). The line is evaluated at w clamped to [Low,
 * High], where it gives exactly 0.5 and High_Decrease at the ends, so the
 * clamp replaces the branches (the BPF verifier walks every branch).
 * Error: the log2 of w is low by at most 2^-27, and the ratio of differences
 * (denominator log2(83000/38) = 11.09) moves by at most 0.4 * 2^-27 / 11.09,
 * plus two roundings of 2^-33: |error| < 2^-30.
 */
static __always_inline u64 lf_hs_b_q32(u64 w_fp)
{
	u64 l;

	w_fp = lf_max_u64(lf_min_u64(w_fp, LF_HS_HIGH_WINDOW_FP), LF_HS_LOW_WINDOW_FP);
	l = lf_max_u64(lf_log2_q32(w_fp), LF_HS_LOG2_LOW_Q32);
	return LF_Q32_ONE / 2 - lf_mul_div(LF_Q32_ONE / 2 - LF_HS_HIGH_DECREASE_Q32, l - LF_HS_LOG2_LOW_Q32,
					  LF_HS_LOG2_HIGH_Q32 - LF_HS_LOG2_LOW_Q32);
}

/*
 * a(w) in q32 (HsResponse::a): 1 at or below Low_Window; else, with w held
 * at High_Window above it,
 *   a = w^2 p(w) 2 b(w) / (2 - b(w)),  p(w) = 0.078 / w^1.2  (RFC 3649 §5)
 *     = 0.156 w^0.8 b / (2 - b),
 * at least 1. At Low_Window the formula gives 0.955, so evaluating it at w
 * clamped to [Low, High] and taking the floor of 1 equals the Rust branches
 * without branching. w^0.8 is lf_pow_fp_q32 (relative error < 2^-25),
 * b/(2 - b) a rounded q32 ratio (relative error < 2^-29 for b >= 0.1, with
 * b's own error), 0.156 the exact 156/1000: |relative error| < 2^-24
 * (tests/kernel/fixed_point.rs checks it against HsResponse::a over the range).
 */
static __always_inline u64 lf_hs_a_q32(u64 w_fp)
{
	u64 b, e, ratio, a;

	w_fp = lf_max_u64(lf_min_u64(w_fp, LF_HS_HIGH_WINDOW_FP), LF_HS_LOW_WINDOW_FP);
	b = lf_hs_b_q32(w_fp);
	e = lf_pow_fp_q32(w_fp, 4, 5);
	ratio = lf_mul_div(b, LF_Q32_ONE, 2 * LF_Q32_ONE - b);
	a = lf_mul_div(lf_mul_shr(e, ratio, 32), 156, 1000);
	return lf_max_u64(a, LF_Q32_ONE);
}

#endif /* LONGFAT_ALGO_HS_RESPONSE_H */
