//! The TCP sender: ACK clocking, SACK loss recovery, the retransmission
//! timer with exponential backoff, receiver window, and a
//! [`CongestionControl`] that owns cwnd and ssthresh. The transport profile
//! ([`Profile`]) chooses the recovery machinery around the controller:
//! RFC 6675 (`rfc`), ns-2.35 Sack1 (`ns2`), or Linux's PRR, RACK-TLP and
//! undo (`linux`).

use longfat_cc::{AckEvent, AckTimestamps, CongestionControl, LossEvent, RtoEvent};

use crate::event::TimerKind;
use crate::outbox::Outbox;
use crate::packet::{Dir, Packet, PacketKind};
use crate::tcp::profile::Profile;
use crate::tcp::rack::Rack;
use crate::tcp::rtt::{RtoRule, RttEstimator};
use crate::tcp::scoreboard::Scoreboard;
use crate::tcp::TcpConfig;

/// Loss-recovery state (Linux's Open / Recovery / Loss).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recovery {
    Open,
    /// Fast recovery until the cumulative ACK reaches `point` (RFC 6675 RecoveryPoint).
    Fast { point: u64 },
    /// After an RTO, until everything outstanding at the timeout is acknowledged.
    Timeout { point: u64 },
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SenderCounters {
    pub sent_pkts: u64,
    pub sent_bytes: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    pub fast_recoveries: u64,
    pub acks_received: u64,
    /// Tail loss probes sent (`linux`).
    pub loss_probes: u64,
    /// Reductions undone as spurious (`linux`, timestamps: Eifel).
    pub undos: u64,
}

/// What the one transmission timer is waiting for (Linux keeps one
/// `icsk_pending` slot for all three).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum XmitTimer {
    Rto,
    /// Tail loss probe (RFC 8985 §7).
    Probe,
    /// RACK's reordering window (RFC 8985 §6.3).
    Reorder,
}

/// Proportional rate reduction (RFC 6937; Linux `tcp_cwnd_reduction`).
#[derive(Clone, Copy, Debug, Default)]
struct Prr {
    ssthresh_pkts: u64,
    prior_cwnd_pkts: u64,
    delivered: u64,
    out: u64,
    /// The window PRR allows during recovery.
    cwnd_pkts: u64,
}

/// ns-2.35 Sack1 bookkeeping (tcp-sack1.cc).
#[derive(Clone, Debug, Default)]
struct Ns2State {
    /// `pipe_` during fast recovery.
    pipe: i64,
    /// SACK-changing duplicate ACKs since the last new ACK (`dupacks_`).
    dupacks: u64,
    /// `first_decrease_`: the connection has not reduced yet.
    reduced: bool,
    /// The timed segment (tcp.cc `rtt_active_`, `rtt_seq_`, `rtt_ts_`, the
    /// last on the sender's clock): `output()` times a new packet (never a
    /// retransmission: Karn's rule) when none is timed; `newack()` ends
    /// the timing when the ACK covers it, which also ends a timeout's
    /// backoff (`t_backoff_ = 1`) and, without timestamps, is the RTT
    /// sample; `reset_rtx_timer()` (a timeout, a fast retransmission)
    /// cancels it.
    rtt_active: bool,
    rtt_seq: u64,
    rtt_ts_ns: u64,
    /// `timeout_`: set by a timeout, cleared by the next new ACK
    /// (tcp-sack1.cc `timeout()`, `recv`); while set, duplicate ACKs are
    /// not read at all.
    timeout: bool,
    /// `recover_` of the last timeout as our packet number (`maxseq_` + 1,
    /// the timeout's recovery point); None once a fast recovery has ended
    /// (`recover_ = 0`). `dupack_action()` starts fast recovery only when
    /// `highest_ack_ > recover_`, i.e. the cumulative ACK is past it
    /// (`bugFix_`, on by default).
    recover: Option<u64>,
    /// ns-2's scoreboard during a timeout recovery: the SACK blocks of the
    /// duplicate ACKs since the last new ACK, merged, sorted. They count
    /// duplicate ACKs (`CheckUpdate()`) and nothing else: `send_much` runs
    /// only with `dupacks_ == 0`, right after a new ACK cleared them, so
    /// go-back-N still resends every packet above the cumulative ACK.
    timeout_sacks: Vec<(u64, u64)>,
}

impl Ns2State {
    /// `UpdateScoreBoard` + `CheckUpdate()` during a timeout recovery:
    /// records the blocks above `cum` and says whether any packet is new.
    fn record_timeout_sacks(&mut self, cum: u64, blocks: impl Iterator<Item = (u64, u64)>) -> bool {
        let mut changed = false;
        for (s, e) in blocks {
            let s = s.max(cum);
            if s >= e {
                continue;
            }
            let v = &mut self.timeout_sacks;
            // Ranges touching [s, e) merge with it.
            let first = v.partition_point(|&(_, b)| b < s);
            let last = v.partition_point(|&(a, _)| a <= e);
            let covered = first < last && v[first].0 <= s && e <= v[first].1;
            if !covered {
                changed = true;
                let lo = if first < last { v[first].0.min(s) } else { s };
                let hi = if first < last { v[last - 1].1.max(e) } else { e };
                v.splice(first..last, [(lo, hi)]);
            }
        }
        changed
    }
}

