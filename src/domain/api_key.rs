//! API keys as admins see them: listed by name and prefix, the secret shown
//! only once, at creation.
//!
//! The store builds these and the admin panel shows them, so they are shared
//! domain data rather than server-function types.

use serde::{Deserialize, Serialize};

/// A key as listed (never its secret).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiKeyView {
    /// Id, for revoking.
    pub id: i64,
    /// What it is for ("Gemini Live backend").
    pub name: String,
    /// The first characters, to tell keys apart.
    pub prefix: String,
    /// Unix seconds.
    pub created_at: i64,
    /// Revoked keys are kept for the record.
    pub revoked: bool,
}

/// A freshly created key: the only time the secret is shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CreatedApiKey {
    /// The secret, for `Authorization: Bearer …`.
    pub secret: String,
    /// Its listing.
    pub key: ApiKeyView,
}
