-- Join codes (issue #36): a short one-use code a plugin exchanges
-- (POST /api/plugins/join) for a plugin token of the session it was made
-- for, so the session token is never pasted into a plugin. Only the
-- code's SHA-256 is kept, like every token's. A code is live while
-- used_at is NULL and expires_at is in the future (domain::join_code);
-- the exchange sets used_at in the same transaction that issues the token.
CREATE TABLE join_codes (
    id              INTEGER PRIMARY KEY,
    code_hash       TEXT    NOT NULL UNIQUE,
    session_id      TEXT    NOT NULL REFERENCES agent_sessions (id) ON DELETE CASCADE,
    -- Who made it: the session's backend (its session token) or a
    -- signed-in user on the session's page.
    created_by      TEXT    NOT NULL CHECK (created_by IN ('session_token', 'user')),
    created_by_user INTEGER REFERENCES users (id) ON DELETE SET NULL,
    created_at      INTEGER NOT NULL,
    expires_at      INTEGER NOT NULL,
    used_at         INTEGER
);
CREATE INDEX join_codes_by_session ON join_codes (session_id, expires_at);

-- Plugin tokens issued by exchanging a join code: several plugins may join
-- one session, each with its own token, beside the session's own plugin
-- token (session_plugin_tokens, one per session). Same rights, same hash.
CREATE TABLE session_joined_tokens (
    token_hash   TEXT    PRIMARY KEY,
    session_id   TEXT    NOT NULL REFERENCES agent_sessions (id) ON DELETE CASCADE,
    join_code_id INTEGER REFERENCES join_codes (id) ON DELETE SET NULL,
    created_at   INTEGER NOT NULL
);
CREATE INDEX session_joined_tokens_by_session ON session_joined_tokens (session_id);
