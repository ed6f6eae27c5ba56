//! A counting global allocator with a hard cap on live bytes.
//!
//! Binaries that run fuzz inputs register it:
//!
//! ```ignore
//! #[global_allocator]
//! static ALLOC: longfat_fuzz::alloc::CountingAlloc = longfat_fuzz::alloc::CountingAlloc;
//! ```
//!
//! It tracks the bytes currently allocated (and the peak since the last
//! [`reset_peak`]). An allocation that would take the live total above the
//! cap ([`set_cap`]) fails: the standard library then prints "memory
//! allocation of N bytes failed" and aborts the process, instead of the
//! machine swapping or the kernel's OOM killer choosing a victim. The
//! supervisor (see `supervisor.rs`) sees the abort and records the input as
//! MEMORY. Before failing, the allocator writes one marker line to stderr
//! (no allocation needed), so the cause is unambiguous.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static CAP: AtomicUsize = AtomicUsize::new(usize::MAX);
static REFUSED: AtomicUsize = AtomicUsize::new(0);

/// The marker the allocator prints to stderr just before an allocation fails.
pub const CAP_MARKER: &str = "longfat-fuzz: allocation over the memory cap";

pub struct CountingAlloc;

/// Bytes currently allocated through the counting allocator (0 when it is
/// not the global allocator).
pub fn live_bytes() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// Highest live total since the last [`reset_peak`].
pub fn peak_bytes() -> usize {
    PEAK.load(Ordering::Relaxed)
}

/// Starts a new peak measurement at the current live total.
pub fn reset_peak() {
    PEAK.store(LIVE.load(Ordering::Relaxed), Ordering::Relaxed);
}

/// Allocations that would take the live total above `bytes` fail (abort).
pub fn set_cap(bytes: usize) {
    CAP.store(bytes, Ordering::Relaxed);
}

pub fn cap() -> usize {
    CAP.load(Ordering::Relaxed)
}

/// Allocations refused for the cap so far (the process is then aborting).
pub fn refused() -> usize {
    REFUSED.load(Ordering::Relaxed)
}

/// True when [`CountingAlloc`] is the process's global allocator (probed by
/// allocating and watching the counter move).
pub fn is_active() -> bool {
    let before = live_bytes();
    let v: Vec<u8> = Vec::with_capacity(4096);
    let during = live_bytes();
    drop(std::hint::black_box(v));
    during >= before + 4096
}

#[cold]
fn over_cap(size: usize) {
    // No allocation here: a fixed message and an integer formatted on the stack.
    let mut buf = [0u8; 20];
    let mut n = size;
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(CAP_MARKER.as_bytes());
    let _ = err.write_all(b" (request of ");
    let _ = err.write_all(&buf[i..]);
    let _ = err.write_all(b" bytes)\n");
}

#[inline]
fn reserve(size: usize) -> bool {
    let cap = CAP.load(Ordering::Relaxed);
    let prev = LIVE.fetch_add(size, Ordering::Relaxed);
    let now = prev.saturating_add(size);
    if now > cap {
        LIVE.fetch_sub(size, Ordering::Relaxed);
        REFUSED.fetch_add(1, Ordering::Relaxed);
        over_cap(size);
        return false;
    }
    PEAK.fetch_max(now, Ordering::Relaxed);
    true
}

unsafe impl GlobalAlloc for CountingAlloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if !reserve(layout.size()) {
            return std::ptr::null_mut();
        }
        let p = System.alloc(layout);
        if p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if !reserve(layout.size()) {
            return std::ptr::null_mut();
        }
        let p = System.alloc_zeroed(layout);
        if p.is_null() {
            LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        System.dealloc(ptr, layout);
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let old = layout.size();
        if new_size > old {
            if !reserve(new_size - old) {
                return std::ptr::null_mut();
            }
            let p = System.realloc(ptr, layout, new_size);
            if p.is_null() {
                LIVE.fetch_sub(new_size - old, Ordering::Relaxed);
            }
            p
        } else {
            let p = System.realloc(ptr, layout, new_size);
            if !p.is_null() {
                LIVE.fetch_sub(old - new_size, Ordering::Relaxed);
            }
            p
        }
    }
}
