//! The namespace testbed's delay line: a userspace forwarder between two
//! TUN devices that holds every packet for a fixed delay and releases it,
//! in order, at its due time.
//!
//! The machine has no netem, so the propagation delay of an emulated path
//! comes from here (issue 15, "What this machine offers"). The router
//! namespace routes one direction of the path into TUN device `input`; this
//! line reads each packet, stamps it with `CLOCK_MONOTONIC`, and writes it to
//! TUN device `output` when `arrival + delay` comes; a policy-routing rule on
//! `iif output` sends it on towards its destination. Packets whose IPv4
//! destination falls in different prefixes can have different delays
//! (per-flow-group RTTs): each delay is a FIFO of its own, and the line
//! releases the earliest head among them.
//!
//! Waiting is `ppoll` with a nanosecond timeout on the input device (the
//! kernel's high-resolution timers, with this thread's timer slack set to
//! 1 ns), optionally followed by a busy spin over the last `spin_ns` before
//! a due time; how late each release was is recorded in a histogram
//! ([`Lateness`]) and reported at the end.
//!
//! The scheduling logic ([`Scheduler`], [`Classifier`], [`Lateness`]) is
//! plain data and tested without root; [`run`] is the Linux I/O around it.

use std::collections::VecDeque;
use std::fmt;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

/// Largest packet read from a TUN device (its MTU can be up to 64 KiB).
pub const MAX_PACKET_BYTES: usize = 65_536;

/// One IPv4 prefix and the delay of packets whose destination lies in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    pub prefix: [u8; 4],
    pub prefix_len: u8,
    pub delay_ns: u64,
}

impl Route {
    fn mask(&self) -> u32 {
        if self.prefix_len == 0 {
            0
        } else {
            u32::MAX << (32 - u32::from(self.prefix_len.min(32)))
        }
    }

    fn contains(&self, addr: [u8; 4]) -> bool {
        let m = self.mask();
        u32::from_be_bytes(addr) & m == u32::from_be_bytes(self.prefix) & m
    }
}

/// Maps a packet to its delay class: the longest matching prefix among the
/// routes, else the default class (index `routes.len()`, delay
/// `default_delay_ns`). Non-IPv4 packets (IPv6 neighbour discovery and the
/// like) take the default class too.
#[derive(Clone, Debug)]
pub struct Classifier {
    routes: Vec<Route>,
    default_delay_ns: u64,
}

impl Classifier {
    pub fn new(routes: Vec<Route>, default_delay_ns: u64) -> Self {
        Self {
            routes,
            default_delay_ns,
        }
    }

    /// The delay of each class, in class order (the default class last).
    pub fn delays_ns(&self) -> Vec<u64> {
        let mut d: Vec<u64> = self.routes.iter().map(|r| r.delay_ns).collect();
        d.push(self.default_delay_ns);
        d
    }

    /// The class of an IP packet (as read from a TUN device without packet
    /// information: the packet starts with the IP header).
    pub fn classify(&self, packet: &[u8]) -> usize {
        if packet.len() < 20 || packet[0] >> 4 != 4 {
            return self.routes.len();
        }
        let dst = [packet[16], packet[17], packet[18], packet[19]];
        let mut best: Option<(u8, usize)> = None;
        for (i, r) in self.routes.iter().enumerate() {
            if r.contains(dst) && best.is_none_or(|(len, _)| r.prefix_len > len) {
                best = Some((r.prefix_len, i));
            }
        }
        best.map_or(self.routes.len(), |(_, i)| i)
    }
}

/// A packet held by the line, with the time it is due out.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Held<P> {
    pub due_ns: u64,
    pub packet: P,
}

/// The packets in flight: one FIFO per delay class. Within a class every
/// packet has the same delay, so arrival order is due order and a FIFO is
/// enough; across classes the earliest head goes first.
#[derive(Clone, Debug)]
pub struct Scheduler<P> {
    delays_ns: Vec<u64>,
    queues: Vec<VecDeque<Held<P>>>,
    held: usize,
    capacity: usize,
    /// Packets refused because `capacity` packets were already held.
    pub dropped: u64,
}

impl<P> Scheduler<P> {
    /// A scheduler for the given class delays, holding at most `capacity`
    /// packets at once.
    pub fn new(delays_ns: Vec<u64>, capacity: usize) -> Self {
        let queues = delays_ns.iter().map(|_| VecDeque::new()).collect();
        Self {
            delays_ns,
            queues,
            held: 0,
            capacity,
            dropped: 0,
        }
    }

