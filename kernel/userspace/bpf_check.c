/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/*
 * The BPF check of the algorithm headers: one BPF program per algorithm
 * calls every function of its header (and so of longfat_fixed.h) on a state
 * and events kept in an array map. It must
 *   - compile with clang-19 -target bpf -mcpu=v4 -O2 -g (no floating point,
 *     no 128-bit division, no libc): build/userspace.rs and the test
 *     `algorithm_headers_compile_for_bpf` check this;
 *   - pass the kernel's verifier: the test
 *     `algorithm_headers_pass_the_verifier` (ignored by default: it needs
 *     root) loads the object with libbpf.
 * It is a check only; the struct_ops programs are kernel/<name>.bpf.c.
 * BPF_PROG_TYPE_SYSCALL programs: verified and loaded, never attached.
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
#define SEC(name) __attribute__((section(name), used))
#define __uint(name, val) int(*name)[val]
#define __type(name, val) typeof(val) *name

#include "../algo/ehstcp.h"
#include "../algo/highspeed.h"
#include "../algo/htcp.h"
#include "../algo/ltcp.h"
#include "../algo/scalable.h"
#include "../algo/tcpgt.h"

char _license[] SEC("license") = "GPL";

static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;

#define CHECK(NAME, ...)                                                                  \
	struct check_##NAME {                                                             \
		struct lf_##NAME s;                                                       \
		struct lf_ack a;                                                          \
		struct lf_loss l;                                                         \
		struct lf_rto r;                                                          \
		u32 op;                                                                   \
		u32 ret;                                                                  \
	};                                                                                \
	struct {                                                                          \
		__uint(type, 2 /* BPF_MAP_TYPE_ARRAY */);                                 \
		__uint(max_entries, 1);                                                   \
		__type(key, u32);                                                         \
		__type(value, struct check_##NAME);                                       \
	} map_##NAME SEC(".maps");                                                        \
	SEC("syscall") int check_##NAME(void *ctx)                                       \
	{                                                                                 \
		u32 k = 0;                                                                \
		struct check_##NAME *c = bpf_map_lookup_elem(&map_##NAME, &k);           \
		if (!c)                                                                   \
			return 0;                                                         \
		switch (c->op) {                                                          \
		case 0:                                                                   \
			lf_##NAME##_init(&c->s, c->a.now_us, c->a.rtt_min_us);            \
			break;                                                            \
		case 1:                                                                   \
			lf_##NAME##_on_ack(&c->s, &c->a);                                 \
			break;                                                            \
		case 2:                                                                   \
			lf_##NAME##_on_loss(&c->s, &c->l);                                \
			break;                                                            \
		case 3:                                                                   \
			lf_##NAME##_on_recovery_exit(&c->s, c->a.now_us);                 \
			break;                                                            \
		case 4:                                                                   \
			lf_##NAME##_on_rto(&c->s, &c->r);                                 \
			break;                                                            \
		case 5:                                                                   \
			lf_##NAME##_on_timeout_recovery_exit(&c->s, c->a.now_us);         \
			break;                                                            \
		default:                                                                  \
			__VA_ARGS__;                                                      \
		}                                                                         \
		return 0;                                                                 \
	}

CHECK(scalable)
CHECK(highspeed)
CHECK(ltcp)
CHECK(htcp, c->ret = lf_htcp_on_send(&c->s, c->a.now_us, 0, 1448, 0))
CHECK(ehstcp)
CHECK(tcpgt, c->ret = lf_tcpgt_on_send(&c->s, c->a.now_us, 0, 1448, 0))
