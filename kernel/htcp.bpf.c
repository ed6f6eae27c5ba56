// SPDX-License-Identifier: MIT OR Apache-2.0
/* H-TCP (Leith and Shorten 2004) as a BPF struct_ops congestion control, registered as longfat_htcp.
 * The algorithm is kernel/algo/htcp.h; the callbacks are longfat_glue.h. */
#include "longfat_bpf.h"
#include "algo/htcp.h"

#define LF_ALGO htcp
#define LF_CA_NAME "longfat_htcp"
#define LF_HAS_ON_SEND /* H-TCP starts its clock at the first send */
#include "longfat_glue.h"
