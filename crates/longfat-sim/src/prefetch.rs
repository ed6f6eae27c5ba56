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
