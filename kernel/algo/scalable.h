/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * Scalable TCP (Kelly, CCR 2003) in fixed point: the rules of
 * crates/longfat-cc/src/scalable.rs with its default ScalableConfig.
 * Above the legacy window (16 packets) cwnd += a per ACKed packet (a = 0.01)
 * and a loss takes b = 1/8; at or below it Reno (+1/cwnd, halve).
 */
#ifndef LONGFAT_ALGO_SCALABLE_H
#define LONGFAT_ALGO_SCALABLE_H

#include "window.h"

/* ScalableConfig::default(): a = 0.01 (q32: round(0.01 * 2^32), 2.2e-12
 * above 0.01), b = 0.125 (exact), low_window = 16 packets (exact). */
#ifndef LF_SCALABLE_A_Q32
#define LF_SCALABLE_A_Q32 42949673ULL
#endif
#ifndef LF_SCALABLE_B_Q32
#define LF_SCALABLE_B_Q32 (LF_Q32_ONE / 8)
#endif
#ifndef LF_SCALABLE_LOW_WINDOW_FP
#define LF_SCALABLE_LOW_WINDOW_FP (16 * LF_FP_ONE)
#endif

/* 24 bytes */
struct lf_scalable {
	u64 cwnd_fp;
	u64 ssthresh_fp;
	u32 cwnd_frac; /* window.h: the window's remainder in 1/2^32 packets */
	u32 pad;
};

static __always_inline void lf_scalable_init(struct lf_scalable *s, u64 cwnd_fp, u64 ssthresh_fp)
{
	s->cwnd_fp = cwnd_fp;
	s->cwnd_frac = 0;
	s->pad = 0;
	s->ssthresh_fp = ssthresh_fp;
}

/* scalable.rs reduced_window: cwnd / 2 at or below the legacy window, else
 * cwnd (1 - b). Rounded to nearest: error <= 2^-17 packets. */
static __always_inline u64 lf_scalable_reduced(const struct lf_scalable *s)
{
	if (s->cwnd_fp <= LF_SCALABLE_LOW_WINDOW_FP)
		return lf_div_round(LF_CWND_FP(s), 2);
	return lf_scale_fp(LF_CWND_FP(s), LF_Q32_ONE - LF_SCALABLE_B_Q32);
}

static __always_inline void lf_scalable_on_ack(struct lf_scalable *s, const struct lf_ack *a)
{
	bool left_ss;
	u64 d = lf_grow(&s->cwnd_fp, &s->cwnd_frac, s->ssthresh_fp, a, &left_ss);

	if (d == 0)
		return;
	if (s->cwnd_fp <= LF_SCALABLE_LOW_WINDOW_FP)
		lf_additive_increase(&s->cwnd_fp, &s->cwnd_frac, LF_Q32_ONE, d);
	else
		lf_add_q32(&s->cwnd_fp, &s->cwnd_frac, lf_mul_shr(LF_SCALABLE_A_Q32, d, 16)); /* + a per packet */
}

static __always_inline void lf_scalable_on_loss(struct lf_scalable *s, const struct lf_loss *l)
{
	lf_reduce(lf_scalable_reduced(s), &s->cwnd_fp, &s->cwnd_frac, &s->ssthresh_fp);
}

static __always_inline void lf_scalable_on_recovery_exit(struct lf_scalable *s, u64 now_us)
{
	s->cwnd_fp = s->ssthresh_fp;
	s->cwnd_frac = 0;
}

/* The end of a timeout recovery (the trait's default on_timeout_recovery_exit):
 * nothing; Linux leaves the window alone there. */
static __always_inline void lf_scalable_on_timeout_recovery_exit(struct lf_scalable *s, u64 now_us)
{
}

static __always_inline void lf_scalable_on_rto(struct lf_scalable *s, const struct lf_rto *r)
{
	lf_timeout(lf_scalable_reduced(s), r, &s->cwnd_fp, &s->cwnd_frac, &s->ssthresh_fp);
}

#endif /* LONGFAT_ALGO_SCALABLE_H */
