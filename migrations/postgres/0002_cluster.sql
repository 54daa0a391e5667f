-- What several instances on one PostgreSQL database share to act as one
-- server (server::cluster; docs/architecture.md, "Several instances").

-- Every event published on a session, numbered per session by the database:
-- the next seq is MAX(seq) + 1 (or the publisher's id base + 1 for a
-- session's first event), and the primary key makes two instances that
-- pick the same number at once retry, so seqs are gap-free in commit order.
-- NOTIFY carries each new row's key (and the frame when it is small); a
-- receiver that missed some, or got a frame too large for a notification,
-- reads them here, and so does a watcher's `Last-Event-ID` replay on an
-- instance whose own ring does not reach back far enough. Rows older than
-- SESSION_EVENTS_KEEP_SECS are pruned, except each live session's newest,
-- which keeps its numbering going.
CREATE TABLE session_events (
    session_id TEXT NOT NULL,
    seq BIGINT NOT NULL,
    name TEXT NOT NULL,
    json TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (session_id, seq)
);

CREATE INDEX session_events_created_at ON session_events (created_at);

-- Session-list and workflow frames too large for a notification: the
-- notification carries the row's id and receivers read the frame here.
-- kind is 'list' (key: the session id, owners: whose it is) or 'workflow'
-- (key: the workflow id). Pruned like session_events.
CREATE TABLE cluster_frames (
    id BIGSERIAL PRIMARY KEY,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    owners TEXT NOT NULL,
    name TEXT NOT NULL,
    json TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

CREATE INDEX cluster_frames_created_at ON cluster_frames (created_at);
