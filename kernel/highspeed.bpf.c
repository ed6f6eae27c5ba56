// SPDX-License-Identifier: MIT OR Apache-2.0
/* HighSpeed TCP (RFC 3649) as a BPF struct_ops congestion control, registered as longfat_hstcp.
 * The algorithm is kernel/algo/highspeed.h; the callbacks are longfat_glue.h. */
#include "longfat_bpf.h"
#include "algo/highspeed.h"

#define LF_ALGO highspeed
#define LF_CA_NAME "longfat_hstcp"
#include "longfat_glue.h"
