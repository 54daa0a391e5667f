//! A connected server's status, as the pages and the API show it.

use serde::{Deserialize, Serialize};

/// Whether a connected server is in use, for its admins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum McpServerStatus {
    /// Added; the first connection is being made.
    Connecting,
    /// Connected; its tools are imported.
    Connected,
    /// The last attempt failed (`lastError` says why); retrying with
    /// back-off.
    Error,
}

impl McpServerStatus {
    /// Its stored and JSON word.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Connecting => "connecting",
            Self::Connected => "connected",
            Self::Error => "error",
        }
    }

    /// The status a stored word names (`error` for an unknown one).
    pub fn parse(word: &str) -> Self {
        match word {
            "connecting" => Self::Connecting,
            "connected" => Self::Connected,
            _ => Self::Error,
        }
    }
}
