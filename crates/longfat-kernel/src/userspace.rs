//! The C algorithm logic of `kernel/algo/` built for userspace (by
//! `build/userspace.rs` from `kernel/userspace/longfat_userspace.c`): `#[repr(C)]`
//! mirrors of the structs of `kernel/include/longfat_cc.h` and of each
//! algorithm's state, and the FFI declarations of the `lf_us_*` wrappers.
//! The differential tests (`tests/kernel/differential.rs`) drive these against
//! longfat-cc's controllers.
//!
//! Windows are fixed point in 1/2^16 packets (`*_fp`), factors in 1/2^32
//! (`*_q32`), times in microseconds unless a field says `_ns`. The layouts are
//! checked against the C compiler's by [`c_layout`] (test `layouts_match_c`).

#![allow(non_camel_case_types)]

use std::ffi::c_int;

/// `LF_FP_SHIFT`: windows in 1/2^16 packets.
pub const FP_SHIFT: u32 = 16;
/// One packet in fixed point.
pub const FP_ONE: u64 = 1 << FP_SHIFT;
/// `LF_INFINITE_FP`: ssthresh before the first loss.
pub const INFINITE_FP: u64 = u64::MAX;
/// One in q32.
pub const Q32_ONE: u64 = 1 << 32;

/// Packets to fixed point, rounded to nearest (infinity to [`INFINITE_FP`]).
pub fn to_fp(pkts: f64) -> u64 {
    if pkts.is_infinite() {
        INFINITE_FP
    } else {
        (pkts * FP_ONE as f64).round() as u64
    }
}

/// Packets to 1/2^32 packets (a window with its remainder), rounded to nearest.
pub fn to_q32(pkts: f64) -> u64 {
    (pkts * Q32_ONE as f64).round() as u64
}

/// Fixed point to packets ([`INFINITE_FP`] to infinity).
pub fn from_fp(fp: u64) -> f64 {
    if fp == INFINITE_FP {
        f64::INFINITY
    } else {
        fp as f64 / FP_ONE as f64
    }
}

/// `struct lf_ack`
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct lf_ack {
    pub now_us: u64,
    pub delivered_pkts: u32,
    pub growth_pkts: u32,
    pub cum_acked_pkts: u32,
    pub in_flight_pkts: u32,
    pub in_recovery: u8,
    pub rtt_updated: u8,
    pub has_ts: u8,
    pub rtt_latest_us: u64,
    pub rtt_min_us: u64,
    pub rtt_smoothed_us: u64,
    pub ts_echoed_sender_us: u64,
    pub ts_receiver_us: u64,
    pub ts_echoed_tag: u32,
}

/// `struct lf_loss`
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct lf_loss {
    pub now_us: u64,
    pub in_flight_pkts: u32,
    pub lost_pkts: u32,
    pub rtt_latest_us: u64,
    pub rtt_min_us: u64,
    pub rtt_smoothed_us: u64,
}

/// `struct lf_rto`
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct lf_rto {
    pub now_us: u64,
    pub backoff: u32,
    pub reduce: u8,
    pub in_flight_pkts: u32,
}

/// `struct lf_scalable` (kernel/algo/scalable.h)
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct lf_scalable {
    pub cwnd_fp: u64,
    pub ssthresh_fp: u64,
    pub cwnd_frac: u32,
    pub pad: u32,
}

/// `struct lf_highspeed` (kernel/algo/highspeed.h)
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct lf_highspeed {
    pub cwnd_fp: u64,
    pub ssthresh_fp: u64,
    pub cwnd_frac: u32,
    pub pad: u32,
}

/// `struct lf_ltcp` (kernel/algo/ltcp.h)
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct lf_ltcp {
    pub cwnd_fp: u64,
    pub ssthresh_fp: u64,
    pub layers: u32,
    pub cwnd_frac: u32,
}

