//! The `rfc` profile's loss recovery: RFC 6675 SACK recovery driven by
//! pipe, entered on DupThresh SACKed packets above a hole (§5 steps 4.1-4.2,
//! the first retransmission regardless of pipe), and RFC 6298's timer with
//! RFC 5681 §3.1's timeout (every outstanding packet lost, go-back-N). Every
//! other step is the shared one ([`LossRecovery`]'s defaults).

use crate::outbox::Outbox;
use crate::tcp::sender::shared::{LossRecovery, SenderCore};

/// RFC 6675 keeps no state beyond the scoreboard.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Rfc6675;

impl LossRecovery for Rfc6675 {
    /// RFC 6675 §4 `IsLost`: DupThresh SACKed packets above a hole.
    fn detect_losses(
        &mut self,
        s: &mut SenderCore,
        _now_ns: u64,
        _force: bool,
    ) -> (u64, Option<u64>) {
        (s.sb.update_lost(), None)
    }

    /// RFC 6675 §5 step (4.2): the first lost packet goes out regardless of pipe.
    fn start_fast_recovery(
        &mut self,
        s: &mut SenderCore,
        now_ns: u64,
        _prior_cwnd_pkts: u64,
        out: &mut Outbox,
    ) {
        s.send_forced_retransmit(self, now_ns, out);
    }

    /// RFC 5681 §3.1 / RFC 6298 §5.5: every outstanding packet is lost;
    /// ssthresh is set as Linux's `tcp_enter_loss` does (not again during
    /// fast recovery, nor in a timeout recovery without progress).
    fn on_timeout(&mut self, s: &mut SenderCore, now_ns: u64) {
        let reduce = s.timeout_reduces();
        s.sb.mark_all_lost();
        s.notify_rto(now_ns, reduce, None, false);
    }
}
