/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * The struct_ops glue: Linux's tcp_congestion_ops callbacks turned into the
 * events of longfat_cc.h, for the algorithm LF_ALGO (its functions
 * lf_<LF_ALGO>_*, its state struct lf_<LF_ALGO>), registered as LF_CA_NAME.
 * Define LF_HAS_ON_SEND when the algorithm has lf_<LF_ALGO>_on_send.
 *
 * The events follow longfat-sim's `linux` transport profile
 * (crates/longfat-sim/src/tcp/sender.rs, `on_ack`): one on_ack per ACK; a
 * loss episode's on_loss before the on_ack of the ACK that revealed it; a
 * fast recovery's on_recovery_exit after the on_ack of the ACK that ended
 * it, and a timeout recovery's on_timeout_recovery_exit after the on_ack of
 * the ACK that ended it. Linux calls, for one ACK (net/ipv4/tcp_input.c, tcp_ack):
 *   pkts_acked (end of tcp_clean_rtx_queue, only when packets were out) and
 *   in_ack_event, in either order: in_ack_event first up to 6.13 and in
 *   6.12.0-6.12.30 (before tcp_clean_rtx_queue), last since "tcp:
 *   reorganize tcp_in_ack_event() and tcp_count_delivered()" (6.14, 6.12.31,
 *   6.1.141); then from tcp_fastretrans_alert ssthresh + set_state(Recovery)
 *   for a new episode or set_state(Open) at its end (tcp_try_undo_recovery)
 *   followed by cwnd_event(CA_EVENT_COMPLETE_CWR) (tcp_end_cwnd_reduction),
 *   then cong_avoid only when the window may grow (tcp_cong_control).
 * So the ACK's facts are gathered in pkts_acked/in_ack_event, tied to their
 * ACK (lfg_ack_part), not to the callback order, and its on_ack is delivered
 * by cong_avoid (with growth), or, when cong_avoid does not come, with no
 * growth at the next callback that needs the order kept (the next ACK, a
 * recovery exit, a timeout). docs/kernel.md "The BPF glue" lists the
 * choices.
 */
#ifndef LONGFAT_GLUE_H
#define LONGFAT_GLUE_H

#if !defined(LF_ALGO) || !defined(LF_CA_NAME)
#error "define LF_ALGO and LF_CA_NAME before including longfat_glue.h"
#endif

#define LF_CAT_(a, b) a##b
#define LF_CAT(a, b) LF_CAT_(a, b)
#define LF_STATE struct LF_CAT(lf_, LF_ALGO)
#define LF_FN(suffix) LF_CAT(LF_CAT(lf_, LF_ALGO), suffix)

#ifdef LF_HAS_ON_SEND
/* The on_send tags a controller attached to packets, and from when: the
 * kernel cannot carry a tag in a packet, so an ACK's tag is the one that was
 * current when the packet it echoes (by TSecr) was sent. */
#define LF_TAGS 8
struct lfg_tag_change {
	u64 since_us; /* own clock, rounded down to the timestamp unit */
	u32 tag;
	u32 prev_tag;
	u32 snd_nxt;  /* the first byte sent with the new tag */
};
#endif

/* What userspace reads of a socket (`longfat_kernel::programs::socket_state`,
 * the map pinned at /sys/fs/bpf/longfat/<algo>_state, keyed by the socket's
 * fd): the same layout for every algorithm, at the start of the value. The
 * counters count events and the callbacks behind them. */
struct lfg_glue_head {
	u64 cwnd_fp;           /* the algorithm's, after the last event */
	u64 ssthresh_fp;
	u32 acks_gathered;     /* ACKs seen by pkts_acked/in_ack_event */
	u32 acks_delivered;    /* on_ack */
	u32 acks_grown;        /* on_ack with growth_pkts > 0 */
	u32 losses;            /* on_loss (ssthresh) */
	u32 losses_taken_back; /* ... that CA_EVENT_LOSS turned into a timeout */
	u32 recoveries;        /* set_state(Recovery): tcp_enter_recovery */
	u32 cwrs;              /* set_state(CWR) */
	u32 recovery_exits;    /* on_recovery_exit and on_timeout_recovery_exit */
	u32 rtos_reduce;       /* on_rto(reduce = 1) */
	u32 rtos_keep;         /* on_rto(reduce = 0) */
	u32 undos;             /* undo_cwnd */
	u32 ack_pending;       /* an ACK gathered, its on_ack not yet delivered */
	u32 recoveries_in_reduction; /* ... entered from Recovery or CWR: no ssthresh */
	u32 missed_callbacks;  /* state changes whose set_state did not run here */
	/* ACKs whose TSecr, on our clock, lies more than 1 s after now, or
	 * before init (rounded down to the unit): a clock error, as no TSval we
	 * sent can (EDT pacing may stamp a TSval a little ahead; an accepted
	 * socket's first ACKs may echo its SYN-ACK, sent before init). */
	u32 ts_echoes_ahead;
	u32 ts_echoes_before_init;
	/* Sockets whose init the kernel did not run (a SYN-ACK processed in a
	 * context where it runs no BPF program): the first callback that ran
	 * initialised the state from the kernel's window then (lfg_glue_ready).
	 * 0 or 1. */
	u32 late_inits;
	u32 reserved;
};

