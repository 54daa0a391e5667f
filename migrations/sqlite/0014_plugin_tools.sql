-- Plugin tools (issue #13): what an app embedding an agent registered for
-- one session. Everything belongs to one session and goes with it.

-- The plugin of a session: what it is and where it runs (JSON as sent,
-- after validation), and when its tools last changed (Unix milliseconds;
-- the metadata's Last-Modified).
CREATE TABLE session_plugins (
    session_id     TEXT    PRIMARY KEY REFERENCES agent_sessions (id) ON DELETE CASCADE,
    plugin_type    TEXT    NOT NULL,
    plugin_version TEXT    NOT NULL,
    capabilities   TEXT    NOT NULL,
    environment    TEXT    NOT NULL,
    constraints    TEXT,
    updated_at     INTEGER NOT NULL
);

-- Its tools, in registration order (position). status: active, disabled
-- or error; only active tools are available to the agent. usage_count
-- counts the allowed calls relayed to the plugin.
CREATE TABLE session_plugin_tools (
    session_id    TEXT    NOT NULL REFERENCES session_plugins (session_id) ON DELETE CASCADE,
    name          TEXT    NOT NULL,
    position      INTEGER NOT NULL,
    description   TEXT    NOT NULL,
    parameters    TEXT    NOT NULL,
    status        TEXT    NOT NULL CHECK (status IN ('active', 'disabled', 'error')),
    registered_at INTEGER NOT NULL,
    usage_count   INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (session_id, name)
);