/// `struct lf_htcp_cfg` (kernel/algo/htcp.h): longfat-cc's `HtcpConfig`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct lf_htcp_cfg {
    pub beta_min_q32: u64,
    pub beta_max_q32: u64,
    pub scale_min_q32: u64,
    pub scale_max_q32: u64,
    pub delta_l_us: u32,
    pub adaptive_min_rtt_us: u32,
    pub rtt_ref_us: u32,
    pub fade_num: u16,
    pub fade_den: u16,
    pub rtt_max_from_samples: u8,
    pub rtt_scaling: u8,
    pub bandwidth_switch: u8,
    pub pad: [u8; 5],
}

/// `struct lf_htcp` (kernel/algo/htcp.h)
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct lf_htcp {
    pub cwnd_fp: u64,
    pub ssthresh_fp: u64,
    pub beta_q32: u64,
    pub rtt_min_ns: u64,
    pub rtt_max_ns: u64,
    pub last_cong_us: u64,
    pub tput_packets: u64,
    pub tput_since_us: u64,
    pub smoothed_pps_fp: u64,
    pub max_pps_fp: u64,
    pub old_max_pps_fp: u64,
    pub congestion_events: u32,
    pub modeswitch: u8,
    pub has_last_cong: u8,
    pub episode: u8,
    pub pad: u8,
    pub cwnd_frac: u32,
    pub pad2: u32,
    pub cfg: lf_htcp_cfg,
}

/// `struct lf_ehstcp` (kernel/algo/ehstcp.h)
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct lf_ehstcp {
    pub cwnd_fp: u64,
    pub ssthresh_fp: u64,
    pub min_backward_us: i64,
    pub ertt_us_fp: u64,
    pub rtt_min_us: u64,
    pub rtt_max_us: u64,
    pub safety_until_us: u64,
    pub cwnd_frac: u32,
    pub has_min_backward: u8,
    pub has_safety: u8,
    pub pad: [u8; 2],
}

/// `struct lf_tcpgt_cfg` (kernel/algo/tcpgt.h): longfat-cc's `TcpgtConfig`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct lf_tcpgt_cfg {
    pub max_increase_q32: u64,
    pub rtt_base_us: u32,
    pub threshold_num: i32,
    pub threshold_den: u32,
    pub rtt_min_epochs: u8,
    pub slow_start: u8,
    pub pad: [u8; 2],
}

/// `LF_TCPGT_MAX_EPOCHS`
pub const TCPGT_MAX_EPOCHS: usize = 16;
/// `enum lf_tcpgt_phase`
pub const TCPGT_HOLD: u8 = 0;
pub const TCPGT_INCREASE: u8 = 1;
pub const TCPGT_DECREASE: u8 = 2;

/// `struct lf_tcpgt` (kernel/algo/tcpgt.h)
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct lf_tcpgt {
    pub cwnd_fp: u64,
    pub ssthresh_fp: u64,
    pub boundary_sender_us: u64,
    pub boundary_receiver_us: u64,
    pub delivered_pkts: u64,
    pub epoch_min_rtt_us: u64,
    pub s_q32: u64,
    pub rate_q32: i64,
    pub epoch_mins_us: [u32; TCPGT_MAX_EPOCHS],
    pub epoch: u32,
    pub mins_len: u8,
    pub mins_head: u8,
    pub in_slow_start: u8,
    pub has_boundary: u8,
    pub could_grow: u8,
    pub phase: u8,
    pub pad: [u8; 2],
    pub cwnd_frac: u32,
    pub cfg: lf_tcpgt_cfg,
}

macro_rules! algo_ffi {
    ($($t:ident: $init:ident, $ack:ident, $loss:ident, $exit:ident, $texit:ident, $rto:ident, $size:ident;)*) => {
        extern "C" {
            $(
                pub fn $init(s: *mut $t, cwnd_fp: u64, ssthresh_fp: u64);
                pub fn $ack(s: *mut $t, a: *const lf_ack);
                pub fn $loss(s: *mut $t, l: *const lf_loss);
                pub fn $exit(s: *mut $t, now_us: u64);
                pub fn $texit(s: *mut $t, now_us: u64);
                pub fn $rto(s: *mut $t, r: *const lf_rto);
                pub fn $size() -> usize;
            )*
        }
    };
}