pub struct TcpSender {
    flow: u32,
    cfg: TcpConfig,
    cc: Box<dyn CongestionControl>,
    sb: Scoreboard,
    rtt: RttEstimator,
    recovery: Recovery,
    rto_backoff: u32,
    /// When the transmission timer fires, and for what.
    timer_ns: Option<u64>,
    timer: XmitTimer,
    /// The application has data to send (between start and stop).
    app_active: bool,
    /// Fixed-size transfer: packets to send in all (None: bulk).
    total_pkts: Option<u64>,
    /// New packets are sent only below this number: `total_pkts`, or the
    /// data a PLT connection's packet manager has for this module
    /// (u64::MAX: no limit).
    send_limit: u64,
    pub completed_at_ns: Option<u64>,
    pub started_at_ns: Option<u64>,
    /// The retransmission that starts fast recovery (sent regardless of
    /// pipe, RFC 6675 step 4.2) is waiting for room in the host queue.
    forced_retransmit_pending: bool,
    /// RFC 7661 / Linux `tcp_cwnd_validate`: the window limited the sender
    /// during the current round (sticky until `cwnd_usage_seq` is acked),
    /// and the most packets outstanding then.
    cwnd_limited: bool,
    max_packets_out: u64,
    cwnd_usage_seq: u64,
    prr: Prr,
    rack: Rack,
    /// Highest packet sent when the outstanding tail loss probe left (`tlp_high_seq`).
    tlp_high_seq: Option<u64>,
    tlp_retransmitted: bool,
    /// The controller before the reduction in progress, for undo.
    undo: Option<Box<dyn CongestionControl>>,
    /// The sender's timestamp on the first retransmission of the episode
    /// (Linux `retrans_stamp`, for the Eifel check).
    retrans_stamp: Option<u64>,
    /// RFC 7323 TS.Recent: the TSval of the latest ACK, echoed in the TSecr
    /// of data (a Linux receiver measures its RTT from it).
    ts_recent: u64,
    /// The receiver's advertised window (`set_peer_window`), and the most
    /// the send buffer lets be in flight (`TcpConfig::default_host`).
    peer_window_pkts: u64,
    sndbuf_pkts: u64,
    ns2: Ns2State,
    /// F-RTO (RFC 5682, Linux `tcp_process_loss`) is watching this timeout
    /// recovery; `frto_high` is its `high_seq`; `frto_new_only`: this ACK
    /// sends new data instead of retransmissions (step 2b).
    frto: bool,
    frto_high: u64,
    frto_new_only: bool,
    pub counters: SenderCounters,
}

impl std::fmt::Debug for TcpSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TcpSender").field("flow", &self.flow).field("cc", &self.cc.name()).finish()
    }
}

/// ns-2's timer granularity (`tcpTick_`).
const NS2_TICK_NS: u64 = 10_000_000;
/// Linux `TCP_TIMEOUT_MIN`: 2 jiffies (HZ = 1000).
const LINUX_TIMEOUT_MIN_NS: u64 = 2_000_000;

impl TcpSender {
    pub fn new(flow: u32, cfg: TcpConfig, cc: Box<dyn CongestionControl>, total_pkts: Option<u64>) -> Self {
        let sndbuf_pkts = crate::tcp::receiver::sndbuf_limit_pkts(&cfg);
        let rule = match cfg.profile {
            Profile::Rfc => RtoRule::Rfc6298,
            Profile::Linux => RtoRule::Linux,
            Profile::Ns2 => RtoRule::Ns2 { tick_ns: NS2_TICK_NS, timestamps: cfg.timestamps },
        };
        let rtt = RttEstimator::with_rule(rule, cfg.initial_rto_ns, cfg.min_rto_ns, cfg.max_rto_ns);
        let sb = if cfg.profile == Profile::Linux { Scoreboard::with_send_times() } else { Scoreboard::new() };
        Self {
            flow,
            cfg,
            cc,
            sb,
            rtt,
            recovery: Recovery::Open,
            rto_backoff: 0,
            timer_ns: None,
            timer: XmitTimer::Rto,
            app_active: false,
            total_pkts,
            send_limit: total_pkts.unwrap_or(u64::MAX),
            completed_at_ns: None,
            started_at_ns: None,
            forced_retransmit_pending: false,
            cwnd_limited: false,
            max_packets_out: 0,
            cwnd_usage_seq: 0,
            prr: Prr::default(),
            rack: Rack::default(),
            tlp_high_seq: None,
            tlp_retransmitted: false,
            undo: None,
            retrans_stamp: None,
            ts_recent: 0,
            peer_window_pkts: u64::MAX,
            sndbuf_pkts,
            ns2: Ns2State::default(),
            frto: false,
            frto_high: 0,
            frto_new_only: false,
            counters: SenderCounters::default(),
        }
    }

    pub fn cc(&self) -> &dyn CongestionControl {
        self.cc.as_ref()
    }
    pub fn rtt(&self) -> &RttEstimator {
        &self.rtt
    }
    pub fn scoreboard(&self) -> &Scoreboard {
        &self.sb
    }
    pub fn recovery(&self) -> Recovery {
        self.recovery
    }
    pub fn profile(&self) -> Profile {
        self.cfg.profile
    }
    /// Packets of a fixed-size transfer (None: bulk).
    pub fn total_pkts(&self) -> Option<u64> {
        self.total_pkts
    }
    pub fn config(&self) -> &TcpConfig {
        &self.cfg
    }
    pub fn packet_size_bytes(&self) -> u32 {
        self.cfg.packet_size_bytes
    }
    fn clock(&self, now_ns: u64) -> u64 {
        now_ns + self.cfg.sender_clock_offset_ns
    }

    pub fn start(&mut self, now_ns: u64, out: &mut Outbox) {
        self.app_active = true;
        self.started_at_ns = Some(now_ns);
        self.send_allowed(now_ns, out);
    }

