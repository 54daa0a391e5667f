-- Every call on the session API looks its session up by token hash; without
-- an index that was a scan of every session ever opened.
CREATE UNIQUE INDEX agent_sessions_token ON agent_sessions (token_hash);
