/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Stand-in for libbpf's bpf_tracing.h (glue_harness.c): a struct_ops program
 * is an ordinary function of its arguments. */
#ifndef LONGFAT_MOCK_BPF_TRACING_H
#define LONGFAT_MOCK_BPF_TRACING_H

#define BPF_PROG(name, args...) name(args)

#endif