    /// The application stops producing data; what is outstanding still completes.
    pub fn stop(&mut self) {
        self.app_active = false;
    }

    fn cwnd_pkts(&self) -> u64 {
        let c = self.cc.cwnd();
        if c.is_finite() && c >= 1.0 {
            // Truncation is floor for c >= 1, without the libm call
            // (baseline x86-64 has no rounding instruction).
            c as u64
        } else {
            1
        }
    }

    fn has_new_data(&self) -> bool {
        self.app_active && self.sb.snd_nxt() < self.send_limit
    }

    /// New packets may be sent below packet number `limit` (see
    /// `send_limit`; never past `total_pkts`).
    pub fn set_send_limit(&mut self, limit: u64) {
        self.send_limit = limit.min(self.total_pkts.unwrap_or(u64::MAX));
    }

    fn can_send_new(&self) -> bool {
        self.has_new_data()
            && self.sb.outstanding() < self.cfg.rwnd_pkts.min(self.peer_window_pkts).min(self.sndbuf_pkts)
    }

    /// The window the receiver advertised on the ACK being processed
    /// (`receiver::TcpReceiver::window_pkts`).
    pub fn set_peer_window(&mut self, pkts: u64) {
        self.peer_window_pkts = pkts;
    }

    fn is_linux(&self) -> bool {
        self.cfg.profile == Profile::Linux
    }
    fn is_ns2(&self) -> bool {
        self.cfg.profile == Profile::Ns2
    }

    fn transmit(&mut self, now_ns: u64, seq: u64, retransmit: bool, out: &mut Outbox) {
        let size = self.cfg.packet_size_bytes;
        let mut p = Packet::new(self.flow, PacketKind::Data, Dir::Forward, size);
        p.seq = seq;
        p.class = self.cfg.class;
        p.ts_val = self.clock(now_ns);
        p.ts_ecr = self.ts_recent;
        p.tag = self.cc.on_send(now_ns, seq, size, retransmit);
        self.counters.sent_pkts += 1;
        self.counters.sent_bytes += u64::from(size);
        if retransmit {
            self.counters.retransmits += 1;
            self.retrans_stamp.get_or_insert(p.ts_val);
        }
        if matches!(self.recovery, Recovery::Fast { .. }) {
            self.prr.out += 1;
            self.ns2.pipe += 1;
        }
        if self.is_linux() {
            self.rack.on_transmit(seq, now_ns);
        }
        if self.is_ns2() && !retransmit && !self.ns2.rtt_active {
            self.ns2.rtt_active = true;
            self.ns2.rtt_seq = seq;
            self.ns2.rtt_ts_ns = p.ts_val;
        }
        out.packets.push(p);
        // RFC 6298 §5.1 arms an idle timer; Linux also re-arms it when it
        // retransmits the head of the queue (`tcp_xmit_retransmit_queue`), so a
        // fast retransmission gets a whole RTO to come back.
        if self.timer_ns.is_none() || (retransmit && seq == self.sb.snd_una()) {
            self.arm(XmitTimer::Rto, now_ns + self.rtt.backed_off_rto_ns(self.rto_backoff), out);
        }
    }

    fn arm(&mut self, kind: XmitTimer, at_ns: u64, out: &mut Outbox) {
        self.timer = kind;
        self.timer_ns = Some(at_ns);
        out.timers.push((TimerKind::Rto, at_ns));
    }

    fn arm_rto(&mut self, now_ns: u64, out: &mut Outbox) {
        let d = now_ns + self.rtt.backed_off_rto_ns(self.rto_backoff);
        self.arm(XmitTimer::Rto, d, out);
    }

    /// Linux `tcp_schedule_loss_probe`: in the Open state with packets out,
    /// the timer waits for a probe timeout (PTO = 2 SRTT, plus the minimum
    /// RTO when a single packet is out, else 2 ms), never past the RTO. Not
    /// in Disorder: Linux probes only in Open and CWR (`icsk_ca_state !=
    /// TCP_CA_Open && != TCP_CA_CWR` returns false); our CWR lasts no time.
    fn schedule_probe(&mut self, now_ns: u64, out: &mut Outbox, rto_from_now: bool) {
        if !self.is_linux()
            || self.recovery != Recovery::Open
            || self.sb.disordered()
            || self.sb.outstanding() == 0
            || self.tlp_high_seq.is_some()
        {
            return;
        }
        let srtt = self.rtt.stats().smoothed_ns;
        let pto = if self.rtt.has_sample() {
            let extra = if self.sb.outstanding() == 1 { self.cfg.min_rto_ns } else { LINUX_TIMEOUT_MIN_NS };
            2 * srtt + extra
        } else {
            1_000_000_000
        };
        let rto_delta = match (rto_from_now, self.timer_ns) {
            (false, Some(t)) if self.timer == XmitTimer::Rto => t.saturating_sub(now_ns),
            _ => self.rtt.backed_off_rto_ns(self.rto_backoff),
        };
        self.arm(XmitTimer::Probe, now_ns + pto.min(rto_delta), out);
    }

    /// The host queue has room again.
    pub fn on_host_ready(&mut self, now_ns: u64, out: &mut Outbox) {
        self.send_allowed(now_ns, out);
    }

    /// Retransmits the first lost packet regardless of pipe, as soon as the
    /// host queue takes it.
    fn send_forced_retransmit(&mut self, now_ns: u64, out: &mut Outbox) {
        if !out.has_host_room() {
            self.forced_retransmit_pending = true;
            out.host_blocked = true;
            return;
        }
        self.forced_retransmit_pending = false;
        if let Some(seq) = self.sb.next_retransmit() {
            self.sb.mark_retransmitted_at(seq, now_ns);
            self.transmit(now_ns, seq, true, out);
            // ns-2 does not count the fast retransmission in `pipe_`.
            if self.is_ns2() && matches!(self.recovery, Recovery::Fast { .. }) {
                self.ns2.pipe -= 1;
            }
        }
    }

