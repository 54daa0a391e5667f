-- Accounts and their database-backed sign-in sessions.
CREATE TABLE users (
    id            INTEGER PRIMARY KEY,
    email         TEXT    NOT NULL,
    display_name  TEXT    NOT NULL,
    role          TEXT    NOT NULL CHECK (role IN ('teacher', 'admin')),
    password_hash TEXT    NOT NULL,
    created_at    INTEGER NOT NULL,
    CONSTRAINT users_email_unique UNIQUE (email)
);

-- The cookie carries a random token; only its SHA-256 is stored, so a copy of
-- the database does not let anyone sign in as its users.
CREATE TABLE auth_sessions (
    token_hash TEXT    PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);

CREATE INDEX auth_sessions_user ON auth_sessions (user_id);
CREATE INDEX auth_sessions_expiry ON auth_sessions (expires_at);
