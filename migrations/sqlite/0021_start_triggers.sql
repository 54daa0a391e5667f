-- What workflows' start triggers keep between requests (issue #35): the
-- hook secret that webhook and inbound-call requests name in their URL
-- (only its SHA-256 is kept; the admin sees the secret once, when it is
-- made), and for a schedule the last due time it fired for, so a restart
-- or a second scheduler never fires one due time twice.
CREATE TABLE workflow_triggers (
    workflow_id       TEXT    PRIMARY KEY REFERENCES workflows (id) ON DELETE CASCADE,
    hook_secret_hash  TEXT,
    hook_secret_at    INTEGER,
    -- The last due time (Unix seconds) the schedule fired for, or the time
    -- the scheduler first saw the schedule (it fires only after that).
    schedule_mark     INTEGER
);
