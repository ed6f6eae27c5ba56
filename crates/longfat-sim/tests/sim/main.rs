//! The engine's integration tests, one binary (each file was its own test
//! binary; linking the engine into each cost more build time than running
//! them). `memory.rs` stays apart: its counting allocator is global.
//!
//! Run one file's tests by its module name: `cargo test -p longfat-sim
//! --test sim golden::`.

mod common;

mod algorithms;
mod aqm;
mod aqm_pinned;
mod bbr;
mod bound;
mod cache_hints;
mod cut_through;
mod external;
mod golden;
mod layering;
mod pacing;
mod plt;
mod profiles;
mod robustness;
mod scenario_fields;
mod tcp_sender;
mod traffic;
mod whole_runs;
