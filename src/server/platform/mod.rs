//! What every other server module stands on: start-up configuration, the
//! database, the shared state, the clock sessions run on, logging, exact
//! token counts, the process's open-file limit, and the locks and rate
//! windows that must hold across instances on PostgreSQL.

pub mod clock;
pub mod config;
pub mod db;
pub mod locks;
pub mod open_files;
pub mod state;
pub mod telemetry;
pub mod tokens;
pub mod weak_table;
pub mod windows;
