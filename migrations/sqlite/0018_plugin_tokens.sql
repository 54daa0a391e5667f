-- A session's plugin token (pt_…): the credential of an app embedding the
-- agent (a CODAP plugin, the /playground page), with plugin rights only,
-- beside the backend's session token. One per session: issuing a new one
-- replaces it, so a leaked one can be cut off. Only its SHA-256 is kept,
-- like the session token's; a plugin call looks its session up by it.
CREATE TABLE session_plugin_tokens (
    session_id TEXT    PRIMARY KEY REFERENCES agent_sessions (id) ON DELETE CASCADE,
    token_hash TEXT    NOT NULL UNIQUE,
    created_at INTEGER NOT NULL
);