/* crates/longfat-kernel/src/programs.rs (SocketState::parse) reads this layout. */
_Static_assert(sizeof(struct lfg_glue_head) == 88, "lfg_glue_head: 2 u64 then 18 u32");

/* Per-socket state: the algorithm's, its copy for undo, and the glue's. */
struct lfg_glue {
	struct lfg_glue_head head;
	LF_STATE cur;
	LF_STATE undo;
	struct lf_ack ack; /* the ACK being processed, not yet delivered */
	u64 ack_clock_ns;  /* its tp->tcp_clock_cache: which ACK it is (lfg_ack_part) */
	u64 rtt_latest_us; /* the newest RTT sample (RttStats::latest), 0 before one */
	u64 tsval_ext;     /* receiver's TSval, unwrapped (timestamp units) */
	u64 init_us;       /* tcp_mstamp at init */
	u32 tsval_last;
	u32 delivered_last; /* tp->delivered at the previous ACK */
	u32 cwnd_written;   /* the snd_cwnd this glue last wrote */
	u8 ack_pending;
	u8 ack_parts;       /* LFG_PART_*: the callbacks of that ACK seen so far */
	u8 have_undo;
	u8 undone;       /* undo_cwnd ran since the episode began */
	u8 rto_reduced;  /* CA_EVENT_LOSS ran; set_state(Loss) must not call on_rto again */
	u8 tsval_seen;
	u8 ca_state;     /* the state the last set_state moved to */
	u8 rto_count;    /* icsk_retransmits at the last timeout seen */
	u8 loss_exit_pending; /* Loss -> Open: on_timeout_recovery_exit follows the ACK's on_ack */
	u8 ready;        /* lfg_reset ran: the state is the algorithm's */
#ifdef LF_HAS_ON_SEND
	u8 ntags;
	struct lfg_tag_change tags[LF_TAGS];
#endif
};

/* The algorithm's events as global functions: the verifier checks each once,
 * on its own, instead of once per inlined copy in every callback and every
 * path through it (inlined, the larger algorithms exceed its 1M-instruction
 * budget). Global functions take pointers that may be NULL; every argument
 * is marked used (LF_USE), else clang may leave the register of one the
 * algorithm ignores unset, which the verifier refuses. */
#define LF_USE(x) asm volatile("" : "+r"(x))
__noinline int lfg_algo_init(LF_STATE *s, u64 cwnd_fp, u64 ssthresh_fp)
{
	LF_USE(s);
	LF_USE(cwnd_fp);
	LF_USE(ssthresh_fp);
	if (!s)
		return 0;
	LF_FN(_init)(s, cwnd_fp, ssthresh_fp);
	return 0;
}

__noinline int lfg_algo_on_ack(LF_STATE *s, const struct lf_ack *a)
{
	LF_USE(s);
	LF_USE(a);
	if (!s || !a)
		return 0;
	LF_FN(_on_ack)(s, a);
	return 0;
}

__noinline int lfg_algo_on_loss(LF_STATE *s, const struct lf_loss *l)
{
	LF_USE(s);
	LF_USE(l);
	if (!s || !l)
		return 0;
	LF_FN(_on_loss)(s, l);
	return 0;
}

__noinline int lfg_algo_on_rto(LF_STATE *s, const struct lf_rto *r)
{
	LF_USE(s);
	LF_USE(r);
	if (!s || !r)
		return 0;
	LF_FN(_on_rto)(s, r);
	return 0;
}

__noinline int lfg_algo_on_recovery_exit(LF_STATE *s, u64 now_us)
{
	LF_USE(s);
	LF_USE(now_us);
	if (!s)
		return 0;
	LF_FN(_on_recovery_exit)(s, now_us);
	return 0;
}

__noinline int lfg_algo_on_timeout_recovery_exit(LF_STATE *s, u64 now_us)
{
	LF_USE(s);
	LF_USE(now_us);
	if (!s)
		return 0;
	LF_FN(_on_timeout_recovery_exit)(s, now_us);
	return 0;
}

