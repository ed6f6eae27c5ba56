/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * The BPF glue (kernel/include/longfat_glue.h) in userspace, for
 * crates/longfat-kernel/tests/kernel/glue_order.rs: the same header compiled
 * against mock/ (a stand-in vmlinux.h and libbpf headers) for one socket,
 * with H-TCP behind a wrapper that logs every event the glue hands it. The
 * test plays Linux: it sets the socket's fields as tcp_ack and the timers
 * do and calls the callbacks in the order of a given kernel version.
 */
#include <stddef.h>
#include <string.h>

#include "longfat_bpf.h"
#include "algo/htcp.h"

/* One event the algorithm received, and its state after it. */
enum lfh_kind { LFH_ACK = 1, LFH_LOSS, LFH_RTO, LFH_RECOVERY_EXIT, LFH_TIMEOUT_RECOVERY_EXIT };
struct lfh_event {
	u32 kind;
	u32 pad;
	struct lf_ack ack;
	struct lf_loss loss;
	struct lf_rto rto;
	u64 exit_now_us;
	u64 cwnd_fp;
	u64 ssthresh_fp;
	u64 last_cong_us; /* H-TCP's: where Delta counts from */
};

#define LFH_MAX_EVENTS 1024
static struct lfh_event lfh_log[LFH_MAX_EVENTS];
static size_t lfh_nlog;

/* H-TCP, logged. The glue reads and writes cwnd_fp/ssthresh_fp here. */
struct lf_rec {
	u64 cwnd_fp;
	u64 ssthresh_fp;
	struct lf_htcp h;
};

static void lf_rec_enter(struct lf_rec *s)
{
	s->h.cwnd_fp = s->cwnd_fp;
	s->h.ssthresh_fp = s->ssthresh_fp;
}

static void lf_rec_leave(struct lf_rec *s, struct lfh_event *e)
{
	s->cwnd_fp = s->h.cwnd_fp;
	s->ssthresh_fp = s->h.ssthresh_fp;
	e->cwnd_fp = s->cwnd_fp;
	e->ssthresh_fp = s->ssthresh_fp;
	e->last_cong_us = s->h.last_cong_us;
	if (lfh_nlog < LFH_MAX_EVENTS)
		lfh_log[lfh_nlog++] = *e;
}

static void lf_rec_init(struct lf_rec *s, u64 cwnd_fp, u64 ssthresh_fp)
{
	lf_htcp_init(&s->h, cwnd_fp, ssthresh_fp);
	s->cwnd_fp = s->h.cwnd_fp;
	s->ssthresh_fp = s->h.ssthresh_fp;
}

static void lf_rec_on_ack(struct lf_rec *s, const struct lf_ack *a)
{
	struct lfh_event e = { .kind = LFH_ACK, .ack = *a };

	lf_rec_enter(s);
	lf_htcp_on_ack(&s->h, a);
	lf_rec_leave(s, &e);
}

static void lf_rec_on_loss(struct lf_rec *s, const struct lf_loss *l)
{
	struct lfh_event e = { .kind = LFH_LOSS, .loss = *l };

	lf_rec_enter(s);
	lf_htcp_on_loss(&s->h, l);
	lf_rec_leave(s, &e);
}

static void lf_rec_on_rto(struct lf_rec *s, const struct lf_rto *r)
{
	struct lfh_event e = { .kind = LFH_RTO, .rto = *r };

	lf_rec_enter(s);
	lf_htcp_on_rto(&s->h, r);
	lf_rec_leave(s, &e);
}

static void lf_rec_on_recovery_exit(struct lf_rec *s, u64 now_us)
{
	struct lfh_event e = { .kind = LFH_RECOVERY_EXIT, .exit_now_us = now_us };

	lf_rec_enter(s);
	lf_htcp_on_recovery_exit(&s->h, now_us);
	lf_rec_leave(s, &e);
}

static void lf_rec_on_timeout_recovery_exit(struct lf_rec *s, u64 now_us)
{
	struct lfh_event e = { .kind = LFH_TIMEOUT_RECOVERY_EXIT, .exit_now_us = now_us };

	lf_rec_enter(s);
	lf_htcp_on_timeout_recovery_exit(&s->h, now_us);
	lf_rec_leave(s, &e);
}

/* The tag packets carry from now on (lfh_set_tag): H-TCP tags nothing, so
 * the test stands in for an algorithm whose epochs do (TCP-GT). */
static u32 lfh_tag;

void lfh_set_tag(u32 tag)
{
	lfh_tag = tag;
}

static u32 lf_rec_on_send(struct lf_rec *s, u64 now_us, u64 seq, u32 bytes, int retransmit)
{
	lf_rec_enter(s);
	lf_htcp_on_send(&s->h, now_us, seq, bytes, retransmit);
	return lfh_tag;
}

#define LF_ALGO rec
#define LF_CA_NAME "longfat_rec"
#define LF_HAS_ON_SEND
#include "longfat_glue.h"

/* The one socket, and its storage (bpf_sk_storage_get). */
static struct tcp_sock lfh_tp;
static struct lfg_glue lfh_storage;
static bool lfh_storage_live;

