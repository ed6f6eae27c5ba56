/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * HighSpeed TCP (RFC 3649) in fixed point: the rules of
 * crates/longfat-cc/src/highspeed.rs with the default HsResponse and
 * linux_table = 0 (the RFC's formulas), in the Linux transport profile (no
 * window cap, no ns-2 halving).
 */
#ifndef LONGFAT_ALGO_HIGHSPEED_H
#define LONGFAT_ALGO_HIGHSPEED_H

#include "hs_response.h"

/* 24 bytes */
struct lf_highspeed {
	u64 cwnd_fp;
	u64 ssthresh_fp;
	u32 cwnd_frac; /* window.h: the window's remainder in 1/2^32 packets */
	u32 pad;
};

static __always_inline void lf_highspeed_init(struct lf_highspeed *s, u64 cwnd_fp, u64 ssthresh_fp)
{
	s->cwnd_fp = cwnd_fp;
	s->cwnd_frac = 0;
	s->pad = 0;
	s->ssthresh_fp = ssthresh_fp;
}

/* w (1 - b(w)) (RFC 3649 §4), rounded to nearest. */
static __always_inline u64 lf_highspeed_reduced(const struct lf_highspeed *s)
{
	return lf_scale_fp(LF_CWND_FP(s), LF_Q32_ONE - lf_hs_b_q32(LF_CWND_FP(s)));
}

/* w += a(w) / w per ACKed packet (RFC 3649 §4), after slow start. */
static __always_inline void lf_highspeed_on_ack(struct lf_highspeed *s, const struct lf_ack *a)
{
	bool left_ss;
	u64 d = lf_grow(&s->cwnd_fp, &s->cwnd_frac, s->ssthresh_fp, a, &left_ss);

	if (d == 0)
		return;
	lf_additive_increase(&s->cwnd_fp, &s->cwnd_frac, lf_hs_a_q32(LF_CWND_FP(s)), d);
}

/* w -= b(w) w (RFC 3649 §4). */
static __always_inline void lf_highspeed_on_loss(struct lf_highspeed *s, const struct lf_loss *l)
{
	lf_reduce(lf_highspeed_reduced(s), &s->cwnd_fp, &s->cwnd_frac, &s->ssthresh_fp);
}

static __always_inline void lf_highspeed_on_recovery_exit(struct lf_highspeed *s, u64 now_us)
{
	s->cwnd_fp = s->ssthresh_fp;
	s->cwnd_frac = 0;
}

/* The end of a timeout recovery (the trait's default on_timeout_recovery_exit):
 * nothing; Linux leaves the window alone there. */
static __always_inline void lf_highspeed_on_timeout_recovery_exit(struct lf_highspeed *s, u64 now_us)
{
}

static __always_inline void lf_highspeed_on_rto(struct lf_highspeed *s, const struct lf_rto *r)
{
	lf_timeout(lf_highspeed_reduced(s), r, &s->cwnd_fp, &s->cwnd_frac, &s->ssthresh_fp);
}

#endif /* LONGFAT_ALGO_HIGHSPEED_H */
