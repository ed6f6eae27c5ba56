/* SPDX-License-Identifier: MIT OR Apache-2.0 */
/* Stand-in for libbpf's bpf_core_read.h (glue_harness.c): plain reads. */
#ifndef LONGFAT_MOCK_BPF_CORE_READ_H
#define LONGFAT_MOCK_BPF_CORE_READ_H

#define BPF_CORE_READ_BITFIELD(s, field) ((s)->field)
#define bpf_core_field_exists(field) 1

#endif