void *bpf_sk_storage_get(void *map, void *sk, void *value, u64 flags)
{
	(void)map;
	(void)value;
	if (sk != &lfh_tp)
		return NULL;
	if (!lfh_storage_live && (flags & BPF_SK_STORAGE_GET_F_CREATE)) {
		memset(&lfh_storage, 0, sizeof(lfh_storage));
		lfh_storage_live = true;
	}
	return lfh_storage_live ? &lfh_storage : NULL;
}

/* What the test sets before a callback and reads after it. */
struct lfh_tcp {
	u64 clock_ns; /* tcp_clock_cache; tcp_mstamp is clock_ns / 1000 */
	u32 segs_in;
	u32 snd_cwnd;
	u32 snd_ssthresh;
	u32 delivered;
	u32 srtt_us; /* Linux keeps it << 3 */
	u32 min_rtt_us;
	u32 packets_out;
	u32 sacked_out;
	u32 lost_out;
	u32 retrans_out;
	u32 rcv_tsval;
	u32 rcv_tsecr;
	u8 ca_state;
	u8 retransmits;
	u8 saw_tstamp;
	u8 pad;
	u32 snd_una;
	u32 snd_nxt;
};

enum lfh_callback {
	LFH_INIT,
	LFH_PKTS_ACKED,   /* arg: pkts_acked, rtt_us: the sample (-1: none) */
	LFH_IN_ACK_EVENT, /* arg: flags */
	LFH_CONG_AVOID,   /* arg: acked */
	LFH_SSTHRESH,
	LFH_SET_STATE,    /* arg: the new state; then icsk_ca_state = arg (tcp_set_ca_state) */
	LFH_CWND_EVENT,   /* arg: the event */
	LFH_UNDO_CWND,
};

void lfh_reset(void)
{
	memset(&lfh_tp, 0, sizeof(lfh_tp));
	lfh_storage_live = false;
	lfh_tag = 0;
	lfh_nlog = 0;
}

/* One callback on the socket `t` describes; returns what it returns (0 for
 * void callbacks) and writes the socket back to `t`. */
u32 lfh_call(struct lfh_tcp *t, u32 callback, u32 arg, s32 rtt_us)
{
	struct tcp_sock *tp = &lfh_tp;
	struct sock *sk = (struct sock *)tp;
	struct ack_sample sample = { .pkts_acked = arg, .rtt_us = rtt_us };
	u32 ret = 0;

	tp->tcp_clock_cache = t->clock_ns;
	tp->tcp_mstamp = t->clock_ns / 1000;
	tp->segs_in = t->segs_in;
	tp->snd_una = t->snd_una;
	tp->snd_nxt = t->snd_nxt;
	tp->snd_cwnd = t->snd_cwnd;
	tp->snd_cwnd_clamp = ~0U;
	tp->snd_ssthresh = t->snd_ssthresh;
	tp->mss_cache = 1448;
	tp->delivered = t->delivered;
	tp->srtt_us = t->srtt_us << 3;
	tp->rtt_min.s[0].v = t->min_rtt_us ? t->min_rtt_us : ~0U;
	tp->packets_out = t->packets_out;
	tp->sacked_out = t->sacked_out;
	tp->lost_out = t->lost_out;
	tp->retrans_out = t->retrans_out;
	tp->max_packets_out = t->packets_out;
	tp->is_cwnd_limited = 1;
	tp->rx_opt.rcv_tsval = t->rcv_tsval;
	tp->rx_opt.rcv_tsecr = t->rcv_tsecr;
	tp->rx_opt.saw_tstamp = t->saw_tstamp;
	tp->inet_conn.icsk_ca_state = t->ca_state;
	tp->inet_conn.icsk_retransmits = t->retransmits;

	switch (callback) {
	case LFH_INIT:
		lfg_init(sk);
		break;
	case LFH_PKTS_ACKED:
		lfg_pkts_acked(sk, &sample);
		break;
	case LFH_IN_ACK_EVENT:
		lfg_in_ack_event(sk, arg);
		break;
	case LFH_CONG_AVOID:
		lfg_cong_avoid(sk, 0, arg);
		break;
	case LFH_SSTHRESH:
		ret = lfg_ssthresh(sk);
		break;
	case LFH_SET_STATE:
		lfg_set_state(sk, (u8)arg);
		tp->inet_conn.icsk_ca_state = (u8)arg;
		break;
	case LFH_CWND_EVENT:
		lfg_cwnd_event(sk, (enum tcp_ca_event)arg);
		break;
	case LFH_UNDO_CWND:
		ret = lfg_undo_cwnd(sk);
		break;
	}
	t->snd_cwnd = tp->snd_cwnd;
	t->snd_ssthresh = tp->snd_ssthresh;
	t->ca_state = tp->inet_conn.icsk_ca_state;
	return ret;
}

/* The events logged since lfh_reset: copies at most cap, returns how many. */
size_t lfh_events(struct lfh_event *out, size_t cap)
{
	size_t n = lfh_nlog < cap ? lfh_nlog : cap;

	memcpy(out, lfh_log, n * sizeof(*out));
	return lfh_nlog;
}

/* The glue's counters (struct lfg_glue_head, programs.rs SocketState). */
void lfh_head(struct lfg_glue_head *out)
{
	*out = lfh_storage.head;
}
