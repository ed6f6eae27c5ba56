//! Scenario files, split by what the code does, each module importing only
//! those listed before it:
//!
//! - `error`: [`ScenarioError`], and how a serde error names its field;
//! - `external`: [`ExternalControllers`], the controllers an embedder
//!   registers by name next to the catalogue's;
//! - [`fields`]: every field declared once (kind, unit, range, default,
//!   meaning), with the [`limits`] the ranges use;
//! - `schema`: the serde structs ([`Scenario`] and its tables);
//! - `parse`: field parsers that check a value against its range;
//! - `validate`: names, labels, priority classes, UDP sources;
//! - `network`: `[run]` and `[network]` checked, the router chain built,
//!   the bottleneck queues sized;
//! - `transport`: a TCP entry's transport (TCP settings, controller, PLT);
//! - `placement`: every entry placed on the network through one step;
//! - `build`: [`build_with`], in that order.

mod build;
mod error;
mod external;
pub mod fields;
mod network;
mod parse;
mod placement;
mod schema;
mod transport;
mod validate;

pub use build::{build, build_with, BuildOptions};
pub use error::{interrupted_error, ScenarioError};
pub use external::{
    ControllerFactory, ControllerRequest, ExternalControllers, MAX_EXTERNAL_NAME_LEN,
};
pub use fields::limits;
pub use schema::{
    AccessCfg, AqmCfg, FlowSpec, LinkCfg, Network, PltCfg, Run, Scenario, ShortFlowSpec, TcpCfg,
    TransportFields, UdpSpec, WebSpec,
};
pub use transport::{tcp_sender, tcp_sender_with};
