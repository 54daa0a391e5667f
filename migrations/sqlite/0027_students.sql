-- Students and their review queue (issue #38).
--
-- A student record belongs to one teacher: a name, or a pseudonymous code
-- for schools that must not store names (`pseudonymous = 1`). A teacher's
-- records are unique by name, so `student: "Ana"` on a session open finds
-- the same record each time. Deleting the teacher or the student deletes
-- everything of theirs: their sessions (and so, by the existing cascades,
-- calls, outcomes, todos and plugin rows) and their review items.
CREATE TABLE students (
    id           INTEGER PRIMARY KEY,
    teacher_id   INTEGER NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name         TEXT    NOT NULL,
    pseudonymous INTEGER NOT NULL DEFAULT 0,
    created_at   INTEGER NOT NULL,
    CONSTRAINT students_teacher_name UNIQUE (teacher_id, name)
);
CREATE INDEX students_teacher ON students (teacher_id, name);

-- The session's student record, when it was opened for one (`student`, the
-- text column of 0009, keeps the name or code shown in lists).
ALTER TABLE agent_sessions ADD COLUMN student_id INTEGER REFERENCES students (id) ON DELETE CASCADE;
CREATE INDEX agent_sessions_student ON agent_sessions (student_id, created_at);

-- One item per logged error (`mark_for_review`), in the student's own
-- words with the correct form, scheduled by the spaced-repetition rule in
-- `domain::review_queue` (`box`, `due_at`); `mastered_at` is set when it
-- leaves the queue. `session_id` is where it was logged (kept as NULL once
-- that session is purged by retention: the item is the student's, not the
-- run's).
CREATE TABLE review_queue (
    id               INTEGER PRIMARY KEY,
    student_id       INTEGER NOT NULL REFERENCES students (id) ON DELETE CASCADE,
    session_id       TEXT    REFERENCES agent_sessions (id) ON DELETE SET NULL,
    error_type       TEXT    NOT NULL,
    student_said     TEXT    NOT NULL,
    correct_form     TEXT    NOT NULL,
    explanation      TEXT,
    severity         INTEGER NOT NULL,
    box              INTEGER NOT NULL DEFAULT 1,
    due_at           INTEGER NOT NULL,
    last_reviewed_at INTEGER,
    mastered_at      INTEGER,
    created_at       INTEGER NOT NULL
);
CREATE INDEX review_queue_due ON review_queue (student_id, mastered_at, due_at);
