/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * The BPF compile check of the algorithm headers: every function of every
 * kernel/algo/<name>.h and of longfat_fixed.h, called from one BPF program,
 * must compile with
 *   clang-19 -target bpf -mcpu=v4 -O2 -c kernel/userspace/bpf_check.c
 * (no floating point, no 128-bit division, no libc). crates/longfat-kernel's
 * build/userspace.rs runs it when clang-19 is present, and the test
 * tests/fixed_point.rs `algorithm_headers_compile_for_bpf` runs it too.
 * It is a compile check only; the struct_ops programs are kernel/<name>.bpf.c.
 */
typedef unsigned char u8;
typedef unsigned short u16;
typedef unsigned int u32;
typedef unsigned long long u64;
typedef signed int s32;
typedef signed long long s64;
typedef _Bool bool;
#define true 1
#define false 0
#define __always_inline inline __attribute__((always_inline))

#include "../algo/ehstcp.h"
#include "../algo/highspeed.h"
#include "../algo/htcp.h"
#include "../algo/ltcp.h"
#include "../algo/scalable.h"
#include "../algo/tcpgt.h"

#define CHECK(NAME, ...)                                                       \
	__attribute__((section("tc"), used)) int check_##NAME(struct lf_##NAME *s, \
	                                                       struct lf_ack *a)  \
	{                                                                      \
		struct lf_loss l = { .now_us = a->now_us };                    \
		struct lf_rto r = { .now_us = a->now_us, .backoff = 1, .reduce = 1 }; \
		lf_##NAME##_init(s, 10 * LF_FP_ONE, LF_INFINITE_FP);           \
		lf_##NAME##_on_ack(s, a);                                      \
		lf_##NAME##_on_loss(s, &l);                                    \
		lf_##NAME##_on_recovery_exit(s, a->now_us);                    \
		lf_##NAME##_on_rto(s, &r);                                     \
		__VA_ARGS__;                                                   \
		return (int)s->cwnd_fp;                                        \
	}

CHECK(scalable)
CHECK(highspeed)
CHECK(ltcp)
CHECK(htcp, lf_htcp_on_send(s, a->now_us, 0, 1448, 0))
CHECK(ehstcp)
CHECK(tcpgt, lf_tcpgt_on_send(s, a->now_us, 0, 1448, 0))

__attribute__((section("tc"), used)) u64 check_fixed(u64 *x)
{
	return lf_mul_div(x[0], x[1], x[2]) + lf_mul_div_floor(x[0], x[1], x[2]) +
	       lf_mul_shr(x[0], x[1], 16) + lf_isqrt64(x[3]) + lf_log2_q32(x[4]) +
	       lf_exp2_q32(x[5]) + lf_pow_fp_q32(x[6], 4, 5) + lf_ratio_q32(x[0], x[2] | 1) +
	       lf_div_round(x[0], x[2] | 1) + lf_msb64(x[0] | 1);
}
