/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * The userspace shim: the algorithms of kernel/algo/ (the same headers the
 * BPF programs include) behind non-inline extern functions, built into a
 * static library by crates/longfat-kernel/build/userspace.rs and declared in
 * crates/longfat-kernel/src/userspace.rs. The differential tests drive these
 * against longfat-cc's Rust controllers.
 */
#include <stddef.h>

#include "../algo/ehstcp.h"
#include "../algo/highspeed.h"
#include "../algo/htcp.h"
#include "../algo/ltcp.h"
#include "../algo/scalable.h"
#include "../algo/tcpgt.h"

#define LF_EXPORT_ALGO(NAME)                                                            \
	void lf_us_##NAME##_init(struct lf_##NAME *s, u64 cwnd_fp, u64 ssthresh_fp)     \
	{                                                                               \
		lf_##NAME##_init(s, cwnd_fp, ssthresh_fp);                              \
	}                                                                               \
	void lf_us_##NAME##_on_ack(struct lf_##NAME *s, const struct lf_ack *a)         \
	{                                                                               \
		lf_##NAME##_on_ack(s, a);                                               \
	}                                                                               \
	void lf_us_##NAME##_on_loss(struct lf_##NAME *s, const struct lf_loss *l)       \
	{                                                                               \
		lf_##NAME##_on_loss(s, l);                                              \
	}                                                                               \
	void lf_us_##NAME##_on_recovery_exit(struct lf_##NAME *s, u64 now_us)           \
	{                                                                               \
		lf_##NAME##_on_recovery_exit(s, now_us);                                \
	}                                                                               \
	void lf_us_##NAME##_on_timeout_recovery_exit(struct lf_##NAME *s, u64 now_us)   \
	{                                                                               \
		lf_##NAME##_on_timeout_recovery_exit(s, now_us);                        \
	}                                                                               \
	void lf_us_##NAME##_on_rto(struct lf_##NAME *s, const struct lf_rto *r)         \
	{                                                                               \
		lf_##NAME##_on_rto(s, r);                                               \
	}                                                                               \
	size_t lf_us_##NAME##_sizeof(void)                                              \
	{                                                                               \
		return sizeof(struct lf_##NAME);                                        \
	}

LF_EXPORT_ALGO(scalable)
LF_EXPORT_ALGO(highspeed)
LF_EXPORT_ALGO(ltcp)
LF_EXPORT_ALGO(htcp)
LF_EXPORT_ALGO(ehstcp)
LF_EXPORT_ALGO(tcpgt)

u32 lf_us_htcp_on_send(struct lf_htcp *s, u64 now_us, u64 seq, u32 bytes, int retransmit)
{
	return lf_htcp_on_send(s, now_us, seq, bytes, retransmit);
}

void lf_us_htcp_default_cfg(struct lf_htcp_cfg *c)
{
	lf_htcp_default_cfg(c);
}

void lf_us_htcp_init_cfg(struct lf_htcp *s, u64 cwnd_fp, u64 ssthresh_fp, const struct lf_htcp_cfg *c)
{
	lf_htcp_init_cfg(s, cwnd_fp, ssthresh_fp, c);
}

u32 lf_us_tcpgt_on_send(struct lf_tcpgt *s, u64 now_us, u64 seq, u32 bytes, int retransmit)
{
	return lf_tcpgt_on_send(s, now_us, seq, bytes, retransmit);
}

void lf_us_tcpgt_default_cfg(struct lf_tcpgt_cfg *c)
{
	lf_tcpgt_default_cfg(c);
}

void lf_us_tcpgt_init_cfg(struct lf_tcpgt *s, u64 cwnd_fp, u64 ssthresh_fp, const struct lf_tcpgt_cfg *c)
{
	lf_tcpgt_init_cfg(s, cwnd_fp, ssthresh_fp, c);
}

/* The fixed-point helpers, for their own tests. */
u64 lf_us_mul_div(u64 a, u64 b, u64 c) { return lf_mul_div(a, b, c); }
u64 lf_us_mul_div_floor(u64 a, u64 b, u64 c) { return lf_mul_div_floor(a, b, c); }
u64 lf_us_mul_shr(u64 a, u64 b, u32 s) { return lf_mul_shr(a, b, s); }
u64 lf_us_isqrt64(u64 x) { return lf_isqrt64(x); }
u64 lf_us_log2_q32(u64 x) { return lf_log2_q32(x); }
u64 lf_us_exp2_q32(u64 y) { return lf_exp2_q32(y); }
u64 lf_us_pow_fp_q32(u64 x_fp, u64 num, u64 den) { return lf_pow_fp_q32(x_fp, num, den); }
u64 lf_us_hs_a_q32(u64 w_fp) { return lf_hs_a_q32(w_fp); }
u64 lf_us_hs_b_q32(u64 w_fp) { return lf_hs_b_q32(w_fp); }
u32 lf_us_ltcp_layers_for(u64 cwnd_fp) { return lf_ltcp_layers_for(cwnd_fp); }

/*
 * The layout of every struct the Rust side mirrors: sizeof, then the offset
 * of each field in declaration order. Returns the number of values written
 * (at most cap), 0 for an unknown id.
 */
#define LF_OFF(T, F) offsetof(struct T, F)
#define LF_LAYOUT(T, ...)                                                       \
	{                                                                       \
		size_t v[] = { sizeof(struct T), __VA_ARGS__ };                 \
		size_t i, n = sizeof(v) / sizeof(v[0]);                         \
		for (i = 0; i < n && i < cap; i++)                              \
			out[i] = v[i];                                          \
		return n;                                                       \
	}

size_t lf_us_layout(u32 id, size_t *out, size_t cap)
{
	switch (id) {
	case 0:
		LF_LAYOUT(lf_ack, LF_OFF(lf_ack, now_us), LF_OFF(lf_ack, delivered_pkts),
			  LF_OFF(lf_ack, growth_pkts), LF_OFF(lf_ack, cum_acked_pkts),
			  LF_OFF(lf_ack, in_flight_pkts), LF_OFF(lf_ack, in_recovery),
			  LF_OFF(lf_ack, rtt_updated), LF_OFF(lf_ack, has_ts),
			  LF_OFF(lf_ack, rtt_latest_us), LF_OFF(lf_ack, rtt_min_us),
			  LF_OFF(lf_ack, rtt_smoothed_us), LF_OFF(lf_ack, ts_echoed_sender_us),
			  LF_OFF(lf_ack, ts_receiver_us), LF_OFF(lf_ack, ts_echoed_tag))
	case 1:
		LF_LAYOUT(lf_loss, LF_OFF(lf_loss, now_us), LF_OFF(lf_loss, in_flight_pkts),
			  LF_OFF(lf_loss, lost_pkts), LF_OFF(lf_loss, rtt_latest_us),
			  LF_OFF(lf_loss, rtt_min_us), LF_OFF(lf_loss, rtt_smoothed_us))
	case 2:
		LF_LAYOUT(lf_rto, LF_OFF(lf_rto, now_us), LF_OFF(lf_rto, backoff), LF_OFF(lf_rto, reduce),
			  LF_OFF(lf_rto, in_flight_pkts))
	case 3:
		LF_LAYOUT(lf_scalable, LF_OFF(lf_scalable, cwnd_fp), LF_OFF(lf_scalable, ssthresh_fp),
			  LF_OFF(lf_scalable, cwnd_frac), LF_OFF(lf_scalable, pad))
	case 4:
		LF_LAYOUT(lf_highspeed, LF_OFF(lf_highspeed, cwnd_fp), LF_OFF(lf_highspeed, ssthresh_fp),
			  LF_OFF(lf_highspeed, cwnd_frac), LF_OFF(lf_highspeed, pad))
	case 5:
		LF_LAYOUT(lf_ltcp, LF_OFF(lf_ltcp, cwnd_fp), LF_OFF(lf_ltcp, ssthresh_fp),
			  LF_OFF(lf_ltcp, layers), LF_OFF(lf_ltcp, cwnd_frac))
	case 6:
		LF_LAYOUT(lf_htcp_cfg, LF_OFF(lf_htcp_cfg, beta_min_q32), LF_OFF(lf_htcp_cfg, beta_max_q32),
			  LF_OFF(lf_htcp_cfg, scale_min_q32), LF_OFF(lf_htcp_cfg, scale_max_q32),
			  LF_OFF(lf_htcp_cfg, delta_l_us), LF_OFF(lf_htcp_cfg, adaptive_min_rtt_us),
			  LF_OFF(lf_htcp_cfg, rtt_ref_us), LF_OFF(lf_htcp_cfg, fade_num),
			  LF_OFF(lf_htcp_cfg, fade_den), LF_OFF(lf_htcp_cfg, rtt_max_from_samples),
			  LF_OFF(lf_htcp_cfg, rtt_scaling), LF_OFF(lf_htcp_cfg, bandwidth_switch),
			  LF_OFF(lf_htcp_cfg, pad))
	case 7:
		LF_LAYOUT(lf_htcp, LF_OFF(lf_htcp, cwnd_fp), LF_OFF(lf_htcp, ssthresh_fp),
			  LF_OFF(lf_htcp, beta_q32), LF_OFF(lf_htcp, rtt_min_ns), LF_OFF(lf_htcp, rtt_max_ns),
			  LF_OFF(lf_htcp, last_cong_us), LF_OFF(lf_htcp, tput_packets),
			  LF_OFF(lf_htcp, tput_since_us), LF_OFF(lf_htcp, smoothed_pps_fp),
			  LF_OFF(lf_htcp, max_pps_fp), LF_OFF(lf_htcp, old_max_pps_fp),
			  LF_OFF(lf_htcp, congestion_events), LF_OFF(lf_htcp, modeswitch),
			  LF_OFF(lf_htcp, has_last_cong), LF_OFF(lf_htcp, episode), LF_OFF(lf_htcp, pad),
			  LF_OFF(lf_htcp, cwnd_frac), LF_OFF(lf_htcp, pad2), LF_OFF(lf_htcp, cfg))
	case 8:
		LF_LAYOUT(lf_ehstcp, LF_OFF(lf_ehstcp, cwnd_fp), LF_OFF(lf_ehstcp, ssthresh_fp),
			  LF_OFF(lf_ehstcp, min_backward_us), LF_OFF(lf_ehstcp, ertt_us_fp),
			  LF_OFF(lf_ehstcp, rtt_min_us), LF_OFF(lf_ehstcp, rtt_max_us),
			  LF_OFF(lf_ehstcp, safety_until_us), LF_OFF(lf_ehstcp, cwnd_frac), LF_OFF(lf_ehstcp, has_min_backward),
			  LF_OFF(lf_ehstcp, has_safety), LF_OFF(lf_ehstcp, pad))
	case 9:
		LF_LAYOUT(lf_tcpgt_cfg, LF_OFF(lf_tcpgt_cfg, max_increase_q32), LF_OFF(lf_tcpgt_cfg, rtt_base_us),
			  LF_OFF(lf_tcpgt_cfg, threshold_num), LF_OFF(lf_tcpgt_cfg, threshold_den),
			  LF_OFF(lf_tcpgt_cfg, rtt_min_epochs), LF_OFF(lf_tcpgt_cfg, slow_start),
			  LF_OFF(lf_tcpgt_cfg, pad))
	case 10:
		LF_LAYOUT(lf_tcpgt, LF_OFF(lf_tcpgt, cwnd_fp), LF_OFF(lf_tcpgt, ssthresh_fp),
			  LF_OFF(lf_tcpgt, boundary_sender_us), LF_OFF(lf_tcpgt, boundary_receiver_us),
			  LF_OFF(lf_tcpgt, delivered_pkts), LF_OFF(lf_tcpgt, epoch_min_rtt_us),
			  LF_OFF(lf_tcpgt, s_q32), LF_OFF(lf_tcpgt, rate_q32), LF_OFF(lf_tcpgt, epoch_mins_us),
			  LF_OFF(lf_tcpgt, epoch), LF_OFF(lf_tcpgt, mins_len), LF_OFF(lf_tcpgt, mins_head),
			  LF_OFF(lf_tcpgt, in_slow_start), LF_OFF(lf_tcpgt, has_boundary),
			  LF_OFF(lf_tcpgt, could_grow), LF_OFF(lf_tcpgt, phase), LF_OFF(lf_tcpgt, pad),
			  LF_OFF(lf_tcpgt, cwnd_frac), LF_OFF(lf_tcpgt, cfg))
	}
	return 0;
}

/* hs_response.h's precomputed logs, for their test against lf_log2_q32. */
u64 lf_us_hs_log2_low_q32(void) { return LF_HS_LOG2_LOW_Q32; }
u64 lf_us_hs_log2_high_q32(void) { return LF_HS_LOG2_HIGH_Q32; }
