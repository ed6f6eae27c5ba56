/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * The interface between longfat's C congestion-control logic and whoever
 * drives it: the BPF struct_ops glue (kernel/<name>.bpf.c) in the kernel, or
 * the userspace shim in the differential tests against longfat-cc.
 *
 * It mirrors longfat-cc's `CongestionControl` trait event for event
 * (crates/longfat-cc/src/lib.rs), in integers:
 *   - windows in fixed point, 1/2^LF_FP_SHIFT packets (`*_fp`, u64);
 *   - times in microseconds (`*_us`, u64): the kernel's TCP clock is in us
 *     (tp->tcp_mstamp); the Rust side gets the same times * 1000 as ns;
 *   - no floating point (BPF has none).
 *
 * Each algorithm kernel/algo/<name>.h defines, with NAME its registry name:
 *   struct lf_NAME               its whole state (plain data, copyable);
 *   void lf_NAME_init(struct lf_NAME *s, u64 cwnd_fp, u64 ssthresh_fp);
 *   void lf_NAME_on_ack(struct lf_NAME *s, const struct lf_ack *a);
 *   void lf_NAME_on_loss(struct lf_NAME *s, const struct lf_loss *l);
 *   void lf_NAME_on_recovery_exit(struct lf_NAME *s, u64 now_us);
 *   void lf_NAME_on_timeout_recovery_exit(struct lf_NAME *s, u64 now_us);
 *        (the end of a timeout recovery, Linux's Loss -> Open: the trait's
 *        on_timeout_recovery_exit; a no-op but where the Rust controller
 *        overrides it: H-TCP)
 *   void lf_NAME_on_rto(struct lf_NAME *s, const struct lf_rto *r);
 *   u32  lf_NAME_on_send(struct lf_NAME *s, u64 now_us, u64 seq, u32 bytes, int retransmit);
 *        (only where the Rust controller overrides on_send: TCP-GT)
 * and reads s->cwnd_fp and s->ssthresh_fp (LF_INFINITE_FP before the first
 * loss, as f64::INFINITY in Rust).
 * Functions are `static __always_inline` so the same header compiles into a
 * BPF object and into the userspace library.
 */
#ifndef LONGFAT_CC_H
#define LONGFAT_CC_H

#ifdef __bpf__
/* vmlinux.h (or the BPF glue) provides u8..u64 and bool. */
#else
#include <stdbool.h>
#include <stdint.h>
typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int32_t s32;
typedef int64_t s64;
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#endif

#define LF_FP_SHIFT 16
#define LF_FP_ONE ((u64)1 << LF_FP_SHIFT)
#define LF_INFINITE_FP ((u64)-1)

/* AckEvent */
struct lf_ack {
	u64 now_us;
	u32 delivered_pkts;
	u32 growth_pkts;
	u32 cum_acked_pkts;
	u32 in_flight_pkts;
	u8 in_recovery;
	u8 rtt_updated;
	u8 has_ts;
	/* RttStats (0 before the first sample) */
	u64 rtt_latest_us;
	u64 rtt_min_us;
	u64 rtt_smoothed_us;
	/* AckTimestamps, valid when has_ts */
	u64 ts_echoed_sender_us;
	u64 ts_receiver_us;
	u32 ts_echoed_tag;
};

/* LossEvent (the Linux profile: no window cap, no forced halving) */
struct lf_loss {
	u64 now_us;
	u32 in_flight_pkts;
	u32 lost_pkts;
	u64 rtt_latest_us;
	u64 rtt_min_us;
	u64 rtt_smoothed_us;
};

/* RtoEvent (the Linux profile) */
struct lf_rto {
	u64 now_us;
	u32 backoff;
	u8 reduce;
	/* Packets still in flight once the timeout marked its losses
	 * (tcp_timeout_mark_lost spares recently sent ones); the window restarts
	 * at this plus one, as tcp_enter_loss sets snd_cwnd. */
	u32 in_flight_pkts;
};

#endif /* LONGFAT_CC_H */
