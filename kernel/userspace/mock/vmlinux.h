/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * Stand-in for the generated vmlinux.h, for kernel/userspace/glue_harness.c
 * only: the kernel types longfat_bpf.h and longfat_glue.h touch, with the
 * kernel's field names (include/linux/tcp.h, include/net/inet_connection_sock.h,
 * include/net/tcp.h) but not its layout, and bitfields as plain bytes.
 */
#ifndef LONGFAT_MOCK_VMLINUX_H
#define LONGFAT_MOCK_VMLINUX_H

#include <stdbool.h>
#include <stdint.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;

struct sock {
	int unused;
};

struct inet_connection_sock {
	struct sock icsk_inet;
	u64 icsk_ca_priv[13]; /* ICSK_CA_PRIV_SIZE: 104 bytes */
	u8 icsk_ca_state;
	u8 icsk_retransmits;
};

struct minmax_sample {
	u32 t;
	u32 v;
};

struct minmax {
	struct minmax_sample s[3];
};

struct tcp_options_received {
	u32 rcv_tsval;
	u32 rcv_tsecr;
	u8 saw_tstamp;
};

struct tcp_sock {
	struct inet_connection_sock inet_conn;
	u64 tcp_mstamp;
	u64 tcp_clock_cache;
	u32 segs_in;
	u32 snd_una;
	u32 snd_nxt;
	u32 snd_cwnd;
	u32 snd_cwnd_clamp;
	u32 snd_ssthresh;
	u32 mss_cache;
	u32 delivered;
	u32 srtt_us;
	u32 packets_out;
	u32 sacked_out;
	u32 lost_out;
	u32 retrans_out;
	u32 max_packets_out;
	u8 is_cwnd_limited;
	u8 tcp_usec_ts;
	struct minmax rtt_min;
	struct tcp_options_received rx_opt;
};

struct ack_sample {
	u32 pkts_acked;
	s32 rtt_us;
	u32 in_flight;
};

enum tcp_ca_state {
	TCP_CA_Open = 0,
	TCP_CA_Disorder = 1,
	TCP_CA_CWR = 2,
	TCP_CA_Recovery = 3,
	TCP_CA_Loss = 4,
};

enum tcp_ca_event {
	CA_EVENT_TX_START = 0,
	CA_EVENT_CWND_RESTART = 1,
	CA_EVENT_COMPLETE_CWR = 2,
	CA_EVENT_LOSS = 3,
	CA_EVENT_ECN_NO_CE = 4,
	CA_EVENT_ECN_IS_CE = 5,
};

struct tcp_congestion_ops {
	void *init, *ssthresh, *cong_avoid, *set_state, *cwnd_event, *in_ack_event, *pkts_acked,
		*undo_cwnd;
	char name[16];
};

#define BPF_MAP_TYPE_SK_STORAGE 24
#define BPF_F_NO_PREALLOC 1
#define BPF_SK_STORAGE_GET_F_CREATE 1

#endif