#ifdef LF_HAS_ON_SEND
__noinline u32 lfg_algo_on_send(LF_STATE *s, u64 now_us, u64 seq, u32 bytes)
{
	LF_USE(s);
	LF_USE(now_us);
	LF_USE(seq);
	LF_USE(bytes);
	if (!s)
		return 0;
	return LF_FN(_on_send)(s, now_us, seq, bytes, 0);
}
#endif

/* The state lives in icsk_ca_priv when it fits, else in socket storage. */
#define LF_CA_PRIV_BYTES sizeof(((struct inet_connection_sock *)0)->icsk_ca_priv)
#define LF_IN_PRIV (sizeof(struct lfg_glue) <= LF_CA_PRIV_BYTES)

struct {
	__uint(type, BPF_MAP_TYPE_SK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct lfg_glue);
} lfg_state SEC(".maps");

static __always_inline struct lfg_glue *lfg_glue_get(struct sock *sk, bool create)
{
	if (LF_IN_PRIV)
		return (struct lfg_glue *)lfg_inet_csk(sk)->icsk_ca_priv;
	return bpf_sk_storage_get(&lfg_state, sk, 0, create ? BPF_SK_STORAGE_GET_F_CREATE : 0);
}

static __always_inline void lfg_publish(struct lfg_glue *g)
{
	g->head.cwnd_fp = g->cur.cwnd_fp;
	g->head.ssthresh_fp = g->cur.ssthresh_fp;
	g->head.ack_pending = g->ack_pending;
}

static __always_inline u64 lfg_pkts_to_fp(u32 pkts)
{
	return (u64)pkts << LF_FP_SHIFT;
}

static __always_inline bool lfg_in_reduction(u8 ca_state)
{
	return ca_state == TCP_CA_Recovery || ca_state == TCP_CA_CWR;
}

/* Where Linux lets a module set the window (not during PRR's Recovery/CWR):
 * snd_cwnd = max(cwnd, 1) packets, at most snd_cwnd_clamp. */
static __always_inline void lfg_write_cwnd(struct sock *sk, struct lfg_glue *g)
{
	struct tcp_sock *tp = lfg_tcp_sk(sk);
	u64 pkts = g->cur.cwnd_fp >> LF_FP_SHIFT;
	u32 clamp = tp->snd_cwnd_clamp;

	if (pkts < 1)
		pkts = 1;
	if (pkts > clamp)
		pkts = clamp;
	tp->snd_cwnd = (u32)pkts;
	g->cwnd_written = (u32)pkts;
}

/* Linux changed snd_cwnd itself since we wrote it (tcp_enter_loss,
 * tcp_cwnd_restart, tcp_cwnd_application_limited, tcp_moderate_cwnd...):
 * the kernel's value wins, as it would for a module that keeps no cwnd. */
static __always_inline void lfg_adopt_cwnd(struct sock *sk, struct lfg_glue *g)
{
	struct tcp_sock *tp = lfg_tcp_sk(sk);

	if (lfg_in_reduction(lfg_ca_state(sk)))
		return;
	if (tp->snd_cwnd != g->cwnd_written) {
		g->cur.cwnd_fp = lfg_pkts_to_fp(tp->snd_cwnd);
		g->cwnd_written = tp->snd_cwnd;
	}
}

#ifdef LF_HAS_ON_SEND
/* The packets leaving after an event carry the tag on_send returns now. */
static __always_inline void lfg_note_tag(struct sock *sk, struct lfg_glue *g)
{
	struct tcp_sock *tp = lfg_tcp_sk(sk);
	u64 now_us = tp->tcp_mstamp;
	u64 unit = lfg_ts_unit_us(tp);
	u32 tag = lfg_algo_on_send(&g->cur, now_us, tp->snd_nxt, tp->mss_cache);
	u32 last = g->ntags ? g->tags[0].tag : 0;

	if (g->ntags && tag == last)
		return;
	for (int i = LF_TAGS - 1; i > 0; i--)
		g->tags[i] = g->tags[i - 1];
	g->tags[0].since_us = now_us / unit * unit;
	g->tags[0].tag = tag;
	g->tags[0].prev_tag = last;
	g->tags[0].snd_nxt = tp->snd_nxt;
	if (g->ntags < LF_TAGS)
		g->ntags++;
}

