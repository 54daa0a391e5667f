-- A tutor session's planned length (the lesson's, when it opened) and the
-- turns its backend reported with the nudges given (JSON TurnLog), so time
-- and turn triggers can be evaluated at run time.
ALTER TABLE agent_sessions ADD COLUMN planned_minutes INTEGER;
ALTER TABLE agent_sessions ADD COLUMN turns TEXT;