    pub fn held(&self) -> usize {
        self.held
    }

    /// Takes in a packet of class `class` that arrived at `arrival_ns`;
    /// returns its due time, or None if the line is full (the packet is
    /// dropped and counted). Arrival times must not go backwards (they come
    /// from one monotonic clock).
    pub fn push(&mut self, class: usize, arrival_ns: u64, packet: P) -> Option<u64> {
        if self.held >= self.capacity {
            self.dropped += 1;
            return None;
        }
        let due_ns = arrival_ns.saturating_add(self.delays_ns[class]);
        debug_assert!(self.queues[class].back().is_none_or(|h| h.due_ns <= due_ns));
        self.queues[class].push_back(Held { due_ns, packet });
        self.held += 1;
        Some(due_ns)
    }

    /// The class whose head is due first (ties: the lower class).
    fn first(&self) -> Option<usize> {
        let mut best: Option<(u64, usize)> = None;
        for (i, q) in self.queues.iter().enumerate() {
            if let Some(h) = q.front() {
                if best.is_none_or(|(due, _)| h.due_ns < due) {
                    best = Some((h.due_ns, i));
                }
            }
        }
        best.map(|(_, i)| i)
    }

    /// When the next packet is due, if any is held.
    pub fn next_due(&self) -> Option<u64> {
        self.first()
            .and_then(|i| self.queues[i].front())
            .map(|h| h.due_ns)
    }

    /// The next packet if it is due at `now_ns` (due time <= now).
    pub fn pop_due(&mut self, now_ns: u64) -> Option<Held<P>> {
        let i = self.first()?;
        if self.queues[i].front()?.due_ns > now_ns {
            return None;
        }
        self.held -= 1;
        self.queues[i].pop_front()
    }
}

/// Histogram of how late releases were, in whole microseconds: exact up to
/// `LATENESS_BUCKETS - 1` us, everything later in the last bucket.
#[derive(Clone, Debug)]
pub struct Lateness {
    counts: Vec<u64>,
    total: u64,
    max_ns: u64,
    sum_ns: u128,
}

/// 0..=99,999 us exact; the last bucket holds 100 ms and more.
pub const LATENESS_BUCKETS: usize = 100_001;

impl Default for Lateness {
    fn default() -> Self {
        Self {
            counts: vec![0; LATENESS_BUCKETS],
            total: 0,
            max_ns: 0,
            sum_ns: 0,
        }
    }
}

impl Lateness {
    pub fn record(&mut self, late_ns: u64) {
        let us = (late_ns / 1_000) as usize;
        self.counts[us.min(LATENESS_BUCKETS - 1)] += 1;
        self.total += 1;
        self.max_ns = self.max_ns.max(late_ns);
        self.sum_ns += u128::from(late_ns);
    }

    pub fn count(&self) -> u64 {
        self.total
    }

    pub fn max_ns(&self) -> u64 {
        self.max_ns
    }

    pub fn mean_ns(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.total as f64
        }
    }

    /// The `q`-quantile (0..=1) in microseconds, as the upper edge of its
    /// bucket (a release of 3.4 us late counts as "at most 4 us"); None with
    /// no releases. The nearest-rank definition: the smallest bucket edge
    /// at or below which at least `ceil(q * n)` releases lie.
    pub fn quantile_us(&self, q: f64) -> Option<u64> {
        if self.total == 0 {
            return None;
        }
        let rank = ((q.clamp(0.0, 1.0) * self.total as f64).ceil() as u64).max(1);
        let mut seen = 0;
        for (us, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Some(us as u64 + 1);
            }
        }
        Some(LATENESS_BUCKETS as u64)
    }

    /// Releases later than `threshold_us` microseconds (a lower bound for
    /// thresholds past the histogram's range).
    pub fn later_than_us(&self, threshold_us: u64) -> u64 {
        let from = (threshold_us as usize).min(LATENESS_BUCKETS - 1);
        self.counts[from..].iter().sum()
    }
}

/// What a run of the line did.
#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub received: u64,
    pub forwarded: u64,
    /// Dropped because the line held its capacity of packets.
    pub dropped_full: u64,
    /// Writes to the output device that failed.
    pub write_errors: u64,
    /// Held when the line stopped (not forwarded).
    pub left_held: u64,
    /// Largest number of packets held at once.
    pub peak_held: u64,
    pub lateness: Lateness,
}