/* The tag of the packet an ACK echoes, sent at own time `sent_us` (its
 * TSval, so rounded down to the unit), for an ACK up to `snd_una`: the
 * newest change before it. The echo cannot order a packet and a change of
 * the same tick; the sequence can: the ACK acknowledges data first sent
 * after the change (snd_una beyond the change's snd_nxt; Linux's after(),
 * include/net/tcp.h) when the packet it echoes came after the change: the
 * echo is TS.Recent, the TSval of the first segment since the receiver's
 * last ACK (tcp_input.c, tcp_replace_ts_recent: seq not after rcv_wup).
 * Only a delayed ACK that covers packets from both sides of the change
 * takes the new tag with an older packet's echo (an epoch ends one ACK
 * early). Taking the older tag for the whole tick instead ended an epoch a
 * whole round trip late whenever the window left in the tick of the
 * change, as ACK-clocked small windows do (docs/kernel.md). */
static __always_inline u32 lfg_tag_at(const struct lfg_glue *g, u64 sent_us, u32 snd_una)
{
	for (int i = 0; i < LF_TAGS; i++) {
		if (i >= g->ntags)
			break;
		if (sent_us > g->tags[i].since_us ||
		    (sent_us == g->tags[i].since_us && (s32)(snd_una - g->tags[i].snd_nxt) > 0))
			return g->tags[i].tag;
		if (i == g->ntags - 1)
			return g->tags[i].prev_tag;
	}
	return 0;
}
#else
static __always_inline void lfg_note_tag(struct sock *sk, struct lfg_glue *g) {}
#endif

/* A timeout recovery ends (Loss -> Open): the trait's on_timeout_recovery_exit,
 * which leaves the window alone, as Linux does there. */
static __always_inline void lfg_end_timeout_recovery(struct lfg_glue *g, u64 now_us)
{
	g->loss_exit_pending = 0;
	lfg_algo_on_timeout_recovery_exit(&g->cur, now_us);
	g->head.recovery_exits++;
}

/* The ACK gathered by pkts_acked/in_ack_event goes to the algorithm (and
 * then the end of the timeout recovery it ended, if it did). */
static __always_inline void lfg_deliver_ack(struct sock *sk, struct lfg_glue *g, u32 growth_pkts)
{
	if (!g->ack_pending)
		return;
	g->ack_pending = 0;
	g->delivered_last += g->ack.delivered_pkts;
	g->ack.growth_pkts = growth_pkts;
	g->ack.in_recovery = lfg_in_reduction(lfg_ca_state(sk));
	lfg_adopt_cwnd(sk, g);
	g->head.acks_delivered++;
	if (growth_pkts)
		g->head.acks_grown++;
	lfg_algo_on_ack(&g->cur, &g->ack);
	if (!g->ack.in_recovery)
		lfg_write_cwnd(sk, g);
	if (g->loss_exit_pending)
		lfg_end_timeout_recovery(g, g->ack.now_us);
	lfg_note_tag(sk, g);
}

static __always_inline void lfg_reset(struct sock *sk, struct lfg_glue *g)
{
	struct tcp_sock *tp = lfg_tcp_sk(sk);
	u64 ssthresh_fp = tp->snd_ssthresh >= LF_TCP_INFINITE_SSTHRESH ? LF_INFINITE_FP
								       : lfg_pkts_to_fp(tp->snd_ssthresh);

	__builtin_memset(g, 0, sizeof(*g));
	g->ready = 1;
	lfg_algo_init(&g->cur, lfg_pkts_to_fp(tp->snd_cwnd), ssthresh_fp);
	g->init_us = tp->tcp_mstamp;
	g->delivered_last = tp->delivered;
	g->ca_state = lfg_ca_state(sk);
	lfg_write_cwnd(sk, g);
	lfg_note_tag(sk, g);
	lfg_publish(g);
}

SEC("struct_ops")
void BPF_PROG(lfg_init, struct sock *sk)
{
	struct lfg_glue *g = lfg_glue_get(sk, true);

	if (g)
		lfg_reset(sk, g);
}

/* The state every callback after init works on. The kernel may not have run
 * init: an active open's init runs where its SYN-ACK is processed
 * (tcp_finish_connect -> tcp_init_transfer -> tcp_init_congestion_control),
 * in a softirq, and some kernels run no BPF program in some interrupt
 * contexts (docs/kernel.md, "Callbacks the kernel did not run"). Without
 * state every callback returned early and snd_cwnd stayed at the initial
 * window for the whole connection (seen in CI: H-TCP at 2.3 Mbit/s,
 * 10 packets per 50 ms, on a 100 Mbit/s path). So the first callback that
 * runs creates the state and initialises it as init would have, from the
 * kernel's window and threshold at that moment, and counts it. */
