/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * eHSTCP, HighSpeed TCP refined with the effective RTT (Sasirekha,
 * Chandrasekar; ehstcp.md §3) in fixed point: the rules of
 * crates/longfat-cc/src/ehstcp.rs with the default EhstcpConfig (the
 * default HsResponse, N* = 10 packets, a safety-check phase of 5 RTTmax, an
 * EWMA gain of 1/8), in the Linux transport profile (no ns-2 halving).
 */
#ifndef LONGFAT_ALGO_EHSTCP_H
#define LONGFAT_ALGO_EHSTCP_H

#include "hs_response.h"

#ifndef LF_EHSTCP_N_STAR_FP
#define LF_EHSTCP_N_STAR_FP (10 * LF_FP_ONE) /* §4: N* = 10 packets */
#endif
#ifndef LF_EHSTCP_SAFETY_RTTS
#define LF_EHSTCP_SAFETY_RTTS 5ULL /* §4: 5 RTTmax */
#endif
#define LF_EHSTCP_ERTT_GAIN_SHIFT 3 /* §3.1: gain 1/8 */

/* 64 bytes */
struct lf_ehstcp {
	u64 cwnd_fp;
	u64 ssthresh_fp;
	s64 min_backward_us;	/* min(d_b) of eq. (2) on the offset clock difference */
	u64 ertt_us_fp;		/* smoothed effective RTT, us in 1/2^16; 0 before a sample */
	u64 rtt_min_us;
	u64 rtt_max_us;
	u64 safety_until_us;
	u32 cwnd_frac;		/* window.h: the window's remainder in 1/2^32 packets */
	u8 has_min_backward;
	u8 has_safety;
	u8 pad[2];
};

static __always_inline void lf_ehstcp_init(struct lf_ehstcp *s, u64 cwnd_fp, u64 ssthresh_fp)
{
	s->cwnd_fp = cwnd_fp;
	s->cwnd_frac = 0;
	s->ssthresh_fp = ssthresh_fp;
	s->min_backward_us = 0;
	s->ertt_us_fp = 0;
	s->rtt_min_us = 0;
	s->rtt_max_us = 0;
	s->safety_until_us = 0;
	s->has_min_backward = 0;
	s->has_safety = 0;
	s->pad[0] = s->pad[1] = 0;
}

/* N_ of eq. (5) = cwnd (eRTT - RTTmin) / eRTT, in fp, rounded; 0 without
 * delay information or with eRTT <= RTTmin. */
static __always_inline u64 lf_ehstcp_backlog_fp(const struct lf_ehstcp *s)
{
	u64 min_fp = s->rtt_min_us << LF_FP_SHIFT;

	if (s->ertt_us_fp == 0 || s->rtt_min_us == 0 || s->ertt_us_fp <= min_fp)
		return 0;
	return lf_mul_div(s->cwnd_fp, s->ertt_us_fp - min_fp, s->ertt_us_fp);
}

/* beta_eHSTCP of eq. (8): 1 - RTTmin / eRTT clamped to [0, 1], q32 (error
 * 2^-33); 1 without delay information (HighSpeed's b(w) decides). */
static __always_inline u64 lf_ehstcp_delay_decrease_q32(const struct lf_ehstcp *s)
{
	u64 min_fp = s->rtt_min_us << LF_FP_SHIFT;

	if (s->ertt_us_fp == 0 || s->rtt_min_us == 0)
		return LF_Q32_ONE;
	if (s->ertt_us_fp <= min_fp)
		return 0;
	return LF_Q32_ONE - lf_mul_div(min_fp, LF_Q32_ONE, s->ertt_us_fp);
}

/* eq. (9)'s min(beta_eHSTCP, b(w)), or b(w) inside the safety-check phase. */
static __always_inline u64 lf_ehstcp_decrease_q32(const struct lf_ehstcp *s, u64 now_us)
{
	u64 b = lf_hs_b_q32(LF_CWND_FP(s));

	if (s->has_safety && now_us < s->safety_until_us)
		return b;
	return lf_min_u64(lf_ehstcp_delay_decrease_q32(s), b);
}