algo_ffi! {
    lf_scalable: lf_us_scalable_init, lf_us_scalable_on_ack, lf_us_scalable_on_loss,
        lf_us_scalable_on_recovery_exit, lf_us_scalable_on_timeout_recovery_exit, lf_us_scalable_on_rto,
        lf_us_scalable_sizeof;
    lf_highspeed: lf_us_highspeed_init, lf_us_highspeed_on_ack, lf_us_highspeed_on_loss,
        lf_us_highspeed_on_recovery_exit, lf_us_highspeed_on_timeout_recovery_exit, lf_us_highspeed_on_rto,
        lf_us_highspeed_sizeof;
    lf_ltcp: lf_us_ltcp_init, lf_us_ltcp_on_ack, lf_us_ltcp_on_loss,
        lf_us_ltcp_on_recovery_exit, lf_us_ltcp_on_timeout_recovery_exit, lf_us_ltcp_on_rto,
        lf_us_ltcp_sizeof;
    lf_htcp: lf_us_htcp_init, lf_us_htcp_on_ack, lf_us_htcp_on_loss,
        lf_us_htcp_on_recovery_exit, lf_us_htcp_on_timeout_recovery_exit, lf_us_htcp_on_rto,
        lf_us_htcp_sizeof;
    lf_ehstcp: lf_us_ehstcp_init, lf_us_ehstcp_on_ack, lf_us_ehstcp_on_loss,
        lf_us_ehstcp_on_recovery_exit, lf_us_ehstcp_on_timeout_recovery_exit, lf_us_ehstcp_on_rto,
        lf_us_ehstcp_sizeof;
    lf_tcpgt: lf_us_tcpgt_init, lf_us_tcpgt_on_ack, lf_us_tcpgt_on_loss,
        lf_us_tcpgt_on_recovery_exit, lf_us_tcpgt_on_timeout_recovery_exit, lf_us_tcpgt_on_rto,
        lf_us_tcpgt_sizeof;
}

extern "C" {
    pub fn lf_us_htcp_on_send(
        s: *mut lf_htcp,
        now_us: u64,
        seq: u64,
        bytes: u32,
        retransmit: c_int,
    ) -> u32;
    pub fn lf_us_htcp_default_cfg(c: *mut lf_htcp_cfg);
    pub fn lf_us_htcp_init_cfg(
        s: *mut lf_htcp,
        cwnd_fp: u64,
        ssthresh_fp: u64,
        c: *const lf_htcp_cfg,
    );
    pub fn lf_us_tcpgt_on_send(
        s: *mut lf_tcpgt,
        now_us: u64,
        seq: u64,
        bytes: u32,
        retransmit: c_int,
    ) -> u32;
    pub fn lf_us_tcpgt_default_cfg(c: *mut lf_tcpgt_cfg);
    pub fn lf_us_tcpgt_init_cfg(
        s: *mut lf_tcpgt,
        cwnd_fp: u64,
        ssthresh_fp: u64,
        c: *const lf_tcpgt_cfg,
    );

    pub fn lf_us_mul_div(a: u64, b: u64, c: u64) -> u64;
    pub fn lf_us_mul_div_floor(a: u64, b: u64, c: u64) -> u64;
    pub fn lf_us_mul_shr(a: u64, b: u64, s: u32) -> u64;
    pub fn lf_us_isqrt64(x: u64) -> u64;
    pub fn lf_us_log2_q32(x: u64) -> u64;
    pub fn lf_us_exp2_q32(y: u64) -> u64;
    pub fn lf_us_pow_fp_q32(x_fp: u64, num: u64, den: u64) -> u64;
    pub fn lf_us_hs_a_q32(w_fp: u64) -> u64;
    pub fn lf_us_hs_b_q32(w_fp: u64) -> u64;
    pub fn lf_us_ltcp_layers_for(cwnd_fp: u64) -> u32;
    pub fn lf_us_hs_log2_low_q32() -> u64;
    pub fn lf_us_hs_log2_high_q32() -> u64;

    fn lf_us_layout(id: u32, out: *mut usize, cap: usize) -> usize;
}

