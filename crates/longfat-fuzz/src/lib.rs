//! longfat-fuzz: seeded, reproducible fuzzing of the scenario validator and
//! builder of `longfat-sim`, on stable Rust.
//!
//! * [`input::Generator`] makes input `i` of campaign `seed` as a pure
//!   function of (seed, i): a structured scenario over the whole schema
//!   ([`gen`]) or a mutation of a file under scenarios/ ([`mutate`]);
//! * [`harness::run_input`] parses, validates, builds and runs it for a
//!   bounded number of events and classifies the outcome;
//! * [`supervisor`] shards a campaign over child processes that may die;
//! * [`corpus`] reads the regression corpus in tests/corpus/.
//!
//! See crates/longfat-fuzz/README.md for the commands.

pub mod alloc;
pub mod corpus;
pub mod gen;
pub mod harness;
pub mod input;
pub mod mutate;
pub mod schema;
pub mod supervisor;
pub mod values;
