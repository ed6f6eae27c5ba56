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

/*
 * Every window is kept as cwnd_fp (1/2^16 packets) plus a remainder
 * cwnd_frac (1/2^32 packets, below 2^16): increments are computed in 1/2^32
 * packets and their low bits carried, so that increments smaller than the
 * 1/2^16 format (1/cwnd at 60,000 packets is 1.09 units; H-TCP's 0.4/cwnd
 * after a backoff, TCP-GT's p at high rates, far less) accumulate as they do
 * in f64 instead of being rounded away or up on every ACK (Linux keeps
 * snd_cwnd_cnt for the same reason). Any assignment of the window clears
 * the remainder.
 */

/* The window in fp rounded to nearest, its remainder included (what the
 * reductions scale): error <= 2^-17 packets. */
static __always_inline u64 lf_cwnd_rounded_fp(u64 cwnd, u32 frac)
{
	return cwnd + (frac >> 15);
}
#define LF_CWND_FP(s) lf_cwnd_rounded_fp((s)->cwnd_fp, (s)->cwnd_frac)

/* The window with its remainder in 1/2^32 packets (exact). */
#define LF_CWND_Q32(s) (((s)->cwnd_fp << 16) | (s)->cwnd_frac)

/* Adds inc (1/2^32 packets) to the window, carrying the remainder. Exact. */
static __always_inline void lf_add_q32(u64 *cwnd, u32 *frac, u64 inc_q32)
{
	u64 t = (u64)*frac + (inc_q32 & 0xffff);

	*cwnd += (inc_q32 >> 16) + (t >> 16);
	*frac = (u32)(t & 0xffff);
}

/* helpers.rs slow_start (RFC 5681 §3.1): cwnd grows by one packet per packet
 * delivered, not past ssthresh (where the window is exactly ssthresh, the
 * remainder cleared); returns the delivered packets (fp) left over once cwnd
 * reached ssthresh. Exact. */
static __always_inline u64 lf_slow_start(u64 *cwnd, u32 *frac, u64 ssthresh, u64 delivered_fp)
{
	u64 room = ssthresh > *cwnd ? ssthresh - *cwnd : 0;
	u64 used = delivered_fp < room ? delivered_fp : room;

	*cwnd += used;
	if (*cwnd >= ssthresh)
		*frac = 0;
	return delivered_fp - used;
}

/* The first half of helpers.rs grow: no growth in recovery or when the
 * transport allows none; slow start below ssthresh. Returns the delivered
 * packets (fp) left for congestion avoidance (0: none, the caller skips its
 * avoidance rule as grow's `if delivered > 0.0` does); *left_ss is true when
 * this ACK ended slow start (cwnd reached ssthresh). Exact. */
static __always_inline u64 lf_grow(u64 *cwnd, u32 *frac, u64 ssthresh, const struct lf_ack *a, bool *left_ss)
{
	u64 d;

	*left_ss = false;
	if (a->in_recovery || a->growth_pkts == 0)
		return 0;
	d = (u64)a->growth_pkts << LF_FP_SHIFT;
	if (*cwnd < ssthresh) {
		d = lf_slow_start(cwnd, frac, ssthresh, d);
		*left_ss = *cwnd >= ssthresh;
	}
	return d;
}

/* cwnd += a * delivered / cwnd (helpers.rs additive_increase; RFC 5681
 * eq. (3) with a = 1), a in q32, divided by the whole window (remainder
 * included). The increment is rounded to nearest 1/2^32 packet and carried
 * (lf_add_q32): error <= 2^-33 packets per ACK (beyond a's own error times
 * delivered / cwnd), without bias. */
static __always_inline void lf_additive_increase(u64 *cwnd, u32 *frac, u64 a_q32, u64 delivered_fp)
{
	u64 w = (*cwnd << 16) | *frac;

	/* nothing for a zero window (helpers.rs `if *cwnd > 0.0`), branch-free */
	lf_add_q32(cwnd, frac, lf_mul_div(a_q32, delivered_fp << 16, w) & (0 - lf_nz(w)));
}

/* helpers.rs reduce: ssthresh = max(reduced, 2 packets), cwnd = min(cwnd,
 * ssthresh). Exact (the remainder cleared where the window is lowered). */
static __always_inline void lf_reduce(u64 reduced_fp, u64 *cwnd, u32 *frac, u64 *ssthresh)
{
	*ssthresh = lf_max_u64(reduced_fp, LF_MIN_SSTHRESH_FP);
	if (*cwnd >= *ssthresh) {
		*cwnd = *ssthresh;
		*frac = 0;
	}
}

/* helpers.rs timeout: ssthresh = max(reduced, 2) when the expiry reduces;
 * on every expiry cwnd = the packets left in flight + 1 (Linux
 * tcp_enter_loss: snd_cwnd = tcp_packets_in_flight + 1 after
 * tcp_timeout_mark_lost; 1 when everything was marked lost). Exact. */
static __always_inline void lf_timeout(u64 reduced_fp, const struct lf_rto *r, u64 *cwnd, u32 *frac, u64 *ssthresh)
{
	if (r->reduce)
		*ssthresh = lf_max_u64(reduced_fp, LF_MIN_SSTHRESH_FP);
	*cwnd = ((u64)r->in_flight_pkts + 1) << LF_FP_SHIFT;
	*frac = 0;
}

#endif /* LONGFAT_ALGO_WINDOW_H */
