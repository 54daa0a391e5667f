-- Calls relayed to a plugin whose stream may be on another instance
-- (server::agent::plugins::across; docs/architecture.md, "Several
-- instances"). PostgreSQL only: on SQLite one instance holds them in memory.

-- A call relayed to a session's plugin, waiting for its answer. The instance
-- where the agent waits inserts it and notifies the relay channel with its
-- id; every instance offers it to the session's plugin streams it holds
-- (arguments travel here, not in the notification). The plugin's answer,
-- POSTed to any instance, is taken once: an UPDATE ... WHERE answer IS NULL
-- and before deadline_ms (the waiting instance's clock, Unix ms). The
-- waiting instance deletes the row when it reads the answer or gives up at
-- the deadline; the session's end deletes its rows, and rows of an instance
-- that died are pruned a while past their deadline.
CREATE TABLE plugin_relay_calls (
    call_id BIGINT PRIMARY KEY,
    session_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    arguments TEXT NOT NULL,
    deadline_ms BIGINT NOT NULL,
    -- {"result": ...} or {"error": "..."}; NULL until answered.
    answer TEXT
);

CREATE INDEX plugin_relay_calls_session ON plugin_relay_calls (session_id, call_id);
CREATE INDEX plugin_relay_calls_deadline ON plugin_relay_calls (deadline_ms);

-- Each instance's plugin streams per session: how many are open there, when
-- the last one closed, and when the instance last said so (seen_at_ms,
-- refreshed by its heartbeat while streams are open). A call may be relayed
-- when some row has open streams and a recent heartbeat, or closed its last
-- less than the reconnect grace ago; an instance killed with its streams
-- open stops refreshing, and counts as closed at its last heartbeat. Times
-- are Unix ms on each instance's clock.
CREATE TABLE plugin_streams (
    session_id TEXT NOT NULL,
    instance TEXT NOT NULL,
    open_streams BIGINT NOT NULL,
    closed_at_ms BIGINT,
    seen_at_ms BIGINT NOT NULL,
    PRIMARY KEY (session_id, instance)
);

CREATE INDEX plugin_streams_instance ON plugin_streams (instance);

-- cluster_frames (0002) also carries kind 'plugin': a session's
-- tool-availability-update for the plugin streams of every instance
-- (key: the session id).
