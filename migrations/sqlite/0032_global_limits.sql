-- Rate-limit events counted in the database (issue #39): on PostgreSQL,
-- where several instances share one database, the sign-in throttle and the
-- per-session and per-user windows (server::platform::windows) count here,
-- so a limit holds across instances instead of once per instance. A SQLite
-- server is one instance and keeps counting in memory; the table exists on
-- both so the schemas stay one.
--
-- One row per counted event: its key (`pair:…`, `account:…`, `writes:…`),
-- when it happened and when it leaves its window (Unix seconds). Rows past
-- `expires_at` are deleted in passing.
CREATE TABLE window_events (
    id         INTEGER PRIMARY KEY,
    key        TEXT    NOT NULL,
    at         INTEGER NOT NULL,
    expires_at INTEGER NOT NULL
);
CREATE INDEX window_events_key ON window_events (key, at);
CREATE INDEX window_events_expiry ON window_events (expires_at);