/// The C layout of a mirrored struct: its size, then each field's offset in
/// declaration order. Ids: 0 `lf_ack`, 1 `lf_loss`, 2 `lf_rto`, 3
/// `lf_scalable`, 4 `lf_highspeed`, 5 `lf_ltcp`, 6 `lf_htcp_cfg`, 7
/// `lf_htcp`, 8 `lf_ehstcp`, 9 `lf_tcpgt_cfg`, 10 `lf_tcpgt`.
pub fn c_layout(id: u32) -> Vec<usize> {
    let mut v = vec![0usize; 64];
    // SAFETY: the C function writes at most `cap` values into `v`.
    let n = unsafe { lf_us_layout(id, v.as_mut_ptr(), v.len()) };
    v.truncate(n);
    v
}

/// A safe handle on one C controller: its state and the wrappers' calls.
pub trait CAlgo: Copy + std::fmt::Debug + PartialEq {
    fn init(cwnd_fp: u64, ssthresh_fp: u64) -> Self;
    fn on_ack(&mut self, a: &lf_ack);
    fn on_loss(&mut self, l: &lf_loss);
    fn on_recovery_exit(&mut self, now_us: u64);
    fn on_timeout_recovery_exit(&mut self, now_us: u64);
    fn on_rto(&mut self, r: &lf_rto);
    fn on_send(&mut self, _now_us: u64, _seq: u64, _bytes: u32, _retransmit: bool) -> u32 {
        0
    }
    fn cwnd_fp(&self) -> u64;
    /// The window with its remainder (`cwnd_frac`), in 1/2^32 packets.
    fn cwnd_q32(&self) -> u64;
    fn ssthresh_fp(&self) -> u64;
    /// Overwrites the windows, cwnd in 1/2^32 packets (the differential
    /// tests resynchronize the C state from the Rust controller's after
    /// every event).
    fn set_windows(&mut self, cwnd_q32: u64, ssthresh_fp: u64);
}

macro_rules! calgo {
    ($t:ident, $init:ident, $ack:ident, $loss:ident, $exit:ident, $texit:ident, $rto:ident $(, $send:ident)?) => {
        impl CAlgo for $t {
            fn init(cwnd_fp: u64, ssthresh_fp: u64) -> Self {
                let mut s = Self::default();
                // SAFETY: `s` is a valid, exclusively borrowed instance of the mirrored struct.
                unsafe { $init(&mut s, cwnd_fp, ssthresh_fp) };
                s
            }
            fn on_ack(&mut self, a: &lf_ack) {
                // SAFETY: valid pointers to mirrored structs for the duration of the call.
                unsafe { $ack(self, a) }
            }
            fn on_loss(&mut self, l: &lf_loss) {
                // SAFETY: as above.
                unsafe { $loss(self, l) }
            }
            fn on_recovery_exit(&mut self, now_us: u64) {
                // SAFETY: as above.
                unsafe { $exit(self, now_us) }
            }
            fn on_timeout_recovery_exit(&mut self, now_us: u64) {
                // SAFETY: as above.
                unsafe { $texit(self, now_us) }
            }
            fn on_rto(&mut self, r: &lf_rto) {
                // SAFETY: as above.
                unsafe { $rto(self, r) }
            }
            $(
            fn on_send(&mut self, now_us: u64, seq: u64, bytes: u32, retransmit: bool) -> u32 {
                // SAFETY: as above.
                unsafe { $send(self, now_us, seq, bytes, c_int::from(retransmit)) }
            }
            )?
            fn cwnd_fp(&self) -> u64 {
                self.cwnd_fp
            }
            fn cwnd_q32(&self) -> u64 {
                (self.cwnd_fp << 16) | u64::from(self.cwnd_frac)
            }
            fn ssthresh_fp(&self) -> u64 {
                self.ssthresh_fp
            }
            fn set_windows(&mut self, cwnd_q32: u64, ssthresh_fp: u64) {
                self.cwnd_fp = cwnd_q32 >> 16;
                self.cwnd_frac = (cwnd_q32 & 0xffff) as u32;
                self.ssthresh_fp = ssthresh_fp;
            }
        }
    };
}

