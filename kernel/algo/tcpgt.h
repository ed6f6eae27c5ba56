/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * TCP-GT (Jung, Kim, Yeom, Kang; tcp-gt.md) in fixed point: the rules of
 * crates/longfat-cc/src/tcpgt.rs with its TcpgtConfig as plain data.
 *
 * Epochs (sect. III-B): packets carry the current epoch number (on_send's
 * tag); an ACK echoing it ends the epoch. G = N / TR (eq. 1), T = N / rtt_min
 * (eq. 4), phi = G - T (eq. 3), f = srtt / rtt_base (sect. III-E).
 * Algorithm 1: while phi >= t T / f (eq. 16) s += f (eq. 14) and every
 * delivered packet adds p = f^2 s^2 / (G rtt_base cwnd) (eq. 15); otherwise
 * s = 1 and every delivered packet adds n = f phi rtt_base / cwnd (eq. 17).
 *
 * Units: times in us; s, p and n in q32 (p and n signed, packets per
 * delivered packet). The eq. (16) test is exact integer arithmetic (t is a
 * rational, -1/20 by default); p and n are rounded products (see below).
 */
#ifndef LONGFAT_ALGO_TCPGT_H
#define LONGFAT_ALGO_TCPGT_H

#include "window.h"

/* The ring of per-epoch RTT minima holds at most this many epochs (the Rust
 * config allows up to 1000; the default is 10). */
#define LF_TCPGT_MAX_EPOCHS 16

enum lf_tcpgt_phase {
	LF_TCPGT_HOLD = 0,
	LF_TCPGT_INCREASE = 1,
	LF_TCPGT_DECREASE = 2,
};

/* TcpgtConfig. 24 bytes. */
struct lf_tcpgt_cfg {
	u64 max_increase_q32;	/* the most p adds per packet: 1 */
	u32 rtt_base_us;	/* sect. III-E: 50 ms */
	s32 threshold_num;	/* t of eq. (16) = num / den: -1/20 = -0.05 */
	u32 threshold_den;
	u8 rtt_min_epochs;	/* eq. (5), sect. IV-F: 10 (at most LF_TCPGT_MAX_EPOCHS) */
	u8 slow_start;		/* 0 */
	u8 pad[2];
};

/* The whole state. 168 bytes (cfg included; 144 without). */
struct lf_tcpgt {
	u64 cwnd_fp;
	u64 ssthresh_fp;
	u64 boundary_sender_us;	/* our clock when the current epoch began */
	u64 boundary_receiver_us; /* the receiver's timestamp then */
	u64 delivered_pkts;	/* N so far in this epoch */
	u64 epoch_min_rtt_us;	/* 0: no sample yet */
	u64 s_q32;		/* the splitting count s */
	s64 rate_q32;		/* p (INCREASE) or n (DECREASE), packets per packet */
	u32 epoch_mins_us[LF_TCPGT_MAX_EPOCHS];
	u32 epoch;
	u8 mins_len, mins_head;
	u8 in_slow_start;
	u8 has_boundary;
	u8 could_grow;
	u8 phase;		/* enum lf_tcpgt_phase */
	u8 pad[2];
	u32 cwnd_frac;		/* window.h: the window's remainder in 1/2^32 packets */
	struct lf_tcpgt_cfg cfg;
};

static __always_inline void lf_tcpgt_default_cfg(struct lf_tcpgt_cfg *c)
{
	c->max_increase_q32 = LF_Q32_ONE;
	c->rtt_base_us = 50000;
	c->threshold_num = -1;
	c->threshold_den = 20;
	c->rtt_min_epochs = 10;
	c->slow_start = 0;
	c->pad[0] = c->pad[1] = 0;
}

static __always_inline void lf_tcpgt_init_cfg(struct lf_tcpgt *s, u64 cwnd_fp, u64 ssthresh_fp,
					      const struct lf_tcpgt_cfg *cfg)
{
	int i;

	s->cwnd_fp = cwnd_fp;
	s->cwnd_frac = 0;
	s->ssthresh_fp = cfg->slow_start ? ssthresh_fp : cwnd_fp;
	s->boundary_sender_us = 0;
	s->boundary_receiver_us = 0;
	s->delivered_pkts = 0;
	s->epoch_min_rtt_us = 0;
	s->s_q32 = LF_Q32_ONE;
	s->rate_q32 = 0;
	for (i = 0; i < LF_TCPGT_MAX_EPOCHS; i++)
		s->epoch_mins_us[i] = 0;
	s->epoch = 0;
	s->mins_len = 0;
	s->mins_head = 0;
	s->in_slow_start = cfg->slow_start;
	s->has_boundary = 0;
	s->could_grow = 0;
	s->phase = LF_TCPGT_HOLD;
	s->pad[0] = s->pad[1] = 0;
	s->cfg = *cfg;
}

