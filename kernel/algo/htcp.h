/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * H-TCP (Leith, Shorten, Lee; htcp.md §VI) in fixed point: the rules of
 * crates/longfat-cc/src/htcp.rs, with its HtcpConfig as plain data (the
 * defaults are the paper's; the options are Linux tcp_htcp.c's RTT scaling,
 * bandwidth switch, RTTmax from raw samples and the 10 ms floor of adaptive
 * backoff).
 *
 * Units: times in us, except RTTmin/RTTmax, kept in ns (us * 1000) so that
 * the fade of eq. (15), rounded to whole ns in Rust, is reproduced exactly.
 * beta and the alpha factors in q32.
 */
#ifndef LONGFAT_ALGO_HTCP_H
#define LONGFAT_ALGO_HTCP_H

#include "window.h"

#define LF_HTCP_RTT_MAX_STEP_NS 20000000ULL /* Linux measure_rtt: 20 ms */

enum lf_htcp_episode {
	LF_HTCP_OPEN = 0,
	LF_HTCP_FAST_RECOVERY = 1,
	LF_HTCP_TIMEOUT_RECOVERY = 2,
};

/* HtcpConfig. 56 bytes. */
struct lf_htcp_cfg {
	u64 beta_min_q32;	/* eq. (18), §V-B: 0.5 */
	u64 beta_max_q32;	/* 0.8 */
	u64 scale_min_q32;	/* footnote 4: 0.5 (Linux's clamp: 0.1) */
	u64 scale_max_q32;	/* 10 (Linux's: 2) */
	u32 delta_l_us;		/* Delta^L, eq. (20): 1 s */
	u32 adaptive_min_rtt_us; /* 0 (Linux: 10 ms) */
	u32 rtt_ref_us;		/* §IV (iv): 100 ms */
	u16 fade_num, fade_den;	/* eq. (15): 7/8 (Linux 95/100) */
	u8 rtt_max_from_samples; /* 0: SRTT (Linux: 1) */
	u8 rtt_scaling;		/* 0 (Linux: 1) */
	u8 bandwidth_switch;	/* 0 (Linux: 1) */
	u8 pad[5];
};

/* The whole state. 160 bytes (cfg included; 104 without). */
struct lf_htcp {
	u64 cwnd_fp;
	u64 ssthresh_fp;
	u64 beta_q32;		/* the last congestion event's backoff */
	u64 rtt_min_ns;
	u64 rtt_max_ns;
	u64 last_cong_us;	/* Delta counts from here (valid when has_last_cong) */
	/* Linux measure_achieved_throughput (bandwidth_switch only) */
	u64 tput_packets;
	u64 tput_since_us;
	u64 smoothed_pps_fp;	/* packets per second in 1/2^16 */
	u64 max_pps_fp;
	u64 old_max_pps_fp;
	u32 congestion_events;
	u8 modeswitch;
	u8 has_last_cong;
	u8 episode;		/* enum lf_htcp_episode */
	u8 pad;
	u32 cwnd_frac;		/* window.h: the window's remainder in 1/2^32 packets */
	u32 pad2;
	struct lf_htcp_cfg cfg;
};

/* HtcpConfig::default() */
static __always_inline void lf_htcp_default_cfg(struct lf_htcp_cfg *c)
{
	c->beta_min_q32 = LF_Q32_ONE / 2;
	c->beta_max_q32 = 3435973837ULL; /* round(0.8 * 2^32) */
	c->scale_min_q32 = LF_Q32_ONE / 2;
	c->scale_max_q32 = 10 * LF_Q32_ONE;
	c->delta_l_us = 1000000;
	c->adaptive_min_rtt_us = 0;
	c->rtt_ref_us = 100000;
	c->fade_num = 7;
	c->fade_den = 8;
	c->rtt_max_from_samples = 0;
	c->rtt_scaling = 0;
	c->bandwidth_switch = 0;
	c->pad[0] = c->pad[1] = c->pad[2] = c->pad[3] = c->pad[4] = 0;
}

