-- What a lesson opened for a student knows of them, and the facts their
-- lessons learnt (issue #38, building on 0027).
--
-- `student_context` is fixed when a session opens for a student record
-- (JSON `domain::student::StudentContext`): the review items due for them
-- that a review lesson's prompt offers (`q-<id>`), and the known facts an
-- opted-in lesson's prompt carries. Kept with the session so its prompt
-- stays the same for the whole run, `mark_item_mastered` takes only the
-- items offered, and the items offered but not mastered go back to box 1
-- when it ends.
ALTER TABLE agent_sessions ADD COLUMN student_context TEXT;

-- Profile facts (`update_user_profile`) saved on the student's record: one
-- row per category and value, its time and confidence those of the last
-- lesson that learnt it. The student's, not the run's: kept when the
-- session is purged (`session_id` becomes NULL), deleted with the student.
CREATE TABLE student_facts (
    id         INTEGER PRIMARY KEY,
    student_id INTEGER NOT NULL REFERENCES students (id) ON DELETE CASCADE,
    session_id TEXT    REFERENCES agent_sessions (id) ON DELETE SET NULL,
    category   TEXT    NOT NULL,
    value      TEXT    NOT NULL,
    confidence REAL,
    learnt_at  INTEGER NOT NULL,
    CONSTRAINT student_facts_one UNIQUE (student_id, category, value)
);
CREATE INDEX student_facts_student ON student_facts (student_id, learnt_at);