static __always_inline void lf_tcpgt_init(struct lf_tcpgt *s, u64 cwnd_fp, u64 ssthresh_fp)
{
	struct lf_tcpgt_cfg cfg;

	lf_tcpgt_default_cfg(&cfg);
	lf_tcpgt_init_cfg(s, cwnd_fp, ssthresh_fp, &cfg);
}

/* The local minimum RTT of eq. (5): the smallest of the last rtt_min_epochs
 * epochs' minima; 0 before any. Branch-free over the ring (one verifier
 * path). */
static __always_inline u64 lf_tcpgt_local_min_rtt_us(const struct lf_tcpgt *s)
{
	u64 m = LF_U64_MAX;
	int i;

	for (i = 0; i < LF_TCPGT_MAX_EPOCHS; i++) {
		u64 unused = 0 - (1 - lf_lt((u64)i, s->mins_len)); /* all ones past the filled part */

		m = lf_min_u64(m, (u64)s->epoch_mins_us[i] | unused);
	}
	return m & (0 - lf_nz(~m)); /* none: 0 */
}

static __always_inline void lf_tcpgt_push_min(struct lf_tcpgt *s, u64 rtt_us)
{
	u32 cap = s->cfg.rtt_min_epochs;

	if (cap > LF_TCPGT_MAX_EPOCHS)
		cap = LF_TCPGT_MAX_EPOCHS;
	if (cap == 0)
		return;
	if (rtt_us > 0xffffffffULL)
		rtt_us = 0xffffffffULL;
	if (s->mins_len < cap) {
		u32 j = (s->mins_head + s->mins_len) % cap;

		lf_opaque(j); /* keep the mask below: the verifier needs the bound */
		s->epoch_mins_us[j & (LF_TCPGT_MAX_EPOCHS - 1)] = (u32)rtt_us;
		s->mins_len++;
	} else {
		u32 j = s->mins_head;

		lf_opaque(j);
		s->epoch_mins_us[j & (LF_TCPGT_MAX_EPOCHS - 1)] = (u32)rtt_us;
		s->mins_head = (s->mins_head + 1) % cap;
	}
}

/* Tcpgt::restart_epochs: forget the epoch in progress. */
static __always_inline void lf_tcpgt_restart_epochs(struct lf_tcpgt *s)
{
	s->epoch++;
	s->has_boundary = 0;
	s->delivered_pkts = 0;
	s->phase = LF_TCPGT_HOLD;
}

/*
 * eq. (16), phi >= t T / f, exactly: with G = N / TR, T = N / m, f = r / base
 * and N, TR, m, r > 0 it is  r (m - TR) >= t base TR  (multiply by
 * TR m r / N), i.e. for m < TR:  (TR - m) r den <= |num| base TR.
 */
static __always_inline bool lf_tcpgt_uncongested(const struct lf_tcpgt *s, u64 tr_us, u64 m_us, u64 r_us)
{
	u64 ahi, alo, bhi, blo, tn;

	if (m_us >= tr_us)
		return true; /* phi >= 0 >= t T / f */
	tn = s->cfg.threshold_num < 0 ? (u64)(-(s64)s->cfg.threshold_num) : 0;
	lf_mul_128((tr_us - m_us) * s->cfg.threshold_den, r_us, &ahi, &alo);
	lf_mul_128(tn * s->cfg.rtt_base_us, tr_us, &bhi, &blo);
	return ahi < bhi || (ahi == bhi && alo <= blo);
}

/* Tcpgt::end_epoch: measure the epoch that just ended and choose the next
 * epoch's rule (Algorithm 1). */