    /// How many packets the sender may have in flight now (the window).
    fn allowance(&self) -> u64 {
        match (self.cfg.profile, self.recovery) {
            (Profile::Linux, Recovery::Fast { .. }) => self.prr.cwnd_pkts,
            // ns-2 `send_much` outside recovery: `t_seqno_ <= highest_ack_ + window()`,
            // plus one packet for each of the first two duplicate ACKs
            // (`send_one`, limited transmit).
            // The same after a timeout (tcp-sack1.cc `recv` calls `send_one`
            // whenever `timeout_` is clear and not in fast recovery).
            (Profile::Ns2, Recovery::Open | Recovery::Timeout { .. }) => self.cwnd_pkts() + self.ns2.dupacks.min(2),
            _ => self.cwnd_pkts(),
        }
    }

    /// What counts against the window: RFC 6675 pipe, ns-2's `pipe_` in its
    /// fast recovery, packets outstanding in ns-2's Open state.
    fn in_use(&self) -> u64 {
        match (self.cfg.profile, self.recovery) {
            (Profile::Ns2, Recovery::Fast { .. }) => self.ns2.pipe.max(0) as u64,
            (Profile::Ns2, Recovery::Open) => self.sb.outstanding(),
            _ => self.sb.pipe(),
        }
    }

    /// Sends while the profile's window allows: lost packets first, then new
    /// data; never more than the host queue takes (`Outbox::host_room_pkts`)
    /// or `max_burst` at once.
    fn send_allowed(&mut self, now_ns: u64, out: &mut Outbox) {
        if self.forced_retransmit_pending {
            self.send_forced_retransmit(now_ns, out);
        }
        let burst = self.cfg.max_burst_pkts.map_or(u64::MAX, u64::from);
        let allowed = self.allowance();
        let mut sent = 0u64;
        let mut window_limited = false;
        loop {
            if self.in_use() >= allowed {
                window_limited = self.sb.next_retransmit().is_some() || self.can_send_new();
                break;
            }
            if sent >= burst {
                break;
            }
            if !out.has_host_room() {
                if self.sb.next_retransmit().is_some() || self.can_send_new() {
                    out.host_blocked = true;
                }
                break;
            }
            let rtx = if self.frto_new_only { None } else { self.sb.next_retransmit() };
            if let Some(seq) = rtx {
                self.sb.mark_retransmitted_at(seq, now_ns);
                self.transmit(now_ns, seq, true, out);
            } else if self.can_send_new() {
                let seq = self.sb.send_new_at(now_ns);
                self.transmit(now_ns, seq, false, out);
            } else {
                break;
            }
            sent += 1;
        }
        if self.frto_new_only {
            // `tcp_xmit_recovery`: if no new data went out, F-RTO ends and
            // the lost packets are retransmitted.
            self.frto_new_only = false;
            if sent == 0 {
                self.frto = false;
                self.send_allowed(now_ns, out);
                return;
            }
        }
        if sent > 0 || window_limited {
            self.validate_cwnd(window_limited);
        }
        if sent > 0 && self.is_linux() && self.timer == XmitTimer::Rto {
            self.schedule_probe(now_ns, out, false);
        }
    }

    /// Linux `tcp_cwnd_validate`: the flag holds for a round trip, so one
    /// application-limited moment does not stop growth.
    fn validate_cwnd(&mut self, limited: bool) {
        let out = self.sb.outstanding();
        if self.sb.snd_una() >= self.cwnd_usage_seq || limited || (!self.cwnd_limited && out > self.max_packets_out) {
            self.cwnd_limited = limited;
            self.max_packets_out = out;
            self.cwnd_usage_seq = self.sb.snd_nxt();
        }
    }

    /// Linux `tcp_is_cwnd_limited`: cwnd-limited this round, or in slow start
    /// below twice the most packets that were out.
    fn is_cwnd_limited(&self) -> bool {
        let cwnd = self.cc.cwnd();
        self.cwnd_limited || (cwnd < self.cc.ssthresh() && cwnd < 2.0 * self.max_packets_out as f64)
    }

    fn loss_event(&self, now_ns: u64, in_flight: u64) -> LossEvent {
        let ns2 = self.is_ns2();
        LossEvent {
            now_ns,
            in_flight_pkts: in_flight.min(u64::from(u32::MAX)) as u32,
            lost_pkts: self.sb.lost_count().min(u64::from(u32::MAX)) as u32,
            rtt: self.rtt.stats(),
            window_cap_pkts: ns2.then_some(self.cfg.rwnd_pkts as f64),
            // ns-2 `slowdown()`: the first reduction and one in slow start halve.
            halve: ns2 && (!self.ns2.reduced || self.cc.cwnd() < self.cc.ssthresh()),
        }
    }