static __always_inline void lf_htcp_init_cfg(struct lf_htcp *s, u64 cwnd_fp, u64 ssthresh_fp,
					     const struct lf_htcp_cfg *cfg)
{
	s->cwnd_fp = cwnd_fp;
	s->cwnd_frac = 0;
	s->ssthresh_fp = ssthresh_fp;
	s->beta_q32 = cfg->beta_min_q32;
	s->rtt_min_ns = 0;
	s->rtt_max_ns = 0;
	s->last_cong_us = 0;
	s->tput_packets = 0;
	s->tput_since_us = 0;
	s->smoothed_pps_fp = 0;
	s->max_pps_fp = 0;
	s->old_max_pps_fp = 0;
	s->congestion_events = 0;
	s->modeswitch = 0;
	s->has_last_cong = 0;
	s->episode = LF_HTCP_OPEN;
	s->pad = 0;
	s->pad2 = 0;
	s->cfg = *cfg;
}

static __always_inline void lf_htcp_init(struct lf_htcp *s, u64 cwnd_fp, u64 ssthresh_fp)
{
	struct lf_htcp_cfg cfg;

	lf_htcp_default_cfg(&cfg);
	lf_htcp_init_cfg(s, cwnd_fp, ssthresh_fp, &cfg);
}

/*
 * HtcpConfig::alpha_factor in q32: alpha-bar(Delta) of eq. (20),
 *   1 for Delta <= Delta^L, else 1 + 10 d + (d/2)^2 with d = Delta - Delta^L
 * (seconds), times the §IV (iv) RTT scaling RTTmin / rtt_ref clamped to
 * [scale_min, scale_max] and floored at 1 (Linux htcp_alpha_update). d is
 * rounded to q32 (error 2^-33 s), each product rounded to nearest: relative
 * error below 2^-30 for d < 10^4 s.
 */
static __always_inline u64 lf_htcp_alpha_factor(const struct lf_htcp *s, u64 since_us)
{
	const struct lf_htcp_cfg *c = &s->cfg;
	u64 bar = LF_Q32_ONE, d, scale;

	if (since_us > c->delta_l_us) {
		d = lf_mul_div(since_us - c->delta_l_us, LF_Q32_ONE, 1000000);
		bar += 10 * d + lf_mul_shr(d, d, 34); /* 10 d + d^2 / 4 */
	}
	if (!c->rtt_scaling || s->rtt_min_ns == 0)
		return bar;
	scale = lf_mul_div(s->rtt_min_ns, LF_Q32_ONE, (u64)c->rtt_ref_us * 1000);
	scale = lf_max_u64(c->scale_min_q32, lf_min_u64(scale, c->scale_max_q32));
	return lf_max_u64(lf_mul_shr(bar, scale, 32), LF_Q32_ONE);
}

/* Htcp::alpha: 2 (1 - beta) alpha_factor (eq. (16) with (20)), q32. */
static __always_inline u64 lf_htcp_alpha(const struct lf_htcp *s, u64 now_us)
{
	u64 since = s->has_last_cong && now_us > s->last_cong_us ? now_us - s->last_cong_us : 0;

	return lf_mul_shr(2 * (LF_Q32_ONE - s->beta_q32), lf_htcp_alpha_factor(s, since), 32);
}

/* Htcp::measure_rtt (Linux measure_rtt). Exact. */
static __always_inline void lf_htcp_measure_rtt(struct lf_htcp *s, const struct lf_ack *a)
{
	u64 sample = a->rtt_latest_us * 1000, rtt;

	s->rtt_min_ns = s->rtt_min_ns == 0 ? sample : lf_min_u64(s->rtt_min_ns, sample);
	if (a->in_recovery)
		return;
	s->rtt_max_ns = lf_max_u64(s->rtt_max_ns, s->rtt_min_ns);
	rtt = s->cfg.rtt_max_from_samples ? sample : a->rtt_smoothed_us * 1000;
	if (rtt > s->rtt_max_ns && rtt <= s->rtt_max_ns + LF_HTCP_RTT_MAX_STEP_NS)
		s->rtt_max_ns = rtt;
}