/* eqs. (1)-(2): eRTT = RTT minus the backward queueing delay, the backward
 * one-way delay above its minimum (the clock offset cancels); EWMA 1/8,
 * rounded to nearest (error 2^-17 us per sample, contracted by 7/8). */
static __always_inline void lf_ehstcp_measure(struct lf_ehstcp *s, const struct lf_ack *a)
{
	u64 rtt = a->rtt_latest_us, sample;

	if (!a->rtt_updated || rtt == 0)
		return;
	s->rtt_min_us = s->rtt_min_us == 0 ? rtt : lf_min_u64(s->rtt_min_us, rtt);
	s->rtt_max_us = lf_max_u64(s->rtt_max_us, rtt);
	if (a->has_ts) {
		s64 d_b = (s64)(a->now_us - a->ts_receiver_us);
		u64 d_bq;

		if (!s->has_min_backward || d_b < s->min_backward_us) {
			s->min_backward_us = d_b;
			s->has_min_backward = 1;
		}
		d_bq = (u64)(d_b - s->min_backward_us);
		sample = lf_max_u64(rtt > d_bq ? rtt - d_bq : 0, s->rtt_min_us);
	} else {
		sample = rtt; /* no timestamps: eRTT is the RTT */
	}
	sample <<= LF_FP_SHIFT;
	if (s->ertt_us_fp == 0) {
		s->ertt_us_fp = sample;
	} else if (sample >= s->ertt_us_fp) {
		s->ertt_us_fp += lf_div_round(sample - s->ertt_us_fp, 1 << LF_EHSTCP_ERTT_GAIN_SHIFT);
	} else {
		s->ertt_us_fp -= lf_div_round(s->ertt_us_fp - sample, 1 << LF_EHSTCP_ERTT_GAIN_SHIFT);
	}
}

static __always_inline void lf_ehstcp_on_ack(struct lf_ehstcp *s, const struct lf_ack *a)
{
	bool left_ss, backlogged;
	u64 d;

	lf_ehstcp_measure(s, a);
	/* §3.2: the backlog is binary feedback on whether the path is full */
	backlogged = lf_ehstcp_backlog_fp(s) >= LF_EHSTCP_N_STAR_FP;
	d = lf_grow(&s->cwnd_fp, &s->cwnd_frac, s->ssthresh_fp, a, &left_ss);
	if (d > 0)
		lf_additive_increase(&s->cwnd_fp, &s->cwnd_frac, backlogged ? LF_Q32_ONE : lf_hs_a_q32(LF_CWND_FP(s)), d);
}

/* eq. (9); the safety-check phase starts (5 RTTmax, exact in us). */
static __always_inline void lf_ehstcp_on_loss(struct lf_ehstcp *s, const struct lf_loss *l)
{
	u64 beta = lf_ehstcp_decrease_q32(s, l->now_us);

	lf_reduce(lf_scale_fp(LF_CWND_FP(s), LF_Q32_ONE - beta), &s->cwnd_fp, &s->cwnd_frac, &s->ssthresh_fp);
	s->safety_until_us = l->now_us + LF_EHSTCP_SAFETY_RTTS * s->rtt_max_us;
	s->has_safety = 1;
}

static __always_inline void lf_ehstcp_on_recovery_exit(struct lf_ehstcp *s, u64 now_us)
{
	s->cwnd_fp = s->ssthresh_fp;
	s->cwnd_frac = 0;
}

/* The end of a timeout recovery (the trait's default on_timeout_recovery_exit):
 * nothing; Linux leaves the window alone there. */
static __always_inline void lf_ehstcp_on_timeout_recovery_exit(struct lf_ehstcp *s, u64 now_us)
{
}

/* HighSpeed's timeout: ssthresh = (1 - b(w)) w, cwnd = in flight + 1 (lf_timeout). */
static __always_inline void lf_ehstcp_on_rto(struct lf_ehstcp *s, const struct lf_rto *r)
{
	u64 b = lf_hs_b_q32(LF_CWND_FP(s));

	lf_timeout(lf_scale_fp(LF_CWND_FP(s), LF_Q32_ONE - b), r, &s->cwnd_fp, &s->cwnd_frac, &s->ssthresh_fp);
}

#endif /* LONGFAT_ALGO_EHSTCP_H */
