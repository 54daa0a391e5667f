-- API keys get scopes (space-separated) and a last-used time. Keys made
-- before scopes keep what they could do, except replacing the bindings.
ALTER TABLE api_keys ADD COLUMN scopes TEXT NOT NULL DEFAULT 'sessions lessons:read bindings:read';
ALTER TABLE api_keys ADD COLUMN last_used_at INTEGER;
