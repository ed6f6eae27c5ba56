// SPDX-License-Identifier: MIT OR Apache-2.0
/* Scalable TCP (Kelly 2003) as a BPF struct_ops congestion control, registered as longfat_stcp.
 * The algorithm is kernel/algo/scalable.h; the callbacks are longfat_glue.h. */
#include "longfat_bpf.h"
#include "algo/scalable.h"

#define LF_ALGO scalable
#define LF_CA_NAME "longfat_stcp"
#include "longfat_glue.h"
