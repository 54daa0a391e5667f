-- A session may run a lesson instead of a workflow: the tutor tools it may
-- call are the lesson's enabled ones as the lesson stood when it opened
-- (comma-separated), and it names the student it is for.
ALTER TABLE agent_sessions ADD COLUMN lesson_id INTEGER REFERENCES lessons (id) ON DELETE SET NULL;
ALTER TABLE agent_sessions ADD COLUMN lesson_tools TEXT;
ALTER TABLE agent_sessions ADD COLUMN student TEXT;