static __always_inline struct lfg_glue *lfg_glue_ready(struct sock *sk)
{
	struct lfg_glue *g = lfg_glue_get(sk, true);

	if (g && !g->ready) {
		lfg_reset(sk, g);
		g->head.late_inits = 1;
	}
	return g;
}

/* A new ACK: what Linux sets before tcp_ack and keeps through it (the
 * clock, the parsed timestamps), taken once. */
static __always_inline void lfg_begin_ack(struct sock *sk, struct lfg_glue *g)
{
	struct tcp_sock *tp = lfg_tcp_sk(sk);
	struct lf_ack *a = &g->ack;
	u64 unit, now_units, ecr, cand;

	__builtin_memset(a, 0, sizeof(*a));
	a->now_us = tp->tcp_mstamp;
	if (tp->rx_opt.saw_tstamp) {
		unit = lfg_ts_unit_us(tp);
		/* TSecr: the TSval we sent, our own clock (tcp_mstamp based)
		 * in units plus tp->tsoffset, which Linux has already taken
		 * off (tcp_parse_aligned_timestamp, tcp_fast_parse_options:
		 * rcv_tsecr -= tsoffset); widened to the 64-bit value nearest
		 * to now. */
		now_units = tp->tcp_mstamp / unit;
		ecr = tp->rx_opt.rcv_tsecr;
		cand = (now_units & ~0xffffffffULL) | ecr;
		if (cand > now_units + 0x80000000ULL && cand >= 0x100000000ULL)
			cand -= 0x100000000ULL;
		else if (cand + 0x80000000ULL < now_units)
			cand += 0x100000000ULL;
		/* TSval: the peer's clock, unwrapped from its first value
		 * (started 2^32 units up so that reordering cannot go below 0). */
		if (!g->tsval_seen) {
			g->tsval_seen = 1;
			g->tsval_ext = 0x100000000ULL + tp->rx_opt.rcv_tsval;
		} else {
			g->tsval_ext += (s64)(s32)(tp->rx_opt.rcv_tsval - g->tsval_last);
		}
		g->tsval_last = tp->rx_opt.rcv_tsval;
		a->has_ts = 1;
		a->ts_echoed_sender_us = cand * unit;
		if (cand * unit > tp->tcp_mstamp + 1000000)
			g->head.ts_echoes_ahead++;
		if (cand < g->init_us / unit)
			g->head.ts_echoes_before_init++;
		a->ts_receiver_us = g->tsval_ext * unit;
#ifdef LF_HAS_ON_SEND
		a->ts_echoed_tag = lfg_tag_at(g, a->ts_echoed_sender_us, tp->snd_una);
#endif
	}
	g->ack_clock_ns = tp->tcp_clock_cache;
	g->ack_parts = 0;
	g->ack_pending = 1;
	g->head.acks_gathered++;
}

#define LFG_PART_PKTS_ACKED 1
#define LFG_PART_IN_ACK_EVENT 2

/* Callback `part` of the ACK tcp_ack is processing. Linux calls both parts
 * for an ACK that found packets out, only in_ack_event for one that did not
 * (the no_queue path), and nothing else of ours between them, in an order
 * that depends on the version (file comment). The ACK is known by
 * tp->tcp_clock_cache: tcp_rcv_established and tcp_rcv_state_process
 * refresh it (tcp_mstamp_refresh, ktime_get_ns) for every segment before
 * tcp_ack, and nothing refreshes it between the two parts. (tp->segs_in is
 * no key: tcp_v4_rcv counts a segment when it arrives, so ACKs processed
 * from the backlog all see the same count, which may even grow during one
 * of them.) A part already seen is a new ACK too, should two ACKs share a
 * clock reading. The first part starts the ACK, delivering a previous one
 * still pending; what tcp_ack changes in between (tp->delivered, the
 * pipe, srtt, min_rtt: tcp_clean_rtx_queue) is taken again at each part,
 * so the later part's values stand, as they would in either order. */
static __always_inline void lfg_ack_part(struct sock *sk, struct lfg_glue *g, u8 part)
{
	struct tcp_sock *tp = lfg_tcp_sk(sk);
	struct lf_ack *a = &g->ack;
	u32 delivered;

	if (!g->ack_pending || g->ack_clock_ns != tp->tcp_clock_cache || (g->ack_parts & part)) {
		/* A previous ACK without cong_avoid is delivered before this one. */
		lfg_deliver_ack(sk, g, 0);
		lfg_begin_ack(sk, g);
	}
	g->ack_parts |= part;
	delivered = tp->delivered - g->delivered_last;
	a->delivered_pkts = delivered;
	/* Pipe before this ACK: what is in flight now plus what it delivered. */
	a->in_flight_pkts = lfg_packets_in_flight(tp) + delivered;
	a->rtt_latest_us = g->rtt_latest_us;
	a->rtt_min_us = lfg_min_rtt_us(tp);
	a->rtt_smoothed_us = tp->srtt_us >> 3;
}

