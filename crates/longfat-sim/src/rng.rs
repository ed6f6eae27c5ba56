//! Per-component random streams derived from the run's one seed, so adding
//! a flow does not change another link's loss pattern.

use rand_core::{RngCore, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// The seed of a run whose scenario sets no `run.seed` (the Python front end
/// reads it from the bindings: stated once, here).
pub const DEFAULT_SEED: u64 = 1;

/// An independent random stream for one component, derived from the run's seed.
pub fn component_rng(seed: u64, kind: u64, index: u64) -> Xoshiro256PlusPlus {
    // SplitMix64-style mixing keeps streams of neighbouring components apart.
    let mut z =
        seed ^ kind.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ index.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    Xoshiro256PlusPlus::seed_from_u64(z ^ (z >> 31))
}

pub const RNG_LINK: u64 = 1;
pub const RNG_UDP: u64 = 2;
pub const RNG_JITTER: u64 = 3;
pub const RNG_TRAFFIC: u64 = 4;
/// A flow's controller (`CongestionControl::seed`: BBR's random PROBE_BW phase).
pub const RNG_CC: u64 = 5;

/// The seed flow `flow`'s controller gets: the first draw of its own stream,
/// so a controller's randomness is a function of the run's seed and moves
/// no other component's stream.
pub fn cc_seed(seed: u64, flow: u64) -> u64 {
    component_rng(seed, RNG_CC, flow).next_u64()
}