    fn enter_fast_recovery(&mut self, now_ns: u64, in_flight: u64, out: &mut Outbox) {
        self.recovery = Recovery::Fast { point: self.sb.snd_nxt() };
        self.counters.fast_recoveries += 1;
        let prior_cwnd = self.cwnd_pkts();
        let loss = self.loss_event(now_ns, in_flight);
        self.cc.on_congestion_event(&loss);
        self.ns2.reduced = true;
        self.tlp_high_seq = None;
        match self.cfg.profile {
            Profile::Linux => {
                // `tcp_init_cwnd_reduction`; PRR sends the retransmission.
                let ssthresh = self.cc.ssthresh();
                self.prr = Prr {
                    ssthresh_pkts: if ssthresh.is_finite() { ssthresh.max(1.0) as u64 } else { prior_cwnd },
                    prior_cwnd_pkts: prior_cwnd.max(1),
                    ..Prr::default()
                };
                if self.timer != XmitTimer::Rto {
                    self.arm_rto(now_ns, out);
                }
            }
            Profile::Ns2 => {
                // `dupack_action`: pipe_ = maxseq_ - highest_ack_ - numdupacks.
                self.ns2.pipe = self.sb.outstanding() as i64 - 3;
                // `reset_rtx_timer(1, 0)`: `rtt_active_ = 0`.
                self.ns2.rtt_active = false;
                self.arm_rto(now_ns, out);
                self.send_forced_retransmit(now_ns, out);
            }
            Profile::Rfc => {
                // RFC 6675 §5 step (4.2): the first lost packet goes out regardless of pipe.
                self.send_forced_retransmit(now_ns, out);
            }
        }
    }

    /// PRR's window for this ACK (Linux 6.x `tcp_cwnd_reduction`).
    fn prr_update(&mut self, delivered: u64, newly_lost: u64, advanced: bool) {
        if delivered == 0 {
            return;
        }
        let in_flight = self.sb.pipe() as i64;
        let p = &mut self.prr;
        let delta = p.ssthresh_pkts as i64 - in_flight;
        p.delivered += delivered;
        let mut sndcnt = if delta < 0 {
            // Proportional part: ceil(ssthresh * prr_delivered / prior_cwnd) - prr_out.
            (p.ssthresh_pkts * p.delivered).div_ceil(p.prior_cwnd_pkts) as i64 - p.out as i64
        } else {
            let mut n = (p.delivered as i64 - p.out as i64).max(delivered as i64);
            if advanced && newly_lost == 0 {
                n += 1;
            }
            n.min(delta)
        };
        sndcnt = sndcnt.max(if p.out > 0 { 0 } else { 1 });
        p.cwnd_pkts = (in_flight + sndcnt).max(0) as u64;
    }

    /// RACK's reordering window: a quarter of the minimum RTT while nothing
    /// suggests loss yet, none in recovery or once 3 packets are SACKed
    /// (Linux `tcp_rack_reo_wnd` with no reordering ever seen).
    fn reo_wnd_ns(&self) -> u64 {
        if self.recovery != Recovery::Open || self.sb.sacked_count() >= 3 {
            0
        } else {
            let st = self.rtt.stats();
            (st.min_ns / 4).min(st.smoothed_ns)
        }
    }

    /// Marks losses by the profile's rule; returns how many were newly marked
    /// and, for RACK, when to look again.
    #[inline]
    fn detect_losses(&mut self, now_ns: u64, force: bool) -> (u64, Option<u64>) {
        match self.cfg.profile {
            Profile::Rfc => (self.sb.update_lost(), None),
            Profile::Ns2 => {
                // Every hole below the highest SACK is lost once fast recovery
                // runs or on the third duplicate ACK that changed the
                // scoreboard (tcp-sack1.cc `recv`: `++dupacks_ ==
                // numdupacks(cwnd_)`), however many packets those ACKs SACKed.
                // `dupack_action()` with `bugFix_`: not before the
                // cumulative ACK is past the last timeout's `recover_`.
                let recovered = self.ns2.recover.is_none_or(|point| self.sb.snd_una() > point);
                let go = matches!(self.recovery, Recovery::Fast { .. }) || (self.ns2.dupacks >= 3 && recovered);
                match (go, self.sb.highest_sacked()) {
                    (true, Some(h)) => (self.sb.mark_lost_below(h), None),
                    _ => (0, None),
                }
            }
            Profile::Linux => {
                let reo = self.reo_wnd_ns();
                let d = self.rack.detect(&mut self.sb, now_ns, reo, force);
                (d.newly_lost, d.wait_ns)
            }
        }
    }