/* tcp_clean_rtx_queue: the packets the cumulative ACK removed and the ACK's
 * RTT sample (tcp_ack_update_rtt's ca_rtt_us; -1 when there is none). */
SEC("struct_ops")
void BPF_PROG(lfg_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct lfg_glue *g = lfg_glue_ready(sk);
	s32 rtt = sample->rtt_us;

	if (!g)
		return;
	lfg_ack_part(sk, g, LFG_PART_PKTS_ACKED);
	if (rtt > 0)
		g->rtt_latest_us = (u64)rtt;
	g->ack.rtt_updated = rtt > 0;
	g->ack.rtt_latest_us = g->rtt_latest_us;
	g->ack.cum_acked_pkts = sample->pkts_acked;
	lfg_publish(g);
}

/* Every ACK (tcp_ack). */
SEC("struct_ops")
void BPF_PROG(lfg_in_ack_event, struct sock *sk, u32 flags)
{
	struct lfg_glue *g = lfg_glue_ready(sk);

	if (!g)
		return;
	lfg_ack_part(sk, g, LFG_PART_IN_ACK_EVENT);
	lfg_publish(g);
}

/* tcp_cong_avoid: the ACK may raise the window (tcp_may_raise_cwnd, not in
 * Recovery/CWR). Growth is `acked` (acked_sacked) while the flow is
 * cwnd-limited (tcp_is_cwnd_limited), else 0, as the `linux` profile. */
SEC("struct_ops")
void BPF_PROG(lfg_cong_avoid, struct sock *sk, u32 ack, u32 acked)
{
	struct lfg_glue *g = lfg_glue_ready(sk);

	if (!g)
		return;
	lfg_deliver_ack(sk, g, lfg_is_cwnd_limited(lfg_tcp_sk(sk)) ? acked : 0);
	lfg_publish(g);
}

/* tcp_init_cwnd_reduction (fast recovery, a TLP-repaired loss, ECN/local
 * CWR) and tcp_enter_loss (a timeout that reduces) call this for the new
 * ssthresh. It is taken as a loss episode; cwnd_event(CA_EVENT_LOSS) turns it
 * into a timeout when one follows. */
SEC("struct_ops")
u32 BPF_PROG(lfg_ssthresh, struct sock *sk)
{
	struct lfg_glue *g = lfg_glue_ready(sk);
	struct tcp_sock *tp = lfg_tcp_sk(sk);
	struct lf_loss l = {};
	u64 ss;

	if (!g)
		return tp->snd_cwnd > 4 ? tp->snd_cwnd >> 1 : 2;
	l.now_us = tp->tcp_mstamp;
	l.in_flight_pkts = g->ack_pending ? g->ack.in_flight_pkts : lfg_packets_in_flight(tp);
	/* The ACK that ended a timeout recovery opens a new episode
	 * (tcp_fastretrans_alert: from TCP_CA_Loss on to tcp_enter_recovery):
	 * its on_ack and the exit come first, as the simulator orders them
	 * (sender.rs: on_ack, on_timeout_recovery_exit, then the episode's
	 * on_congestion_event). Its growth is 0: Linux calls no cong_avoid in
	 * Recovery or CWR. */
	if (g->loss_exit_pending)
		lfg_deliver_ack(sk, g, 0);
	lfg_adopt_cwnd(sk, g);
	__builtin_memcpy(&g->undo, &g->cur, sizeof(g->cur));
	g->have_undo = 1;
	g->undone = 0;
	l.lost_pkts = tp->lost_out;
	l.rtt_latest_us = g->rtt_latest_us;
	l.rtt_min_us = lfg_min_rtt_us(tp);
	l.rtt_smoothed_us = tp->srtt_us >> 3;
	lfg_algo_on_loss(&g->cur, &l);
	g->head.losses++;
	lfg_note_tag(sk, g);
	lfg_publish(g);
	/* The window itself is PRR's until the episode ends. */
	ss = g->cur.ssthresh_fp;
	if (ss == LF_INFINITE_FP)
		return LF_TCP_INFINITE_SSTHRESH;
	ss >>= LF_FP_SHIFT;
	if (ss < 2)
		ss = 2;
	return ss >= LF_TCP_INFINITE_SSTHRESH ? LF_TCP_INFINITE_SSTHRESH : (u32)ss;
}

