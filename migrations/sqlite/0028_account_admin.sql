-- Accounts an admin runs (issue #38): disabling and re-enabling, the last
-- sign-in shown in the list, and one-time password-reset links.
--
-- `disabled_at` set: the account cannot sign in, its sign-ins were ended
-- when it was disabled, and its API keys are refused until it is enabled
-- again (the keys are kept, so re-enabling restores them).
ALTER TABLE users ADD COLUMN disabled_at INTEGER;
ALTER TABLE users ADD COLUMN last_sign_in_at INTEGER;

-- A reset link carries a random token; only its SHA-256 is stored, so a copy
-- of the database opens no account. A link works once (`used_at`), until
-- `expires_at`; making a new link for an account deletes its older ones.
CREATE TABLE password_resets (
    token_hash TEXT    PRIMARY KEY,
    user_id    INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_by INTEGER REFERENCES users (id) ON DELETE SET NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    used_at    INTEGER
);
CREATE INDEX password_resets_user ON password_resets (user_id);
