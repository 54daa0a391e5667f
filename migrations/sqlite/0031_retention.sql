-- Retention (issue #38): a daily sweep purges the sessions whose last
-- sign of life (opening, last activity, end) is older than
-- DATA_RETENTION_DAYS, with everything that hangs off them.
--
-- The sweep finds them by `last_activity` (it also asks `created_at` and
-- `ended_at`, but a session last active before the cut-off is the range
-- the index narrows it to), in bounded batches.
CREATE INDEX agent_sessions_last_activity ON agent_sessions (last_activity);

-- The last sweep, for the admins' `GET /api/retention`, and what keeps
-- the sweep daily across restarts: a server started more often than once
-- a day still sweeps, as the task asks this row when the last one ran.
-- One row (`id = 1`), replaced by every sweep.
CREATE TABLE retention_sweeps (
    id         INTEGER PRIMARY KEY CHECK (id = 1),
    ran_at     INTEGER NOT NULL,
    cutoff     INTEGER NOT NULL,
    days       INTEGER NOT NULL,
    -- JSON {"table": rows removed, ...}.
    removed    TEXT    NOT NULL,
    -- Review items kept (they are the student's) with their session
    -- link cleared.
    review_items_kept INTEGER NOT NULL,
    -- Who ran it: "daily" (the task) or "admin" (POST /api/retention/sweep).
    started_by TEXT    NOT NULL CHECK (started_by IN ('daily', 'admin'))
);
