/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * LTCP, Layered TCP (Bhandarkar, Jain, Reddy; ltcp.md) in fixed point: the
 * rules of crates/longfat-cc/src/ltcp.rs with the default LtcpConfig
 * (W_T = 50 packets, beta = 0.15). K virtual Reno flows: +K/cwnd per ACKed
 * packet (§III), a loss takes beta (eq. (4)); layer K starts at
 * W_K = K(K+1)(K-1)/6 W_T (eq. (10)).
 */
#ifndef LONGFAT_ALGO_LTCP_H
#define LONGFAT_ALGO_LTCP_H

#include "window.h"

#ifndef LF_LTCP_W_T_PKTS
#define LF_LTCP_W_T_PKTS 50ULL
#endif
/* round(0.15 * 2^32): 0.15 - 9.3e-11 */
#ifndef LF_LTCP_BETA_Q32
#define LF_LTCP_BETA_Q32 644245094ULL
#endif
/* ltcp.rs MAX_LAYERS */
#define LF_LTCP_MAX_LAYERS 10000U

/* 24 bytes */
struct lf_ltcp {
	u64 cwnd_fp;
	u64 ssthresh_fp;
	u32 layers;    /* K */
	u32 cwnd_frac; /* window.h: the window's remainder in 1/2^32 packets */
};

/* W_K in fp (eq. (10)), exact: K(K+1)(K-1) is divisible by 6, and for
 * K <= 10,000 and W_T = 50 the value is below 2^60. */
static __always_inline u64 lf_ltcp_layer_start_fp(u32 k)
{
	u64 kk = k;

	return (kk * (kk + 1) * (kk - 1) / 6 * LF_LTCP_W_T_PKTS) << LF_FP_SHIFT;
}

/* ltcp.rs layers_for: K with W_K <= cwnd < W_{K+1} (eq. (1)), at most
 * MAX_LAYERS. A binary search over the increasing W_K in place of the Rust
 * linear scan (the same K): 14 halvings cover 10,000 layers, the 16 steps
 * run always (a step with lo = hi changes nothing) and choose branch-free,
 * so the BPF verifier walks one path, not one per outcome. */
static __always_inline u32 lf_ltcp_layers_for(u64 cwnd_fp)
{
	u64 lo = 1, hi = LF_LTCP_MAX_LAYERS;
	int i;

	for (i = 0; i < 16; i++) {
		u64 mid = (lo + hi + 1) / 2;
		u64 up = 0 - (1 - lf_lt(cwnd_fp, lf_ltcp_layer_start_fp((u32)mid))); /* W_mid <= cwnd */

		lo = (mid & up) | (lo & ~up);
		hi = (hi & up) | ((mid - 1) & ~up);
		lf_opaque(lo);
		lf_opaque(hi);
	}
	return (u32)lo;
}

static __always_inline void lf_ltcp_init(struct lf_ltcp *s, u64 cwnd_fp, u64 ssthresh_fp)
{
	s->cwnd_fp = cwnd_fp;
	s->cwnd_frac = 0;
	s->ssthresh_fp = ssthresh_fp;
	s->layers = 1;
}

/* ltcp.rs reduced_window: halve with one layer (§IV-B), else cwnd (1 -
 * beta) (eq. (4)); rounded to nearest. */
static __always_inline u64 lf_ltcp_reduced(const struct lf_ltcp *s)
{
	if (s->layers <= 1)
		return lf_div_round(LF_CWND_FP(s), 2);
	return lf_scale_fp(LF_CWND_FP(s), LF_Q32_ONE - LF_LTCP_BETA_Q32);
}

static __always_inline void lf_ltcp_on_ack(struct lf_ltcp *s, const struct lf_ack *a)
{
	bool left_ss;
	u64 d = lf_grow(&s->cwnd_fp, &s->cwnd_frac, s->ssthresh_fp, a, &left_ss);

	if (d > 0) {
		/* §III: K/cwnd per ACKed packet, i.e. K packets per RTT */
		lf_additive_increase(&s->cwnd_fp, &s->cwnd_frac, (u64)s->layers << 32, d);
		/* §IV-B pseudo-code `if (window() >= W_{K+1}) K++`, repeated:
		 * the Rust while loop climbs to max(K, layers_for(cwnd)). */
		s->layers = (u32)lf_max_u64(s->layers, lf_ltcp_layers_for(s->cwnd_fp));
	}
	/* §IV-B: when slow start is exited, K follows from cwnd */
	if (left_ss)
		s->layers = (u32)lf_max_u64(s->layers, lf_ltcp_layers_for(s->cwnd_fp));
}

static __always_inline void lf_ltcp_on_loss(struct lf_ltcp *s, const struct lf_loss *l)
{
	/* a loss in slow start meets one layer and halves; K follows from the
	 * halved window (ltcp.rs on_congestion_event) */
	bool in_ss = s->cwnd_fp < s->ssthresh_fp;
	u32 k;

	if (in_ss)
		s->layers = 1;
	lf_reduce(lf_ltcp_reduced(s), &s->cwnd_fp, &s->cwnd_frac, &s->ssthresh_fp);
	k = lf_ltcp_layers_for(s->cwnd_fp);
	if (in_ss)
		s->layers = k;
	else if (k < s->layers) /* §IV-B `if (window() < W_K) K--`, recomputed */
		s->layers = k;
}

static __always_inline void lf_ltcp_on_recovery_exit(struct lf_ltcp *s, u64 now_us)
{
	s->cwnd_fp = s->ssthresh_fp;
	s->cwnd_frac = 0;
}

/* The end of a timeout recovery (the trait's default on_timeout_recovery_exit):
 * nothing; Linux leaves the window alone there. */
static __always_inline void lf_ltcp_on_timeout_recovery_exit(struct lf_ltcp *s, u64 now_us)
{
}

/* TCP's timeout (§IV-B): ssthresh from LTCP's reduced window, one packet,
 * one layer. */
static __always_inline void lf_ltcp_on_rto(struct lf_ltcp *s, const struct lf_rto *r)
{
	lf_timeout(lf_ltcp_reduced(s), r, &s->cwnd_fp, &s->cwnd_frac, &s->ssthresh_fp);
	s->layers = 1;
}

#endif /* LONGFAT_ALGO_LTCP_H */