static __always_inline void lfg_timeout(struct sock *sk, struct lfg_glue *g, bool reduce)
{
	struct tcp_sock *tp = lfg_tcp_sk(sk);
	struct lf_rto r = {};

	r.now_us = tp->tcp_mstamp;
	/* tcp_retransmit_timer counts this expiry (icsk_retransmits++) after
	 * tcp_enter_loss; progress (tcp_ack) resets the count. */
	r.backoff = (u32)lfg_inet_csk(sk)->icsk_retransmits + 1;
	r.reduce = reduce;
	/* tcp_enter_loss has run tcp_timeout_mark_lost (which spares packets
	 * sent less than RACK's RTT ago) before ssthresh, CA_EVENT_LOSS and
	 * set_state(Loss), and sets snd_cwnd = tcp_packets_in_flight + 1
	 * from this same count. */
	r.in_flight_pkts = lfg_packets_in_flight(tp);
	if (reduce)
		g->head.rtos_reduce++;
	else
		g->head.rtos_keep++;
	lfg_algo_on_rto(&g->cur, &r);
}

static __always_inline void lfg_write_ssthresh(struct sock *sk, struct lfg_glue *g)
{
	u64 ss = g->cur.ssthresh_fp;

	if (ss == LF_INFINITE_FP) {
		lfg_tcp_sk(sk)->snd_ssthresh = LF_TCP_INFINITE_SSTHRESH;
		return;
	}
	ss >>= LF_FP_SHIFT;
	if (ss < 2)
		ss = 2;
	lfg_tcp_sk(sk)->snd_ssthresh = ss >= LF_TCP_INFINITE_SSTHRESH ? LF_TCP_INFINITE_SSTHRESH : (u32)ss;
}

SEC("struct_ops")
void BPF_PROG(lfg_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct lfg_glue *g = lfg_glue_ready(sk);

	if (!g)
		return;
	if (ev == CA_EVENT_LOSS) {
		/* tcp_enter_loss, right after ssthresh(): a timeout that sets a
		 * new ssthresh, not a loss episode. Take back the episode. */
		if (g->have_undo)
			__builtin_memcpy(&g->cur, &g->undo, sizeof(g->cur));
		g->head.losses_taken_back++;
		lfg_deliver_ack(sk, g, 0);
		__builtin_memcpy(&g->undo, &g->cur, sizeof(g->cur));
		g->have_undo = 1;
		g->undone = 0;
		lfg_timeout(sk, g, true);
		lfg_write_ssthresh(sk, g);
		g->rto_reduced = 1;
		lfg_note_tag(sk, g);
	} else if (ev == CA_EVENT_COMPLETE_CWR) {
		/* tcp_end_cwnd_reduction set snd_cwnd = ssthresh after the
		 * recovery exit wrote ours (Recovery) or before it (CWR). */
		if (!lfg_in_reduction(lfg_ca_state(sk)))
			lfg_write_cwnd(sk, g);
	}
	lfg_publish(g);
}

