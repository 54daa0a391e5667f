-- Live agent sessions, every tool call made in them, and the banking demo's
-- data that the built-in tools act on.
CREATE TABLE agent_sessions (
    id            TEXT    PRIMARY KEY,
    token_hash    TEXT    NOT NULL,
    api_key_id    INTEGER REFERENCES api_keys (id) ON DELETE SET NULL,
    state         TEXT    NOT NULL,              -- JSON WorkflowState
    verified_account TEXT,                        -- set by a passed identity check
    created_at    INTEGER NOT NULL,
    last_activity INTEGER NOT NULL,
    ended_at      INTEGER,
    end_reason    TEXT
);
CREATE INDEX agent_sessions_open ON agent_sessions (ended_at, last_activity);

CREATE TABLE tool_calls (
    id          INTEGER PRIMARY KEY,
    session_id  TEXT    NOT NULL REFERENCES agent_sessions (id) ON DELETE CASCADE,
    at_ms       INTEGER NOT NULL,
    workflow    TEXT    NOT NULL,
    tool        TEXT    NOT NULL,
    arguments   TEXT    NOT NULL,
    outcome     TEXT    NOT NULL CHECK (outcome IN ('allowed', 'refused')),
    result      TEXT,
    reason      TEXT,
    duration_us INTEGER NOT NULL
);
CREATE INDEX tool_calls_session ON tool_calls (session_id, id);

CREATE TABLE bank_accounts (
    account_number TEXT    PRIMARY KEY,
    sort_code      TEXT    NOT NULL,
    date_of_birth  TEXT    NOT NULL,
    holder         TEXT    NOT NULL,
    balance_pence  INTEGER NOT NULL
);

CREATE TABLE bank_transactions (
    id             TEXT    PRIMARY KEY,
    account_number TEXT    NOT NULL REFERENCES bank_accounts (account_number),
    booked_on      TEXT    NOT NULL,
    description    TEXT    NOT NULL,
    amount_pence   INTEGER NOT NULL
);

CREATE TABLE dispute_cases (
    id             INTEGER PRIMARY KEY,
    session_id     TEXT    NOT NULL,
    account_number TEXT    NOT NULL,
    transaction_id TEXT    NOT NULL REFERENCES bank_transactions (id),
    reason         TEXT    NOT NULL,
    details        TEXT,
    created_at     INTEGER NOT NULL
);

CREATE TABLE interactions (
    id             INTEGER PRIMARY KEY,
    account_number TEXT    NOT NULL,
    at             INTEGER NOT NULL,
    note           TEXT    NOT NULL
);

INSERT INTO bank_accounts VALUES
    ('12345678', '12-34-56', '1985-04-12', 'Alex Morgan', 254399),
    ('87654321', '65-43-21', '1990-11-30', 'Sam Patel', 1200050);
INSERT INTO bank_transactions VALUES
    ('tx-1001', '12345678', '2026-11-18', 'Coffee Corner', -450),
    ('tx-1002', '12345678', '2026-11-19', 'Online Electronics Ltd', -89999),
    ('tx-1003', '12345678', '2026-11-20', 'Salary', 325000),
    ('tx-2001', '87654321', '2026-11-19', 'Grocery Store', -6420);
INSERT INTO interactions (account_number, at, note) VALUES
    ('12345678', 1795000000, 'Asked about card delivery'),
    ('12345678', 1795100000, 'Reported a lost card');
