// SPDX-License-Identifier: MIT OR Apache-2.0
/* eHSTCP as a BPF struct_ops congestion control, registered as longfat_ehstcp.
 * The algorithm is kernel/algo/ehstcp.h; the callbacks are longfat_glue.h. */
#include "longfat_bpf.h"
#include "algo/ehstcp.h"

#define LF_ALGO ehstcp
#define LF_CA_NAME "longfat_ehstcp"
#include "longfat_glue.h"
