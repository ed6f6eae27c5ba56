// SPDX-License-Identifier: MIT OR Apache-2.0
/* TCP-GT as a BPF struct_ops congestion control, registered as longfat_tcpgt.
 * The algorithm is kernel/algo/tcpgt.h; the callbacks are longfat_glue.h. */
#include "longfat_bpf.h"
#include "algo/tcpgt.h"

#define LF_ALGO tcpgt
#define LF_CA_NAME "longfat_tcpgt"
#define LF_HAS_ON_SEND
#include "longfat_glue.h"