impl fmt::Display for Stats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let l = &self.lateness;
        let q = |x| l.quantile_us(x).map_or("-".to_string(), |v| v.to_string());
        write!(
            f,
            "received {} forwarded {} dropped_full {} write_errors {} left_held {} peak_held {}; lateness us p50 {} p99 {} p99.9 {} max {:.0}",
            self.received,
            self.forwarded,
            self.dropped_full,
            self.write_errors,
            self.left_held,
            self.peak_held,
            q(0.5),
            q(0.99),
            q(0.999),
            l.max_ns() as f64 / 1e3
        )
    }
}

/// How the line runs.
#[derive(Clone, Debug)]
pub struct Config {
    /// TUN device packets come in from (the router routes them into it).
    pub input: String,
    /// TUN device packets go out through.
    pub output: String,
    pub classifier: Classifier,
    /// Most packets held at once; more are dropped (and counted).
    pub capacity: usize,
    /// Busy-wait over the last `spin_ns` before a due time instead of
    /// sleeping (0: always sleep in ppoll).
    pub spin_ns: u64,
}

/// The current `CLOCK_MONOTONIC` time in nanoseconds.
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid pointer to a timespec; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Opens (attaches to) the TUN device `name`, non-blocking, without packet
/// information. The device may already exist (`ip tuntap add mode tun`):
/// then this attaches to it.
pub fn open_tun(name: &str) -> io::Result<OwnedFd> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "TUN device name {name:?}: 1 to {} bytes",
                libc::IFNAMSIZ - 1
            ),
        ));
    }
    // SAFETY: a NUL-terminated path; the result is checked.
    let fd = unsafe {
        libc::open(
            c"/dev/net/tun".as_ptr(),
            libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd was just opened and is owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // struct ifreq: the name (IFNAMSIZ bytes), then a union whose first
    // member used here is ifr_flags (a short); 40 bytes in all on Linux.
    let mut ifr = [0u8; 40];
    ifr[..name.len()].copy_from_slice(name.as_bytes());
    let flags = (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short;
    ifr[libc::IFNAMSIZ..libc::IFNAMSIZ + 2].copy_from_slice(&flags.to_ne_bytes());
    // SAFETY: TUNSETIFF reads and writes a struct ifreq, which ifr holds.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), libc::TUNSETIFF as _, ifr.as_mut_ptr()) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(e.kind(), format!("TUN device {name}: {e}")));
    }
    Ok(fd)
}

/// Waits until `fd` is readable, `stop_fd` is readable, or `deadline_ns`
/// (monotonic) passes. Returns (input readable, stop readable).
fn wait(fd: RawFd, stop_fd: Option<RawFd>, deadline_ns: Option<u64>) -> io::Result<(bool, bool)> {
    let mut fds = [
        libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        },
        libc::pollfd {
            fd: stop_fd.unwrap_or(-1),
            events: libc::POLLIN,
            revents: 0,
        },
    ];
    let ts;
    let timeout = match deadline_ns {
        None => std::ptr::null(),
        Some(d) => {
            let left = d.saturating_sub(now_ns());
            ts = libc::timespec {
                tv_sec: (left / 1_000_000_000) as _,
                tv_nsec: (left % 1_000_000_000) as _,
            };
            &ts as *const libc::timespec
        }
    };
    // SAFETY: fds and the timeout outlive the call; a negative fd is ignored.
    let rc = unsafe { libc::ppoll(fds.as_mut_ptr(), 2, timeout, std::ptr::null()) };
    if rc < 0 {
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::Interrupted {
            return Ok((false, false));
        }
        return Err(e);
    }
    Ok((fds[0].revents != 0, fds[1].revents != 0))
}