calgo!(
    lf_scalable,
    lf_us_scalable_init,
    lf_us_scalable_on_ack,
    lf_us_scalable_on_loss,
    lf_us_scalable_on_recovery_exit,
    lf_us_scalable_on_timeout_recovery_exit,
    lf_us_scalable_on_rto
);
calgo!(
    lf_highspeed,
    lf_us_highspeed_init,
    lf_us_highspeed_on_ack,
    lf_us_highspeed_on_loss,
    lf_us_highspeed_on_recovery_exit,
    lf_us_highspeed_on_timeout_recovery_exit,
    lf_us_highspeed_on_rto
);
calgo!(
    lf_ltcp,
    lf_us_ltcp_init,
    lf_us_ltcp_on_ack,
    lf_us_ltcp_on_loss,
    lf_us_ltcp_on_recovery_exit,
    lf_us_ltcp_on_timeout_recovery_exit,
    lf_us_ltcp_on_rto
);
calgo!(
    lf_htcp,
    lf_us_htcp_init,
    lf_us_htcp_on_ack,
    lf_us_htcp_on_loss,
    lf_us_htcp_on_recovery_exit,
    lf_us_htcp_on_timeout_recovery_exit,
    lf_us_htcp_on_rto,
    lf_us_htcp_on_send
);
calgo!(
    lf_ehstcp,
    lf_us_ehstcp_init,
    lf_us_ehstcp_on_ack,
    lf_us_ehstcp_on_loss,
    lf_us_ehstcp_on_recovery_exit,
    lf_us_ehstcp_on_timeout_recovery_exit,
    lf_us_ehstcp_on_rto
);
calgo!(
    lf_tcpgt,
    lf_us_tcpgt_init,
    lf_us_tcpgt_on_ack,
    lf_us_tcpgt_on_loss,
    lf_us_tcpgt_on_recovery_exit,
    lf_us_tcpgt_on_timeout_recovery_exit,
    lf_us_tcpgt_on_rto,
    lf_us_tcpgt_on_send
);

impl lf_htcp {
    /// A controller with a given configuration.
    pub fn with_cfg(cwnd_fp: u64, ssthresh_fp: u64, cfg: &lf_htcp_cfg) -> Self {
        let mut s = Self::default();
        // SAFETY: valid pointers to mirrored structs.
        unsafe { lf_us_htcp_init_cfg(&mut s, cwnd_fp, ssthresh_fp, cfg) };
        s
    }
}

impl lf_htcp_cfg {
    /// `lf_htcp_default_cfg`: longfat-cc's `HtcpConfig::default()`.
    pub fn c_default() -> Self {
        let mut c = Self::default();
        // SAFETY: valid pointer to a mirrored struct.
        unsafe { lf_us_htcp_default_cfg(&mut c) };
        c
    }
}

impl lf_tcpgt {
    /// A controller with a given configuration.
    pub fn with_cfg(cwnd_fp: u64, ssthresh_fp: u64, cfg: &lf_tcpgt_cfg) -> Self {
        let mut s = Self::default();
        // SAFETY: valid pointers to mirrored structs.
        unsafe { lf_us_tcpgt_init_cfg(&mut s, cwnd_fp, ssthresh_fp, cfg) };
        s
    }
}

