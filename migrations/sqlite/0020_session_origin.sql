-- Who or what opened a session (issue #35): the signed-in user who opened
-- it (a teacher trying a lesson, an admin trying a workflow or a vibe, a
-- manual start), whether it is a trial (listed apart from real runs), and
-- what started it (a workflow's start trigger and a summary of its
-- payload, as JSON `{"trigger","summary"}`).

ALTER TABLE agent_sessions ADD COLUMN opened_by INTEGER REFERENCES users (id) ON DELETE SET NULL;
ALTER TABLE agent_sessions ADD COLUMN trial INTEGER NOT NULL DEFAULT 0;
ALTER TABLE agent_sessions ADD COLUMN started_by TEXT;
