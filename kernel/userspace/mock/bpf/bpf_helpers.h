/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Stand-in for libbpf's bpf_helpers.h (glue_harness.c): sections vanish, map
 * definitions stay plain C, and the one helper the glue calls is the
 * harness's. */
#ifndef LONGFAT_MOCK_BPF_HELPERS_H
#define LONGFAT_MOCK_BPF_HELPERS_H

#define SEC(name)
#define __uint(name, val) int(*name)[val]
#define __type(name, val) __typeof__(val) *name
#define __noinline __attribute__((noinline))

void *bpf_sk_storage_get(void *map, void *sk, void *value, u64 flags);

#endif