impl lf_tcpgt_cfg {
    /// `lf_tcpgt_default_cfg`: longfat-cc's `TcpgtConfig::default()`.
    pub fn c_default() -> Self {
        let mut c = Self::default();
        // SAFETY: valid pointer to a mirrored struct.
        unsafe { lf_us_tcpgt_default_cfg(&mut c) };
        c
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    macro_rules! layout {
        ($t:ty; $($f:ident),*) => {
            vec![size_of::<$t>(), $(offset_of!($t, $f)),*]
        };
    }

    #[test]
    fn layouts_match_c() {
        let rust = [
            layout!(lf_ack; now_us, delivered_pkts, growth_pkts, cum_acked_pkts, in_flight_pkts,
                in_recovery, rtt_updated, has_ts, rtt_latest_us, rtt_min_us, rtt_smoothed_us,
                ts_echoed_sender_us, ts_receiver_us, ts_echoed_tag),
            layout!(lf_loss; now_us, in_flight_pkts, lost_pkts, rtt_latest_us, rtt_min_us,
                rtt_smoothed_us),
            layout!(lf_rto; now_us, backoff, reduce, in_flight_pkts),
            layout!(lf_scalable; cwnd_fp, ssthresh_fp, cwnd_frac, pad),
            layout!(lf_highspeed; cwnd_fp, ssthresh_fp, cwnd_frac, pad),
            layout!(lf_ltcp; cwnd_fp, ssthresh_fp, layers, cwnd_frac),
            layout!(lf_htcp_cfg; beta_min_q32, beta_max_q32, scale_min_q32, scale_max_q32,
                delta_l_us, adaptive_min_rtt_us, rtt_ref_us, fade_num, fade_den,
                rtt_max_from_samples, rtt_scaling, bandwidth_switch, pad),
            layout!(lf_htcp; cwnd_fp, ssthresh_fp, beta_q32, rtt_min_ns, rtt_max_ns, last_cong_us,
                tput_packets, tput_since_us, smoothed_pps_fp, max_pps_fp, old_max_pps_fp,
                congestion_events, modeswitch, has_last_cong, episode, pad, cwnd_frac, pad2, cfg),
            layout!(lf_ehstcp; cwnd_fp, ssthresh_fp, min_backward_us, ertt_us_fp, rtt_min_us,
                rtt_max_us, safety_until_us, cwnd_frac, has_min_backward, has_safety, pad),
            layout!(lf_tcpgt_cfg; max_increase_q32, rtt_base_us, threshold_num, threshold_den,
                rtt_min_epochs, slow_start, pad),
            layout!(lf_tcpgt; cwnd_fp, ssthresh_fp, boundary_sender_us, boundary_receiver_us,
                delivered_pkts, epoch_min_rtt_us, s_q32, rate_q32, epoch_mins_us, epoch,
                mins_len, mins_head, in_slow_start, has_boundary, could_grow, phase, pad, cwnd_frac, cfg),
        ];
        for (id, r) in rust.iter().enumerate() {
            assert_eq!(
                &c_layout(id as u32),
                r,
                "struct id {id}: C sizeof/offsets vs Rust"
            );
        }
        // The exported sizeof of each algorithm's state agrees too.
        // SAFETY: the functions take no arguments.
        let sizes = unsafe {
            [
                (lf_us_scalable_sizeof(), size_of::<lf_scalable>()),
                (lf_us_highspeed_sizeof(), size_of::<lf_highspeed>()),
                (lf_us_ltcp_sizeof(), size_of::<lf_ltcp>()),
                (lf_us_htcp_sizeof(), size_of::<lf_htcp>()),
                (lf_us_ehstcp_sizeof(), size_of::<lf_ehstcp>()),
                (lf_us_tcpgt_sizeof(), size_of::<lf_tcpgt>()),
            ]
        };
        for (c, r) in sizes {
            assert_eq!(c, r);
        }
        assert_eq!(c_layout(99), Vec::<usize>::new(), "unknown id");
    }

    #[test]
    fn fixed_point_conversions_round_trip() {
        assert_eq!(to_fp(1.0), FP_ONE);
        assert_eq!(to_fp(f64::INFINITY), INFINITE_FP);
        assert_eq!(from_fp(INFINITE_FP), f64::INFINITY);
        assert_eq!(from_fp(to_fp(12.5)), 12.5);
    }
}