    pub fn on_ack(&mut self, now_ns: u64, ack: &Packet, out: &mut Outbox) {
        self.counters.acks_received += 1;
        self.ts_recent = ack.ts_val;
        let in_flight_before = self.sb.pipe();
        let una_before = self.sb.snd_una();
        // Every ACK echoes the TSval of the packet that triggered it: an exact
        // RTT sample even for retransmissions (RFC 7323 §4, no Karn ambiguity).
        let sample = self.clock(now_ns).saturating_sub(ack.ts_ecr);
        let in_fast = matches!(self.recovery, Recovery::Fast { .. });
        // ns-2 with timestamps samples on new ACKs only (`newack`), not on
        // duplicate or partial ACKs.
        let ns2_sample = ack.seq > una_before && (!in_fast || self.recovery_exits_at(ack.seq));
        let rtt_updated = !self.is_ns2() || ns2_sample;
        if rtt_updated {
            // Linux `tcp_ack` moves snd_una (`tcp_snd_una_update`) before
            // `tcp_clean_rtx_queue` takes the sample, so `tcp_rtt_estimator`
            // ends its round trip on the ACK that passes `rtt_seq`.
            let una_after = ack.seq.clamp(una_before, self.sb.snd_nxt());
            self.rtt.on_sample_at(sample, una_after, self.sb.snd_nxt());
        }
        // tcp.cc `newack()`: `rtt_active_ && seqno >= rtt_seq_` (ns-2 ACKs
        // name the last packet received, ours the next one expected).
        let ns2_timed_acked = self.is_ns2() && ns2_sample && self.ns2.rtt_active && ack.seq > self.ns2.rtt_seq;
        if ns2_timed_acked {
            self.ns2.rtt_active = false;
            self.rtt.on_ns2_timed_sample(self.ns2.rtt_ts_ns, self.clock(now_ns));
        }

        // tcp-sack1.cc `recv`, outside fast recovery: a new ACK clears the
        // scoreboard (`scb_->ClearScoreBoard()`) and `timeout_`, and its
        // SACK blocks are not read (only a duplicate ACK calls
        // `UpdateScoreBoard`, and only while `timeout_` is clear). After a
        // timeout, ns-2's duplicate ACKs count again from the first new ACK
        // on; they never steer the go-back-N retransmissions (see
        // `Ns2State::timeout_sacks`), so our scoreboard stays without them
        // until the timeout's recovery point passes.
        let ns2_new_ack = self.is_ns2() && !in_fast && ack.seq > una_before;
        if ns2_new_ack {
            if self.sb.sacked_count() > 0 {
                self.sb.forget_sacks();
            }
            self.ns2.timeout = false;
            self.ns2.timeout_sacks.clear();
        }
        let ns2_timeout_recovery = self.is_ns2() && matches!(self.recovery, Recovery::Timeout { .. });
        let ns2_timeout_dupack = ns2_timeout_recovery
            && !ns2_new_ack
            && !self.ns2.timeout
            && ack.seq == una_before
            && self.ns2.record_timeout_sacks(ack.seq, ack.sack_blocks());
        let ignore_sacks = ns2_new_ack || ns2_timeout_recovery;
        let sacked_before = self.sb.sacked_count();
        let mut delivered = 0;
        if !ignore_sacks {
            for (s, e) in ack.sack_blocks() {
                delivered += self.sb.sack_block(s, e);
            }
        }
        let (advanced, fresh) = self.sb.cum_ack(ack.seq);
        delivered += fresh;
        if let Some((xmit, seq, rtx)) = self.sb.take_newest_delivered() {
            // Linux `tcp_clean_rtx_queue` skips `tcp_rack_advance` for a
            // retransmitted packet whose ACK echoes a timestamp older than
            // the retransmission's (`tcp_skb_spurious_retrans`): the
            // original arrived, so the retransmission's send time orders
            // nothing. Otherwise, after a spurious timeout, every packet
            // sent before the retransmission would look lost.
            let spurious = rtx && ack.ts_ecr < self.clock(xmit);
            if self.is_linux() && !spurious {
                self.rack.on_delivered(now_ns, seq, xmit, rtx, self.rtt.stats().min_ns);
            }
        }

        if advanced > 0 {
            // RFC 6298 §5.3 restart; backoff is cleared by progress. ns-2
            // (tcp.cc `newack`) clears `t_backoff_` only when the ACK covers
            // the packet it timed, never a retransmission: after a timeout,
            // the first packet sent after it; tcp-sack1.cc also on a partial
            // ACK in fast recovery.
            if !self.is_ns2() || in_fast || ns2_timed_acked {
                self.rto_backoff = 0;
            }
            self.ns2.dupacks = 0;
            if self.sb.outstanding() == 0 {
                self.timer_ns = None;
            } else {
                self.arm_rto(now_ns, out);
            }
        } else if self.sb.sacked_count() > sacked_before || ns2_timeout_dupack {
            self.ns2.dupacks += 1;
        }

        // Linux `tcp_try_undo_loss` (Eifel, RFC 3522): the ACK echoes a
        // timestamp older than the first retransmission, so the original
        // arrived and the timeout was spurious.
        if self.is_linux() && advanced > 0 && matches!(self.recovery, Recovery::Timeout { .. }) {
            if let (Some(stamp), Some(_)) = (self.retrans_stamp, self.undo.as_ref()) {
                if ack.ts_ecr < stamp {
                    self.undo_reduction();
                }
            }
        }
        // F-RTO (RFC 5682 with SACK, Linux `tcp_process_loss`).
        let orig_delivered = self.sb.take_orig_delivered();
        if self.frto {
            if let Recovery::Timeout { point } = self.recovery {
                if orig_delivered && self.undo.is_some() {
                    // Step 3b: a packet never retransmitted, sent before
                    // the timeout, arrived: the timeout was spurious.
                    self.undo_reduction();
                } else if self.sb.snd_nxt() > self.frto_high {
                    // Step 3a: the new data sent in step 2b meets a hole
                    // (a SACK or a duplicate ACK): the loss was real.
                    if self.sb.sacked_count() > sacked_before || advanced == 0 {
                        self.frto = false;
                    }
                } else if advanced > 0 && self.sb.snd_una() < point {
                    // Step 2b: send new data instead of retransmissions.
                    self.frto_high = self.sb.snd_nxt();
                    self.sb.set_orig_limit(self.frto_high);
                    if self.can_send_new() {
                        self.frto_new_only = true;
                    } else {
                        self.frto = false;
                    }
                }
            } else {
                self.frto = false;
            }
        }
        // A tail loss probe's outcome (Linux `tcp_process_tlp_ack`).
        if let Some(high) = self.tlp_high_seq {
            if ack.seq >= high {
                if !self.tlp_retransmitted {
                    self.tlp_high_seq = None;
                } else if ack.seq > high {
                    // The probe repaired a loss: reduce at once (CWR, no PRR).
                    self.tlp_high_seq = None;
                    let loss = self.loss_event(now_ns, in_flight_before);
                    self.cc.on_congestion_event(&loss);
                    self.cc.on_recovery_exit(now_ns);
                } else if advanced == 0 && delivered == 0 {
                    self.tlp_high_seq = None; // a pure duplicate: nothing was lost
                }
            }
        }

        let (newly_lost, reo_wait) = self.detect_losses(now_ns, false);

        let exiting = match self.recovery {
            Recovery::Fast { point } | Recovery::Timeout { point } => self.sb.snd_una() >= point,
            Recovery::Open => false,
        };
        // ns-2 `dupack_action` sends only the fast retransmission; `send_much`
        // waits for the next ACK (tcp-sack1.cc `recv`: `if (dupacks_ == 0)`).
        let mut ns2_entered = false;
        if self.recovery == Recovery::Open && self.sb.has_lost() {
            self.enter_fast_recovery(now_ns, in_flight_before, out);
            ns2_entered = self.is_ns2();
        } else if self.is_ns2() && in_fast && !exiting {
            // `--pipe_` for every ACK in recovery, again for a partial ACK.
            self.ns2.pipe -= 1 + i64::from(advanced > 0);
        }
        let in_fast_recovery = matches!(self.recovery, Recovery::Fast { .. });
        if self.is_linux() && in_fast_recovery {
            self.prr_update(delivered, newly_lost, advanced > 0);
        }

        let payload = self.cfg.payload_bytes();
        // RFC 5681 §3.1 / Linux `tcp_may_raise_cwnd`: only an ACK that
        // advances the cumulative point may grow the window; RFC 7661 / Linux
        // `tcp_is_cwnd_limited`: only while the window limits the sender.
        let may_grow = advanced > 0
            && !in_fast_recovery
            && (!self.cfg.profile.validates_cwnd() || self.is_cwnd_limited());
        let growth = if may_grow {
            self.cfg.profile.growth_pkts(delivered, self.cc.cwnd() < self.cc.ssthresh())
        } else {
            0
        };
        self.cc.on_ack(&AckEvent {
            now_ns,
            delivered_pkts: delivered.min(u64::from(u32::MAX)) as u32,
            growth_pkts: growth.min(u64::from(u32::MAX)) as u32,
            delivered_bytes: delivered * payload,
            cum_acked_pkts: advanced.min(u64::from(u32::MAX)) as u32,
            in_flight_pkts: in_flight_before.min(u64::from(u32::MAX)) as u32,
            // Only fast recovery holds the window; after a timeout the
            // window slow-starts while the lost packets go out again (RFC 5681 §3.1).
            in_recovery: in_fast_recovery,
            rtt: self.rtt.stats(),
            rtt_updated,
            ts: Some(AckTimestamps {
                echoed_sender_ts_ns: ack.ts_ecr,
                receiver_ts_ns: ack.ts_val,
                echoed_tag: ack.tag,
            }),
        });
        if exiting {
            match self.recovery {
                Recovery::Fast { .. } => {
                    self.cc.on_recovery_exit(now_ns);
                    // tcp-sack1.cc `recv`, exit branch: `recover_ = 0`.
                    self.ns2.recover = None;
                }
                // Linux `tcp_process_loss`: snd_una reached high_seq, Loss ->
                // Open (`tcp_try_undo_recovery`). RFC 5681 and ns-2
                // (`timeout()`, `recover_`) have no such event.
                Recovery::Timeout { .. } if self.is_linux() => self.cc.on_timeout_recovery_exit(now_ns),
                _ => {}
            }
            self.recovery = Recovery::Open;
            self.retrans_stamp = None;
            self.undo = None;
            self.frto = false;
            self.sb.set_orig_limit(0);
            if self.is_linux() {
                self.detect_losses(now_ns, true);
            }
            if self.is_ns2() {
                // tcp-sack1.cc `recv`, exit branch: `scb_->ClearScoreBoard()`
                // and `recover_ = 0`. Holes found during recovery (packets
                // sent in it and lost) were retransmitted in it; they are no
                // new episode. Another reduction needs three new SACK-changing
                // duplicate ACKs, and the SACKs above the recovery point are
                // forgotten too: the next duplicate ACK's blocks rebuild them.
                self.sb.unmark_lost();
                if self.sb.sacked_count() > 0 {
                    self.sb.forget_sacks();
                }
            }
            if self.sb.has_lost() {
                let pipe = self.sb.pipe();
                self.enter_fast_recovery(now_ns, pipe, out);
                if self.is_linux() {
                    self.prr_update(delivered, newly_lost, advanced > 0);
                }
            }
        }
        if !ns2_entered {
            self.send_allowed(now_ns, out);
        }
        if self.is_linux() && self.sb.outstanding() > 0 {
            match reo_wait {
                Some(w) if self.recovery == Recovery::Open || !self.sb.has_lost() => {
                    let rto = self.rtt.backed_off_rto_ns(self.rto_backoff);
                    self.arm(XmitTimer::Reorder, now_ns + (w + LINUX_TIMEOUT_MIN_NS).min(rto), out);
                }
                _ if advanced > 0 => self.schedule_probe(now_ns, out, true),
                _ => {}
            }
        }
        if let Some(t) = self.total_pkts {
            if self.completed_at_ns.is_none() && self.sb.snd_una() >= t {
                self.completed_at_ns = Some(now_ns);
                self.timer_ns = None;
            }
        }
    }

