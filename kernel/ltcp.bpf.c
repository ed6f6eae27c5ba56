// SPDX-License-Identifier: MIT OR Apache-2.0
/* LTCP (Bhandarkar et al. 2005) as a BPF struct_ops congestion control, registered as longfat_ltcp.
 * The algorithm is kernel/algo/ltcp.h; the callbacks are longfat_glue.h. */
#include "longfat_bpf.h"
#include "algo/ltcp.h"

#define LF_ALGO ltcp
#define LF_CA_NAME "longfat_ltcp"
#include "longfat_glue.h"