/// Runs the line until `stop_fd` becomes readable (a signalfd, an eventfd,
/// a pipe) or an I/O error other than "nothing to read" occurs.
pub fn run(cfg: &Config, stop_fd: Option<RawFd>) -> io::Result<Stats> {
    let input = open_tun(&cfg.input)?;
    let output = open_tun(&cfg.output)?;
    // Sleep as precisely as the timers allow (the default slack is 50 us).
    // SAFETY: prctl with integer arguments.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
    let mut sched: Scheduler<Box<[u8]>> = Scheduler::new(cfg.classifier.delays_ns(), cfg.capacity);
    let mut stats = Stats::default();
    let mut buf = vec![0u8; MAX_PACKET_BYTES];
    loop {
        // Release everything due.
        let now = now_ns();
        while let Some(h) = sched.pop_due(now) {
            stats.lateness.record(now - h.due_ns);
            // SAFETY: writes the packet's bytes from a valid slice.
            let n = unsafe {
                libc::write(output.as_raw_fd(), h.packet.as_ptr().cast(), h.packet.len())
            };
            if n < 0 {
                stats.write_errors += 1;
            } else {
                stats.forwarded += 1;
            }
        }
        // Wait for input, the stop signal, or the next due time (spinning
        // over its last spin_ns if asked).
        let next = sched.next_due();
        let (mut readable, stop) = match next {
            Some(due) if cfg.spin_ns > 0 && due.saturating_sub(now_ns()) <= cfg.spin_ns => {
                (true, false)
            }
            Some(due) => wait(
                input.as_raw_fd(),
                stop_fd,
                Some(due.saturating_sub(cfg.spin_ns)),
            )?,
            None => wait(input.as_raw_fd(), stop_fd, None)?,
        };
        if stop {
            break;
        }
        // Read everything waiting (a spin reads without waiting).
        while readable {
            // SAFETY: reads into a buffer of the given length.
            let n = unsafe { libc::read(input.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
            if n < 0 {
                let e = io::Error::last_os_error();
                match e.kind() {
                    io::ErrorKind::WouldBlock => readable = false,
                    io::ErrorKind::Interrupted => {}
                    _ => return Err(e),
                }
                continue;
            }
            let arrival = now_ns();
            let packet: Box<[u8]> = buf[..n as usize].into();
            let class = cfg.classifier.classify(&packet);
            stats.received += 1;
            if sched.push(class, arrival, packet).is_none() {
                stats.dropped_full += 1;
            }
            stats.peak_held = stats.peak_held.max(sched.held() as u64);
        }
    }
    stats.left_held = sched.held() as u64;
    Ok(stats)
}

/// Parses `A.B.C.D/LEN=DELAY_NS` into a [`Route`].
pub fn parse_route(text: &str) -> Result<Route, String> {
    let bad =
        || format!("route {text:?}: expected A.B.C.D/LEN=DELAY_NS, e.g. 10.1.0.0/24=70000000");
    let (net, delay) = text.split_once('=').ok_or_else(bad)?;
    let (addr, len) = net.split_once('/').ok_or_else(bad)?;
    let addr: std::net::Ipv4Addr = addr.parse().map_err(|_| bad())?;
    let prefix_len: u8 = len.parse().map_err(|_| bad())?;
    if prefix_len > 32 {
        return Err(format!(
            "route {text:?}: prefix length {prefix_len} is out of range 0..=32"
        ));
    }
    let delay_ns: u64 = delay.parse().map_err(|_| bad())?;
    Ok(Route {
        prefix: addr.octets(),
        prefix_len,
        delay_ns,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn ipv4_to(dst: [u8; 4]) -> Vec<u8> {
        let mut p = vec![0u8; 40];
        p[0] = 0x45;
        p[16..20].copy_from_slice(&dst);
        p
    }

    #[test]
    fn due_time_is_arrival_plus_the_class_delay() {
        let mut s: Scheduler<u32> = Scheduler::new(vec![70_000_000, 10_000_000], 10);
        assert_eq!(s.push(0, 1_000, 1), Some(70_001_000));
        assert_eq!(s.push(1, 2_000, 2), Some(10_002_000));
        assert_eq!(s.next_due(), Some(10_002_000));
        assert_eq!(s.pop_due(10_001_999), None);
        assert_eq!(
            s.pop_due(10_002_000),
            Some(Held {
                due_ns: 10_002_000,
                packet: 2
            })
        );
        assert_eq!(s.pop_due(70_000_999), None);
        assert_eq!(
            s.pop_due(u64::MAX),
            Some(Held {
                due_ns: 70_001_000,
                packet: 1
            })
        );
        assert_eq!(s.next_due(), None);
    }

    #[test]
    fn a_full_line_drops_and_counts() {
        let mut s: Scheduler<u32> = Scheduler::new(vec![5], 2);
        assert!(s.push(0, 0, 1).is_some());
        assert!(s.push(0, 1, 2).is_some());
        assert_eq!(s.push(0, 2, 3), None);
        assert_eq!(s.dropped, 1);
        assert_eq!(s.held(), 2);
    }

    #[test]
    fn classifier_takes_the_longest_prefix_and_defaults_otherwise() {
        let c = Classifier::new(
            vec![
                parse_route("10.1.0.0/16=1").unwrap(),
                parse_route("10.1.2.0/24=2").unwrap(),
            ],
            3,
        );
        assert_eq!(c.delays_ns(), vec![1, 2, 3]);
        assert_eq!(c.classify(&ipv4_to([10, 1, 2, 9])), 1);
        assert_eq!(c.classify(&ipv4_to([10, 1, 3, 9])), 0);
        assert_eq!(c.classify(&ipv4_to([10, 2, 3, 9])), 2);
        let mut v6 = ipv4_to([10, 1, 2, 9]);
        v6[0] = 0x60;
        assert_eq!(c.classify(&v6), 2);
        assert_eq!(c.classify(&[0x45, 0, 0]), 2);
    }

    #[test]
    fn routes_parse_and_bad_ones_say_why() {
        assert_eq!(
            parse_route("10.0.0.0/8=70000000"),
            Ok(Route {
                prefix: [10, 0, 0, 0],
                prefix_len: 8,
                delay_ns: 70_000_000
            })
        );
        assert!(parse_route("10.0.0.0/33=1").unwrap_err().contains("0..=32"));
        assert!(parse_route("10.0.0.0=1").is_err());
        assert!(parse_route("10.0.0/8=1").is_err());
        assert!(parse_route("10.0.0.0/8=-1").is_err());
    }

    #[test]
    fn lateness_quantiles_are_bucket_upper_edges() {
        let mut l = Lateness::default();
        assert_eq!(l.quantile_us(0.5), None);
        for ns in [0, 500, 1_500, 2_500, 999_000_000] {
            l.record(ns);
        }
        assert_eq!(l.count(), 5);
        assert_eq!(l.quantile_us(0.0), Some(1));
        assert_eq!(l.quantile_us(0.4), Some(1)); // 0 and 500 ns: bucket 0
        assert_eq!(l.quantile_us(0.6), Some(2));
        assert_eq!(l.quantile_us(0.8), Some(3));
        assert_eq!(l.quantile_us(1.0), Some(LATENESS_BUCKETS as u64));
        assert_eq!(l.later_than_us(1_000), 1);
        assert_eq!(l.max_ns(), 999_000_000);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, rng_seed: proptest::test_runner::RngSeed::Fixed(15), ..ProptestConfig::default() })]

        /// Whatever the arrivals, every packet leaves exactly once, at
        /// arrival + its class delay, never before it is due, in due order
        /// overall, and in arrival order within a class.
        #[test]
        fn releases_are_in_order_at_their_due_times(
            delays in proptest::collection::vec(0u64..100_000, 1..4),
            arrivals in proptest::collection::vec((0u64..5_000, 0usize..4), 0..200),
            polls in proptest::collection::vec(0u64..20_000, 1..50),
        ) {
            let k = delays.len();
            let mut s: Scheduler<(usize, u64)> = Scheduler::new(delays.clone(), usize::MAX);
            let mut t = 0u64;
            let mut pushed = Vec::new();
            for (i, (gap, class)) in arrivals.iter().enumerate() {
                t += gap;
                let c = class % k;
                prop_assert_eq!(s.push(c, t, (i, t)), Some(t + delays[c]));
                pushed.push((i, c, t + delays[c]));
            }
            let mut now = 0u64;
            let mut out = Vec::new();
            for p in polls.iter().chain(std::iter::once(&u64::MAX)) {
                now = now.saturating_add(*p);
                while let Some(h) = s.pop_due(now) {
                    prop_assert!(h.due_ns <= now);
                    out.push(h);
                }
                if let Some(d) = s.next_due() {
                    prop_assert!(d > now);
                }
            }
            prop_assert_eq!(out.len(), pushed.len());
            prop_assert_eq!(s.held(), 0);
            for w in out.windows(2) {
                prop_assert!(w[0].due_ns <= w[1].due_ns);
            }
            let mut last_index = vec![None; k];
            for h in &out {
                let (i, arrival) = h.packet;
                let c = pushed[i].1;
                prop_assert_eq!(h.due_ns, arrival + delays[c]);
                if let Some(prev) = last_index[c] {
                    prop_assert!(prev < i);
                }
                last_index[c] = Some(i);
            }
        }
    }
}
