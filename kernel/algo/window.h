/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * Window-growth helpers shared by the algorithms: longfat-cc's helpers.rs
 * (after Linux's tcp_slow_start and tcp_cong_avoid_ai) in fixed point.
 * Windows in fp (1/2^16 packets), LF_INFINITE_FP for an unset ssthresh.
 */
#ifndef LONGFAT_ALGO_WINDOW_H
#define LONGFAT_ALGO_WINDOW_H

#include "../include/longfat_cc.h"
#include "../include/longfat_fixed.h"

/* helpers.rs MIN_SSTHRESH_PKTS: the RFC 5681 §3.1 floor of 2 segments. */
#define LF_MIN_SSTHRESH_FP (2 * LF_FP_ONE)

/* helpers.rs slow_start (RFC 5681 §3.1): cwnd grows by one packet per packet
 * delivered, not past ssthresh; returns the delivered packets (fp) left over
 * once cwnd reached ssthresh. Exact. */
static __always_inline u64 lf_slow_start(u64 *cwnd, u64 ssthresh, u64 delivered_fp)
{
	u64 room = ssthresh > *cwnd ? ssthresh - *cwnd : 0;
	u64 used = delivered_fp < room ? delivered_fp : room;

	*cwnd += used;
	return delivered_fp - used;
}

/* The first half of helpers.rs grow: no growth in recovery or when the
 * transport allows none; slow start below ssthresh. Returns the delivered
 * packets (fp) left for congestion avoidance (0: none, the caller skips its
 * avoidance rule as grow's `if delivered > 0.0` does); *left_ss is true when
 * this ACK ended slow start (cwnd reached ssthresh). Exact. */
static __always_inline u64 lf_grow(u64 *cwnd, u64 ssthresh, const struct lf_ack *a, bool *left_ss)
{
	u64 d;

	*left_ss = false;
	if (a->in_recovery || a->growth_pkts == 0)
		return 0;
	d = (u64)a->growth_pkts << LF_FP_SHIFT;
	if (*cwnd < ssthresh) {
		d = lf_slow_start(cwnd, ssthresh, d);
		*left_ss = *cwnd >= ssthresh;
	}
	return d;
}

/* cwnd += a * delivered / cwnd (helpers.rs additive_increase; RFC 5681
 * eq. (3) with a = 1), a in q32. The increment is rounded to nearest:
 * error <= 2^-17 packets (beyond a's own error times delivered / cwnd). */
static __always_inline void lf_additive_increase(u64 *cwnd, u64 a_q32, u64 delivered_fp)
{
	/* nothing for a zero window (helpers.rs `if *cwnd > 0.0`), branch-free */
	*cwnd += lf_mul_div(a_q32, delivered_fp, *cwnd << LF_FP_SHIFT) & (0 - lf_nz(*cwnd));
}

/* helpers.rs reduce: ssthresh = max(reduced, 2 packets), cwnd = min(cwnd,
 * ssthresh). Exact. */
static __always_inline void lf_reduce(u64 reduced_fp, u64 *cwnd, u64 *ssthresh)
{
	*ssthresh = lf_max_u64(reduced_fp, LF_MIN_SSTHRESH_FP);
	*cwnd = lf_min_u64(*cwnd, *ssthresh);
}

/* helpers.rs timeout: ssthresh = max(reduced, 2) when the expiry reduces;
 * cwnd = 1 packet on every expiry. Exact. */
static __always_inline void lf_timeout(u64 reduced_fp, const struct lf_rto *r, u64 *cwnd, u64 *ssthresh)
{
	if (r->reduce)
		*ssthresh = lf_max_u64(reduced_fp, LF_MIN_SSTHRESH_FP);
	*cwnd = LF_FP_ONE;
}

#endif /* LONGFAT_ALGO_WINDOW_H */
