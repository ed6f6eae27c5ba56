//! longfat-sim: a deterministic packet-level simulator for congestion control
//! on long fat networks.
//!
//! Time is integer nanoseconds; events are ordered by (time, sequence
//! number); one seed drives every random choice through per-component
//! streams; there is no global state. See `sim::Simulation`.

pub mod aqm;
pub mod budget;
pub mod capture;
pub mod event;
pub mod flow;
pub mod link;
pub mod metrics;
pub mod outbox;
pub mod packet;
pub mod plt;
pub mod prefetch;
pub mod rng;
pub mod scenario;
pub mod sim;
pub mod tcp;
pub mod topology;
pub mod traffic;
pub mod udp;
pub mod units;

pub use scenario::{
    build, build_with, BuildOptions, ControllerFactory, ControllerRequest, ExternalControllers,
    Scenario, ScenarioError,
};
pub use sim::Simulation;
