-- Lessons: the teacher's prompt, objectives and tool configuration, kept apart
-- so the prompt can be assembled at run time.
CREATE TABLE lessons (
    id                  INTEGER PRIMARY KEY,
    owner_id            INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    title               TEXT    NOT NULL,
    conversation_prompt TEXT    NOT NULL DEFAULT '',
    tasks               TEXT    NOT NULL DEFAULT '[]',   -- JSON [{id, text}]
    duration_minutes    INTEGER,
    level               TEXT CHECK (level IN ('A1', 'A2', 'B1', 'B2', 'C1', 'C2')),
    review              INTEGER NOT NULL DEFAULT 0,
    -- JSON LessonToolConfiguration; NULL for lessons made before tools could
    -- be configured (they get the standard_lesson default on first edit).
    tool_configuration  TEXT,
    -- Optimistic concurrency: every save must name the version it started from.
    version             INTEGER NOT NULL DEFAULT 1,
    created_at          INTEGER NOT NULL,
    updated_at          INTEGER NOT NULL,
    updated_by          INTEGER REFERENCES users (id) ON DELETE SET NULL
);
CREATE INDEX lessons_owner ON lessons (owner_id);

-- Keys agent backends use for the JSON API; only the SHA-256 is stored.
CREATE TABLE api_keys (
    id         INTEGER PRIMARY KEY,
    name       TEXT    NOT NULL,
    key_hash   TEXT    NOT NULL,
    prefix     TEXT    NOT NULL,
    created_by INTEGER REFERENCES users (id) ON DELETE SET NULL,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER,
    CONSTRAINT api_keys_hash_unique UNIQUE (key_hash)
);
