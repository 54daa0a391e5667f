-- Catalogue tools declare what their result does to a session (effects)
-- and which checks they need (requires), instead of both living in code.
-- Tool calls an agent backend executes itself wait for its reported
-- result: `awaiting` until then, `failed` if it reports failure.
-- Sessions may leave every tool to the backend (runs_builtins = 0), and
-- remember the tools their backend was last told (tools_seen), so a call
-- response can say when they changed.
ALTER TABLE catalogue_tools ADD COLUMN requires TEXT NOT NULL DEFAULT '[]';
ALTER TABLE catalogue_tools ADD COLUMN effects  TEXT NOT NULL DEFAULT '[]';
ALTER TABLE tool_calls ADD COLUMN status TEXT NOT NULL DEFAULT 'done'
    CHECK (status IN ('done', 'awaiting', 'failed'));
ALTER TABLE agent_sessions ADD COLUMN runs_builtins INTEGER NOT NULL DEFAULT 1;
ALTER TABLE agent_sessions ADD COLUMN tools_seen TEXT;
CREATE INDEX tool_calls_awaiting ON tool_calls (session_id) WHERE status = 'awaiting';

-- The demo tools of an existing database get the effects and requirements
-- that used to be code, so they behave exactly as before.
UPDATE catalogue_tools SET effects = '[{"then":{"step":"ended"}}]' WHERE id = 'end_session' AND effects = '[]';
UPDATE catalogue_tools SET effects = '[{"when":"/verified","equals":true,"then":{"checks":{"identity_verified":true},"step":"identity_verified"},"otherwise":{"checks":{"identity_verified":false},"step":"identity_failed"}}]' WHERE id = 'perform_idv_check' AND effects = '[]';
UPDATE catalogue_tools SET effects = '[{"when":"/found","equals":true,"then":{"checks":{"account_found":true},"step":"account_found"},"otherwise":{"checks":{"account_found":false},"step":"account_not_found"}}]' WHERE id = 'lookup_account' AND effects = '[]';
UPDATE catalogue_tools SET effects = '[{"then":{"step":"balance_given"}}]' WHERE id = 'check_balance' AND effects = '[]';
UPDATE catalogue_tools SET effects = '[{"then":{"step":"transaction_found"}}]' WHERE id = 'lookup_transaction' AND effects = '[]';
UPDATE catalogue_tools SET effects = '[{"then":{"step":"dispute_opened"}}]' WHERE id = 'create_dispute_case' AND effects = '[]';
UPDATE catalogue_tools SET requires = '["identity_verified"]' WHERE id = 'check_balance' AND requires = '[]';
UPDATE catalogue_tools SET requires = '["identity_verified"]' WHERE id = 'lookup_transaction' AND requires = '[]';
UPDATE catalogue_tools SET requires = '["identity_verified"]' WHERE id = 'create_dispute_case' AND requires = '[]';
UPDATE catalogue_tools SET requires = '["identity_verified"]' WHERE id = 'manage_recent_interactions' AND requires = '[]';