static __always_inline void lf_tcpgt_end_epoch(struct lf_tcpgt *s, const struct lf_ack *a, u64 receiver_us)
{
	bool could_grow = s->could_grow, had_boundary = s->has_boundary;
	u64 s0 = s->boundary_sender_us, r0 = s->boundary_receiver_us, n, m, r, f;
	s64 tr;

	s->could_grow = 0;
	if (s->epoch_min_rtt_us > 0)
		lf_tcpgt_push_min(s, s->epoch_min_rtt_us);
	s->epoch_min_rtt_us = 0;
	s->boundary_sender_us = a->now_us;
	s->boundary_receiver_us = receiver_us;
	s->has_boundary = 1;
	n = s->delivered_pkts;
	s->delivered_pkts = 0;
	s->epoch++;
	if (!had_boundary)
		return; /* the first boundary: nothing to measure yet */
	(void)s0;
	/* differences of one clock each: the receiver's offset cancels */
	tr = (s64)(receiver_us - r0);
	m = lf_tcpgt_local_min_rtt_us(s);
	if (a->in_recovery || n == 0 || tr <= 0 || m == 0) {
		s->phase = LF_TCPGT_HOLD;
		return;
	}
	/* f = rtt / rtt_base with the smoothed RTT (sect. III-D/E) */
	r = a->rtt_smoothed_us > 0 ? a->rtt_smoothed_us : m;
	f = lf_mul_div(r, LF_Q32_ONE, s->cfg.rtt_base_us);
	if (lf_tcpgt_uncongested(s, (u64)tr, m, r)) {
		u64 fs, p;

		if (s->in_slow_start)
			return; /* slow start goes on; s counts II epochs only */
		/* eq. (14), Algorithm 1 line 4 */
		if (could_grow || s->phase == LF_TCPGT_HOLD)
			s->s_q32 += f;
		/* eq. (15): p = f^2 s^2 / (G base cwnd) = (f s)^2 TR / (N base cwnd),
		 * each step rounded to nearest in q32. (f s)^2 / cwnd is taken
		 * in one step (a 128-bit product): squaring f s alone in q32
		 * saturated from f s = 2^16 on and clamped p to max_increase
		 * where the rule gives less. Now p saturates only when
		 * (f s)^2 / cwnd >= 2^32 packets, and then the rule's p is at
		 * least 1 (clamped) unless N / TR exceeds 2^32 / rtt_base
		 * packets per us (85,899 at 50 ms). */
		fs = lf_mul_shr(f, s->s_q32, 32);
		p = lf_mul_div(fs, fs, LF_CWND_Q32(s));
		p = lf_mul_div(p, (u64)tr, n * s->cfg.rtt_base_us);
		p = lf_min_u64(p, s->cfg.max_increase_q32);
		s->rate_q32 = (s64)p;
		s->phase = LF_TCPGT_INCREASE;
	} else {
		/* eq. (17): n = f phi base / cwnd = r N (m - TR) / (TR m cwnd) < 0,
		 * each step rounded to nearest in q32 */
		u64 x;

		s->s_q32 = LF_Q32_ONE; /* Algorithm 1 line 6 */
		s->in_slow_start = 0;  /* the first congested epoch ends slow start */
		x = lf_mul_div(r << 16, ((u64)tr - m) << 16, m);	/* us, q32 */
		x = lf_mul_div(x, n, (u64)tr);				/* packets, q32 */
		x = lf_mul_div(x, LF_Q32_ONE, LF_CWND_Q32(s));		/* per packet, q32 */
		if (x > (u64)1 << 62)
			x = (u64)1 << 62;
		s->rate_q32 = -(s64)x;
		s->phase = LF_TCPGT_DECREASE;
	}
}

/* Every data packet, retransmissions included, carries the current epoch. */
static __always_inline u32 lf_tcpgt_on_send(struct lf_tcpgt *s, u64 now_us, u64 seq, u32 bytes, int retransmit)
{
	return s->epoch;
}