/* Htcp::measure_throughput (Linux measure_achieved_throughput); rates in fp
 * packets per second, each rounded to nearest (error 2^-17 pkt/s per step,
 * contracted by the 3/4 of the EWMA). */
static __always_inline void lf_htcp_measure_throughput(struct lf_htcp *s, const struct lf_ack *a)
{
	u64 elapsed, pps, since_cong;

	if (a->in_recovery) {
		s->tput_packets = 0;
		s->tput_since_us = a->now_us;
		return;
	}
	s->tput_packets += a->delivered_pkts;
	elapsed = a->now_us > s->tput_since_us ? a->now_us - s->tput_since_us : 0;
	if (s->rtt_min_ns > 0 && elapsed * 1000 >= s->rtt_min_ns &&
	    (s->tput_packets << LF_FP_SHIFT) + LF_FP_ONE >= s->cwnd_fp) {
		pps = lf_mul_div(s->tput_packets << LF_FP_SHIFT, 1000000, elapsed);
		since_cong = !s->has_last_cong ? LF_U64_MAX
			     : a->now_us > s->last_cong_us ? a->now_us - s->last_cong_us : 0;
		if (since_cong != LF_U64_MAX && since_cong * 1000 <= 3 * s->rtt_min_ns) {
			s->smoothed_pps_fp = pps;
			s->max_pps_fp = pps;
		} else {
			s->smoothed_pps_fp = lf_div_round(3 * s->smoothed_pps_fp + pps, 4);
			s->max_pps_fp = lf_max_u64(s->max_pps_fp, s->smoothed_pps_fp);
		}
		s->tput_packets = 0;
		s->tput_since_us = a->now_us;
	}
}

/* Htcp::next_beta (eq. (18); Linux htcp_beta_update). beta = RTTmin/RTTmax
 * rounded to q32 (error 2^-33), clamped. */
static __always_inline u64 lf_htcp_next_beta(struct lf_htcp *s)
{
	const struct lf_htcp_cfg *c = &s->cfg;

	if (c->bandwidth_switch) {
		u64 max = s->max_pps_fp, old = s->old_max_pps_fp;

		s->old_max_pps_fp = max;
		/* Linux: !between(5 * maxB, 4 * old_maxB, 6 * old_maxB) */
		if (!(4 * old <= 5 * max && 5 * max <= 6 * old)) {
			s->modeswitch = 0;
			return c->beta_min_q32;
		}
	}
	if (s->modeswitch && s->rtt_min_ns > (u64)c->adaptive_min_rtt_us * 1000 && s->rtt_max_ns > 0) {
		u64 b = lf_mul_div(s->rtt_min_ns, LF_Q32_ONE, s->rtt_max_ns);

		return lf_max_u64(c->beta_min_q32, lf_min_u64(b, c->beta_max_q32));
	}
	s->modeswitch = 1;
	return c->beta_min_q32;
}

/* Htcp::congestion_event: beta (eq. (18)), then RTTmax fades towards RTTmin
 * (eq. (15)), rounded to the nearest ns as Rust's f64::round (exact for the
 * default 7/8: 7 span / 8 is a multiple of 1/8 ns). */
static __always_inline void lf_htcp_congestion_event(struct lf_htcp *s)
{
	s->beta_q32 = lf_htcp_next_beta(s);
	if (s->rtt_min_ns > 0 && s->rtt_max_ns > s->rtt_min_ns) {
		u64 span = s->rtt_max_ns - s->rtt_min_ns;

		s->rtt_max_ns = s->rtt_min_ns + lf_mul_div(span, s->cfg.fade_num, s->cfg.fade_den);
	}
	s->congestion_events++;
}

