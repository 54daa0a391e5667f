-- A review lesson's items (JSON [{id, text, audio?}]): the ids the review
-- tools take, listed in the prompt.
ALTER TABLE lessons ADD COLUMN review_items TEXT NOT NULL DEFAULT '[]';

-- What a tutor session's tools recorded, for the teacher: one row per
-- logged error, profile fact, completed task, mastered item or summary.
-- `data` is the outcome as JSON (domain::lesson::outcome::TutorOutcome).
CREATE TABLE lesson_outcomes (
    id         INTEGER PRIMARY KEY,
    session_id TEXT    NOT NULL REFERENCES agent_sessions (id) ON DELETE CASCADE,
    call_id    INTEGER NOT NULL,
    kind       TEXT    NOT NULL CHECK (kind IN ('error', 'fact', 'task', 'mastered', 'summary')),
    data       TEXT    NOT NULL,
    at         INTEGER NOT NULL
);
CREATE INDEX lesson_outcomes_session ON lesson_outcomes (session_id, id);
CREATE INDEX agent_sessions_lesson ON agent_sessions (lesson_id, created_at);
