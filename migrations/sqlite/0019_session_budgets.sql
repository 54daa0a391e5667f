-- What each agent session has stored, so its budget holds across requests
-- and restarts (issue #33): calls recorded and the bytes of their
-- arguments and results. Checked before a call or result is written and
-- counted in the same transaction that writes it.

ALTER TABLE agent_sessions ADD COLUMN calls_stored INTEGER NOT NULL DEFAULT 0;
ALTER TABLE agent_sessions ADD COLUMN bytes_stored INTEGER NOT NULL DEFAULT 0;

-- Sessions recorded before budgets start from what they already hold.
UPDATE agent_sessions SET
    calls_stored = (SELECT COUNT(*) FROM tool_calls c WHERE c.session_id = agent_sessions.id),
    bytes_stored = (SELECT COALESCE(SUM(LENGTH(c.arguments) + COALESCE(LENGTH(c.result), 0)), 0)
                    FROM tool_calls c WHERE c.session_id = agent_sessions.id);