static __always_inline u32 lf_htcp_on_send(struct lf_htcp *s, u64 now_us, u64 seq, u32 bytes, int retransmit)
{
	if (!s->has_last_cong) {
		s->has_last_cong = 1;
		s->last_cong_us = now_us;
	}
	return 0;
}

static __always_inline void lf_htcp_on_ack(struct lf_htcp *s, const struct lf_ack *a)
{
	bool left_ss;
	u64 alpha, d;

	if (!s->has_last_cong) {
		s->has_last_cong = 1;
		s->last_cong_us = a->now_us;
	}
	if (a->rtt_updated && a->rtt_latest_us > 0)
		lf_htcp_measure_rtt(s, a);
	if (s->cfg.bandwidth_switch)
		lf_htcp_measure_throughput(s, a);
	alpha = lf_htcp_alpha(s, a->now_us);
	d = lf_grow(&s->cwnd_fp, &s->cwnd_frac, s->ssthresh_fp, a, &left_ss);
	if (d > 0) /* eq. (17): cwnd += alpha / cwnd per ACKed packet */
		lf_additive_increase(&s->cwnd_fp, &s->cwnd_frac, alpha, d);
}

/* eq. (19): cwnd = beta cwnd; the fast recovery's episode begins. */
static __always_inline void lf_htcp_on_loss(struct lf_htcp *s, const struct lf_loss *l)
{
	lf_htcp_congestion_event(s);
	lf_reduce(lf_scale_fp(LF_CWND_FP(s), s->beta_q32), &s->cwnd_fp, &s->cwnd_frac, &s->ssthresh_fp);
	s->has_last_cong = 1;
	s->last_cong_us = l->now_us;
	s->episode = LF_HTCP_FAST_RECOVERY;
}

/* Delta counts from the end of the episode (Linux htcp_state(TCP_CA_Open)). */
static __always_inline void lf_htcp_on_recovery_exit(struct lf_htcp *s, u64 now_us)
{
	if (s->episode == LF_HTCP_FAST_RECOVERY) {
		s->cwnd_fp = s->ssthresh_fp;
		s->cwnd_frac = 0;
		s->has_last_cong = 1;
		s->last_cong_us = now_us;
	} else if (s->episode == LF_HTCP_TIMEOUT_RECOVERY) {
		s->has_last_cong = 1; /* leaving TCP_CA_Loss keeps cwnd */
		s->last_cong_us = now_us;
	} else {
		s->cwnd_fp = s->ssthresh_fp;
		s->cwnd_frac = 0;
	}
	s->episode = LF_HTCP_OPEN;
}

/* Htcp::on_timeout_recovery_exit: leaving TCP_CA_Loss for Open restarts
 * Delta (Linux htcp_state(TCP_CA_Open)) and keeps cwnd; only a timeout
 * recovery still pending ends here (not one a fast recovery replaced). */
static __always_inline void lf_htcp_on_timeout_recovery_exit(struct lf_htcp *s, u64 now_us)
{
	if (s->episode == LF_HTCP_TIMEOUT_RECOVERY)
		lf_htcp_on_recovery_exit(s, now_us);
}

/* Linux tcp_enter_loss: the congestion event only when the expiry reduces;
 * Delta restarts on every expiry; cwnd = in flight + 1 (lf_timeout). */
static __always_inline void lf_htcp_on_rto(struct lf_htcp *s, const struct lf_rto *r)
{
	if (r->reduce)
		lf_htcp_congestion_event(s);
	lf_timeout(lf_scale_fp(LF_CWND_FP(s), s->beta_q32), r, &s->cwnd_fp, &s->cwnd_frac, &s->ssthresh_fp);
	s->has_last_cong = 1;
	s->last_cong_us = r->now_us;
	s->episode = LF_HTCP_TIMEOUT_RECOVERY;
}

#endif /* LONGFAT_ALGO_HTCP_H */