    fn recovery_exits_at(&self, ack_seq: u64) -> bool {
        match self.recovery {
            Recovery::Fast { point } | Recovery::Timeout { point } => ack_seq >= point,
            Recovery::Open => false,
        }
    }

    /// Linux `tcp_undo_cwnd_reduction`: the controller as it was before the
    /// reduction, nothing marked lost, back to Open.
    fn undo_reduction(&mut self) {
        if let Some(prior) = self.undo.take() {
            self.cc = prior;
        }
        self.sb.unmark_lost();
        self.recovery = Recovery::Open;
        self.retrans_stamp = None;
        self.frto = false;
        self.frto_new_only = false;
        self.sb.set_orig_limit(0);
        self.counters.undos += 1;
    }

    pub fn on_rto_timer(&mut self, now_ns: u64, out: &mut Outbox) {
        let Some(deadline) = self.timer_ns else { return };
        if deadline > now_ns {
            out.timers.push((TimerKind::Rto, deadline)); // restarted since: wait on
            return;
        }
        if self.sb.outstanding() == 0 {
            self.timer_ns = None;
            return;
        }
        match self.timer {
            XmitTimer::Rto => self.retransmission_timeout(now_ns, out),
            XmitTimer::Probe => self.send_loss_probe(now_ns, out),
            XmitTimer::Reorder => {
                // `tcp_rack_reo_timeout`: mark, recover, retransmit, then the
                // RTO (`tcp_rearm_rto`), not another reordering timer: what is
                // still in its window waits for the next ACK's RACK pass.
                self.timer_ns = None;
                let (newly, _) = self.detect_losses(now_ns, true);
                if newly > 0 && self.recovery == Recovery::Open {
                    let pipe = self.sb.pipe();
                    self.enter_fast_recovery(now_ns, pipe, out);
                    self.prr_update(1, newly, false);
                }
                self.send_allowed(now_ns, out);
                if self.timer_ns.is_none() || self.timer != XmitTimer::Rto {
                    self.arm_rto(now_ns, out);
                }
            }
        }
    }

