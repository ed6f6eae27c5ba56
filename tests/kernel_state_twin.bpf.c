// SPDX-License-Identifier: MIT OR Apache-2.0
/*
 * tests/test_kernel.py's second observer of a socket's congestion states: a
 * BPF program on the tcp:tcp_cong_state_set tracepoint (net/ipv4/tcp_cong.c,
 * tcp_set_ca_state: the tracepoint, then icsk_ca_ops->set_state, then
 * icsk_ca_state = new). It records, in order, every change the kernel hands
 * to BPF for the socket whose destination port is cfg[0]: the state before,
 * the state after, icsk_retransmits, for a timeout whether it sets a new
 * ssthresh, and the time (CLOCK_MONOTONIC, as tracefs's "mono" clock). A change the kernel makes without
 * running BPF programs (docs/kernel.md, "Callbacks the kernel did not run")
 * is missing here as it is missing in the glue; tracefs, which is not BPF,
 * still records it.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#define TWIN_EVENTS 8192
/* include/uapi/linux/tcp.h, enum tcp_ca_state */
#define TWIN_CA_DISORDER 1
#define TWIN_CA_LOSS 4

struct twin_event {
	u64 mono_ns;
	u8 old_state;
	u8 new_state;
	u8 retransmits;
	u8 loss_reduces; /* a timeout that calls ssthresh (below) */
	u8 pad[4];
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 2); /* [0]: destination port (network order), [1]: events recorded */
	__type(key, u32);
	__type(value, u32);
} cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, TWIN_EVENTS);
	__type(key, u32);
	__type(value, struct twin_event);
} events SEC(".maps");

SEC("tp_btf/tcp_cong_state_set")
int BPF_PROG(twin_state_set, struct sock *sk, u8 ca_state)
{
	struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);
	u32 k_port = 0, k_count = 1, idx;
	u32 *port, *count;
	struct twin_event *e;

	port = bpf_map_lookup_elem(&cfg, &k_port);
	count = bpf_map_lookup_elem(&cfg, &k_count);
	if (!tp || !port || !count || sk->__sk_common.skc_dport != *port)
		return 0;
	/* The socket's changes are serialised by its lock: in order. */
	idx = __sync_fetch_and_add(count, 1);
	if (idx >= TWIN_EVENTS)
		return 0;
	e = bpf_map_lookup_elem(&events, &idx);
	if (!e)
		return 0;
	e->old_state = BPF_CORE_READ_BITFIELD(&tp->inet_conn, icsk_ca_state);
	e->new_state = ca_state;
	e->retransmits = tp->inet_conn.icsk_retransmits;
	/* net/ipv4/tcp_input.c, tcp_enter_loss (6.x): "Reduce ssthresh if it
	 * has not yet been made inside this window" when the state was Open or
	 * Disorder, or snd_una has reached high_seq, or a timeout recovery made
	 * progress since the last expiry (icsk_retransmits, counted after
	 * tcp_enter_loss by tcp_update_rto_stats, is 0). It calls
	 * tcp_set_ca_state(Loss) before setting high_seq = snd_nxt, so the
	 * fields read here are the ones it decided on. */
	if (ca_state == TWIN_CA_LOSS)
		e->loss_reduces = e->old_state <= TWIN_CA_DISORDER ||
				  (s32)(tp->snd_una - tp->high_seq) >= 0 ||
				  (e->old_state == TWIN_CA_LOSS && !e->retransmits);
	else
		e->loss_reduces = 0;
	e->mono_ns = bpf_ktime_get_ns();
	return 0;
}

char _license[] SEC("license") = "Dual MIT/GPL";