static __always_inline void lf_tcpgt_on_ack(struct lf_tcpgt *s, const struct lf_ack *a)
{
	if (a->rtt_updated && a->rtt_latest_us > 0) {
		u64 r = a->rtt_latest_us;

		s->epoch_min_rtt_us = s->epoch_min_rtt_us == 0 ? r : lf_min_u64(s->epoch_min_rtt_us, r);
	}
	s->delivered_pkts += a->delivered_pkts;
	if (a->growth_pkts > 0)
		s->could_grow = 1;
	if (!a->in_recovery) {
		if (s->in_slow_start) {
			bool left_ss;

			lf_grow(&s->cwnd_fp, &s->cwnd_frac, s->ssthresh_fp, a, &left_ss); /* leftover dropped */
			if (s->cwnd_fp >= s->ssthresh_fp)
				s->in_slow_start = 0; /* after a timeout: back to IIMD at ssthresh */
		} else if (s->phase == LF_TCPGT_INCREASE) {
			/* p per packet delivered where the transport allows growth;
			 * the increment rounded to nearest fp */
			if (a->growth_pkts > 0)
				lf_add_q32(&s->cwnd_fp, &s->cwnd_frac,
					   lf_mul_div((u64)s->rate_q32, a->delivered_pkts, 1));
		} else if (s->phase == LF_TCPGT_DECREASE) {
			/* in 1/2^32 packets, the remainder included */
			u64 full = (s->cwnd_fp << 16) | s->cwnd_frac;
			u64 floor = lf_min_u64(LF_MIN_SSTHRESH_FP << 16, full);
			u64 dec = lf_mul_div((u64)(-s->rate_q32), a->delivered_pkts, 1);

			full = dec >= full - floor ? floor : full - dec;
			s->cwnd_fp = full >> 16;
			s->cwnd_frac = (u32)(full & 0xffff);
			/* the transport reads cwnd < ssthresh as slow start */
			s->ssthresh_fp = lf_min_u64(s->ssthresh_fp, lf_max_u64(LF_CWND_FP(s), LF_MIN_SSTHRESH_FP));
		}
	}
	if (a->has_ts) {
		/* An epoch shorter than half the smallest RTT is not a round trip
		 * (an echo from before an undo); it ends nothing. */
		bool too_soon = s->has_boundary &&
				2 * (a->now_us > s->boundary_sender_us ? a->now_us - s->boundary_sender_us : 0) <
					a->rtt_min_us;

		if (a->ts_echoed_tag == s->epoch && !too_soon)
			lf_tcpgt_end_epoch(s, a, a->ts_receiver_us);
	} else {
		/* No timestamps: an epoch ends after one smoothed RTT, TR = TS. */
		bool due = !s->has_boundary ||
			   (a->rtt_smoothed_us > 0 && a->now_us >= s->boundary_sender_us &&
			    a->now_us - s->boundary_sender_us >= a->rtt_smoothed_us);

		if (due)
			lf_tcpgt_end_epoch(s, a, a->now_us);
	}
}

/* A loss is the host TCP's: halve, measure afresh after recovery. */
static __always_inline void lf_tcpgt_on_loss(struct lf_tcpgt *s, const struct lf_loss *l)
{
	lf_reduce(lf_div_round(LF_CWND_FP(s), 2), &s->cwnd_fp, &s->cwnd_frac, &s->ssthresh_fp);
	s->in_slow_start = 0;
	s->s_q32 = LF_Q32_ONE;
	lf_tcpgt_restart_epochs(s);
}

static __always_inline void lf_tcpgt_on_recovery_exit(struct lf_tcpgt *s, u64 now_us)
{
	s->cwnd_fp = s->ssthresh_fp;
	s->cwnd_frac = 0;
	lf_tcpgt_restart_epochs(s);
}

/* The end of a timeout recovery (the trait's default on_timeout_recovery_exit):
 * nothing; Linux leaves the window alone there. */
static __always_inline void lf_tcpgt_on_timeout_recovery_exit(struct lf_tcpgt *s, u64 now_us)
{
}

/* RFC 5681: ssthresh = cwnd / 2, cwnd = in flight + 1 (Linux, lf_timeout), slow start to ssthresh, then IIMD. */
static __always_inline void lf_tcpgt_on_rto(struct lf_tcpgt *s, const struct lf_rto *r)
{
	lf_timeout(lf_div_round(LF_CWND_FP(s), 2), r, &s->cwnd_fp, &s->cwnd_frac, &s->ssthresh_fp);
	s->in_slow_start = s->cwnd_fp < s->ssthresh_fp;
	s->s_q32 = LF_Q32_ONE;
	lf_tcpgt_restart_epochs(s);
}

#endif /* LONGFAT_ALGO_TCPGT_H */