SEC("struct_ops")
void BPF_PROG(lfg_set_state, struct sock *sk, u8 new_state)
{
	struct lfg_glue *g = lfg_glue_ready(sk);
	u8 old = lfg_ca_state(sk);

	if (!g)
		return;
	/* The kernel changes icsk_ca_state only through tcp_set_ca_state,
	 * which calls us; a state we did not move to means the kernel ran none
	 * of our callbacks for a change (it runs no BPF program in some
	 * interrupt contexts: docs/kernel.md, "Callbacks the kernel did not
	 * run"). */
	if (old != g->ca_state)
		g->head.missed_callbacks++;
	if (new_state == TCP_CA_Loss) {
		/* Timeouts in a row count up icsk_retransmits (progress resets
		 * it): a gap is a Loss -> Loss change not seen here. */
		u8 n = lfg_inet_csk(sk)->icsk_retransmits;

		if (old == TCP_CA_Loss && g->ca_state == TCP_CA_Loss && n > g->rto_count + 1)
			g->head.missed_callbacks += n - g->rto_count - 1;
		g->rto_count = n;
	}
	g->ca_state = new_state;
	if (new_state == TCP_CA_Loss) {
		/* Every timeout (tcp_enter_loss); ssthresh() and CA_EVENT_LOSS
		 * came first only for one that reduces. */
		if (g->rto_reduced) {
			g->rto_reduced = 0;
		} else {
			lfg_deliver_ack(sk, g, 0);
			lfg_adopt_cwnd(sk, g);
			lfg_timeout(sk, g, false);
			lfg_note_tag(sk, g);
		}
		/* Linux set snd_cwnd = in flight + 1, the algorithm's restart
		 * window (lf_timeout) from the same count: the write keeps it. */
		lfg_write_cwnd(sk, g);
		lfg_publish(g);
		return;
	}
	if (new_state == TCP_CA_Recovery) {
		g->head.recoveries++;
		if (lfg_in_reduction(old))
			g->head.recoveries_in_reduction++;
	}
	if (new_state == TCP_CA_CWR && old != TCP_CA_CWR)
		g->head.cwrs++;
	if (lfg_in_reduction(old) && (new_state == TCP_CA_Open || new_state == TCP_CA_Disorder)) {
		if (old == TCP_CA_Recovery) {
			/* The ACK that ends fast recovery is delivered in it. */
			lfg_deliver_ack(sk, g, 0);
		}
		if (!g->undone) {
			lfg_algo_on_recovery_exit(&g->cur, lfg_tcp_sk(sk)->tcp_mstamp);
			g->head.recovery_exits++;
		}
		g->undone = 0;
		lfg_write_cwnd(sk, g);
		lfg_note_tag(sk, g);
	}
	if (old == TCP_CA_Loss && new_state == TCP_CA_Open) {
		/* A timeout recovery ends (tcp_process_loss ->
		 * tcp_try_undo_recovery; after tcp_try_undo_loss, an undo, the
		 * episode is gone). Linux's modules hear every return to Open
		 * (tcp_htcp.c, htcp_state: case TCP_CA_Open restarts Delta); the
		 * stack leaves snd_cwnd alone. The simulator reports it after
		 * the on_ack of the ACK that ended it (sender.rs:
		 * on_timeout_recovery_exit), so it waits for that ACK's delivery
		 * (cong_avoid, with growth), unless no ACK is being gathered. */
		if (!g->undone) {
			if (g->ack_pending)
				g->loss_exit_pending = 1;
			else
				lfg_end_timeout_recovery(g, lfg_tcp_sk(sk)->tcp_mstamp);
			lfg_note_tag(sk, g);
		}
		g->undone = 0;
	}
	lfg_publish(g);
}

/* tcp_undo_cwnd_reduction: the reduction was spurious (DSACK, Eifel,
 * F-RTO). The algorithm's whole state goes back to before it, as the
 * simulator's `undo` snapshot; the window it had is returned. */
SEC("struct_ops")
u32 BPF_PROG(lfg_undo_cwnd, struct sock *sk)
{
	struct lfg_glue *g = lfg_glue_ready(sk);
	struct tcp_sock *tp = lfg_tcp_sk(sk);
	u64 pkts;

	if (!g)
		return tp->snd_cwnd;
	if (g->have_undo) {
		__builtin_memcpy(&g->cur, &g->undo, sizeof(g->cur));
		g->have_undo = 0;
		g->undone = 1;
		g->head.undos++;
	}
	pkts = g->cur.cwnd_fp >> LF_FP_SHIFT;
	if (pkts < 1)
		pkts = 1;
	if (pkts > tp->snd_cwnd_clamp)
		pkts = tp->snd_cwnd_clamp;
	g->cwnd_written = (u32)pkts;
	lfg_note_tag(sk, g);
	lfg_publish(g);
	return (u32)pkts;
}

/* The struct_ops map's section, set per object variant by
 * crates/longfat-kernel/build/bpf.rs: ".struct_ops.link" (registered through
 * a BPF link, Linux 6.4+) or ".struct_ops" (registered by updating the map,
 * as 6.1 needs; libbpf, bpf_map__attach_struct_ops). */
#ifndef LF_STRUCT_OPS_SEC
#define LF_STRUCT_OPS_SEC ".struct_ops.link"
#endif
SEC(LF_STRUCT_OPS_SEC)
struct tcp_congestion_ops LF_CAT(longfat_, LF_ALGO) = {
	.init = (void *)lfg_init,
	.ssthresh = (void *)lfg_ssthresh,
	.cong_avoid = (void *)lfg_cong_avoid,
	.set_state = (void *)lfg_set_state,
	.cwnd_event = (void *)lfg_cwnd_event,
	.in_ack_event = (void *)lfg_in_ack_event,
	.pkts_acked = (void *)lfg_pkts_acked,
	.undo_cwnd = (void *)lfg_undo_cwnd,
	.name = LF_CA_NAME,
};

/* struct_ops programs must be GPL-compatible (kernel/bpf/verifier.c,
 * check_struct_ops_btf_id); the project is MIT OR Apache-2.0. */
char _license[] SEC("license") = "Dual MIT/GPL";

#endif /* LONGFAT_GLUE_H */
