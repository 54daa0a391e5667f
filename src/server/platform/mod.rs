//! What every other server module stands on: start-up configuration, the
//! database, the shared state, the clock sessions run on, allocator tuning,
//! logging, and exact token counts.

pub mod clock;
pub mod config;
pub mod db;
pub mod memory;
pub mod state;
pub mod telemetry;
pub mod tokens;
