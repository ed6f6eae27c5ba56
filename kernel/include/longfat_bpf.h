/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * The BPF side of longfat: what every kernel/<name>.bpf.c includes first.
 *
 *   #include "longfat_bpf.h"
 *   #include "algo/<name>.h"
 *   #define LF_ALGO <name>                 (the lf_<name>_* functions)
 *   #define LF_CA_NAME "longfat_<short>"   (the kernel's name, < 16 bytes)
 *   #include "longfat_glue.h"              (the struct_ops callbacks)
 *
 * This header gives the kernel's types (vmlinux.h, generated at build time
 * from /sys/kernel/btf/vmlinux), libbpf's helpers and the few `tcp_sock`
 * accessors that include/net/tcp.h defines as static inlines (a BPF program
 * cannot call them, so they are restated here, each next to its original).
 * docs/kernel.md, "The BPF glue", explains how the callbacks become events.
 */
#ifndef LONGFAT_BPF_H
#define LONGFAT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

/* include/net/tcp.h */
#define LF_TCP_INFINITE_SSTHRESH 0x7fffffffU

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

static __always_inline struct tcp_sock *lfg_tcp_sk(const struct sock *sk)
{
	/* The verifier promotes a struct_ops `struct sock *` argument of
	 * tcp_congestion_ops to `struct tcp_sock *` (net/ipv4/bpf_tcp_ca.c). */
	return (struct tcp_sock *)sk;
}

static __always_inline struct inet_connection_sock *lfg_inet_csk(const struct sock *sk)
{
	return (struct inet_connection_sock *)sk;
}

/* icsk->icsk_ca_state (a 5-bit field): TCP_CA_Open..TCP_CA_Loss */
static __always_inline u8 lfg_ca_state(const struct sock *sk)
{
	return (u8)BPF_CORE_READ_BITFIELD(lfg_inet_csk(sk), icsk_ca_state);
}

/* tcp.h tcp_packets_in_flight: packets_out - left_out + retrans_out */
static __always_inline u32 lfg_packets_in_flight(const struct tcp_sock *tp)
{
	return tp->packets_out - (tp->sacked_out + tp->lost_out) + tp->retrans_out;
}

/* tcp.h tcp_is_cwnd_limited: cwnd-limited in this round (tcp_cwnd_validate
 * sets the flag), or in slow start below twice the most packets that were out. */
static __always_inline bool lfg_is_cwnd_limited(const struct tcp_sock *tp)
{
	if (BPF_CORE_READ_BITFIELD(tp, is_cwnd_limited))
		return true;
	if (tp->snd_cwnd < tp->snd_ssthresh) /* tcp_in_slow_start */
		return tp->snd_cwnd < 2 * tp->max_packets_out;
	return false;
}

/* tcp.h tcp_min_rtt: the windowed minimum RTT (us), ~0U before a sample. */
static __always_inline u32 lfg_min_rtt_us(const struct tcp_sock *tp)
{
	u32 v = tp->rtt_min.s[0].v;
	return v == ~0U ? 0 : v;
}

/* The connection's TCP timestamp unit in us: 1 ms (TCP_TS_HZ = 1000) unless
 * the route enabled usec timestamps (RTAX_FEATURE_TCP_USEC_TS, Linux 6.7+). */
static __always_inline u64 lfg_ts_unit_us(const struct tcp_sock *tp)
{
	if (bpf_core_field_exists(tp->tcp_usec_ts) && BPF_CORE_READ_BITFIELD(tp, tcp_usec_ts))
		return 1;
	return 1000;
}

#endif /* LONGFAT_BPF_H */
