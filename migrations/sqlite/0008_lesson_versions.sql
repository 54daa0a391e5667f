-- Every saved version of a lesson, so a teacher can see who changed it when
-- and restore an earlier one (as a new save; history is never rewritten).
-- `lessons` keeps the current content; a lesson saved before this table
-- existed has no row for its current version until its next save.
CREATE TABLE lesson_versions (
    lesson_id   INTEGER NOT NULL REFERENCES lessons (id) ON DELETE CASCADE,
    version     INTEGER NOT NULL,
    content     TEXT    NOT NULL,             -- JSON LessonDraft
    summary     TEXT    NOT NULL,
    author_id   INTEGER REFERENCES users (id) ON DELETE SET NULL,
    author_name TEXT    NOT NULL,             -- kept if the account goes
    created_at  INTEGER NOT NULL,
    PRIMARY KEY (lesson_id, version)
);