    /// Linux `tcp_send_loss_probe`: one new packet if there is one, else the
    /// highest packet again; then the RTO.
    fn send_loss_probe(&mut self, now_ns: u64, out: &mut Outbox) {
        self.timer_ns = None;
        if self.tlp_high_seq.is_none() && out.has_host_room() {
            if self.can_send_new() {
                let seq = self.sb.send_new_at(now_ns);
                self.transmit(now_ns, seq, false, out);
                self.tlp_retransmitted = false;
            } else {
                let seq = self.sb.snd_nxt() - 1;
                self.sb.restamp(seq, now_ns);
                self.transmit(now_ns, seq, false, out);
                self.tlp_retransmitted = true;
            }
            self.counters.loss_probes += 1;
            self.tlp_high_seq = Some(self.sb.snd_nxt());
        }
        self.arm_rto(now_ns, out);
    }

    fn retransmission_timeout(&mut self, now_ns: u64, out: &mut Outbox) {
        self.rto_backoff += 1;
        self.counters.timeouts += 1;
        // Linux `tcp_enter_loss`: a new ssthresh only when not already in
        // fast recovery, nor in a timeout recovery without progress since.
        // ns-2 `timeout()` cuts on every expiry.
        let reduce = match (self.cfg.profile, self.recovery) {
            (Profile::Ns2, _) => true,
            (_, Recovery::Open) => true,
            (_, Recovery::Fast { .. }) => false,
            (_, Recovery::Timeout { .. }) => self.rto_backoff <= 1,
        };
        if self.is_linux() && reduce {
            self.undo = Some(self.cc.snapshot());
        }
        let ns2 = self.is_ns2();
        if ns2 {
            self.sb.forget_sacks();
            // `reset_rtx_timer(0, 1)`: `rtt_active_ = 0`; the next packet
            // timed is the first new one.
            self.ns2.rtt_active = false;
            // tcp-sack1.cc `timeout()`: `timeout_ = TRUE`, `recover_ = maxseq_`.
            self.ns2.timeout = true;
            self.ns2.recover = Some(self.sb.snd_nxt());
            self.ns2.timeout_sacks.clear();
        }
        if self.is_linux() {
            // `tcp_enter_loss` -> `tcp_timeout_mark_lost`: packets sent
            // less than RACK's RTT ago are not lost yet.
            self.sb.timeout_mark_lost(now_ns, self.rack.rtt_ns());
        } else {
            self.sb.mark_all_lost();
        }
        self.cc.on_rto(&RtoEvent {
            now_ns,
            backoff: self.rto_backoff,
            reduce,
            window_cap_pkts: ns2.then_some(self.cfg.rwnd_pkts as f64),
            halve: ns2,
            rtt: self.rtt.stats(),
            // Linux `tcp_enter_loss`: snd_cwnd = tcp_packets_in_flight + 1
            // (0 + 1 where everything was marked lost).
            in_flight_pkts: self.sb.pipe().min(u64::from(u32::MAX)) as u32,
        });
        self.ns2.reduced = true;
        self.ns2.dupacks = 0;
        self.tlp_high_seq = None;
        if self.recovery == Recovery::Open || matches!(self.recovery, Recovery::Fast { .. }) {
            self.retrans_stamp = None;
        }
        // `tcp_enter_loss`: F-RTO for a timeout from the Open state or a
        // recurring one, not for the first timeout during fast recovery.
        self.frto = self.is_linux() && (self.recovery == Recovery::Open || self.rto_backoff > 1);
        self.frto_high = self.sb.snd_nxt();
        self.sb.set_orig_limit(if self.frto { self.frto_high } else { 0 });
        self.recovery = Recovery::Timeout { point: self.sb.snd_nxt() };
        self.arm_rto(now_ns, out); // backed off (RFC 6298 §5.5-5.6)
        // RFC 6298 §5.4: retransmit the earliest unacknowledged packet.
        self.send_forced_retransmit(now_ns, out);
        self.send_allowed(now_ns, out);
    }
}
