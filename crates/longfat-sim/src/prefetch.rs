//! A cache hint. Links and the packet pool are read in ring order, but a
//! busy bottleneck holds megabytes written one round trip earlier, so each
//! read would miss the cache without a hint a few packets ahead.

/// Hints the CPU to load `x` into the cache. No effect on results.
#[inline(always)]
pub fn prefetch<T>(x: Option<&T>) {
    #[cfg(target_arch = "x86_64")]
    if let Some(r) = x {
        // SAFETY: a prefetch is a hint: it never faults, even on an invalid
        // address, and `r` is a valid reference anyway.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                (r as *const T).cast::<i8>(),
            )
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = x;
}

/// Hints the CPU to load every cache line that `x`'s first `bytes` bytes
/// touch. No effect on results.
#[inline(always)]
pub fn prefetch_bytes<T: ?Sized>(x: &T, bytes: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        let base = (x as *const T).cast::<i8>();
        let mut off = 0;
        while off < bytes {
            // SAFETY: a prefetch is a hint and never faults; the address is
            // computed with `wrapping_add` and never read.
            unsafe {
                std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                    base.wrapping_add(off),
                )
            }
            off += 64;
        }
        // The last line, if the object straddles one more than its size.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                base.wrapping_add(bytes - 1),
            )
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (x, bytes);
}
