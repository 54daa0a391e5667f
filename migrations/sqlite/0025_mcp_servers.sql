-- Connected MCP servers (issue #37): an upstream MCP server an admin added,
-- and which catalogue tools were imported from it. The headers (a bearer
-- token, a key) are stored to be sent upstream and are never read back
-- into an answer or a log line.
CREATE TABLE mcp_servers (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT    NOT NULL UNIQUE,
    url         TEXT    NOT NULL,
    headers     TEXT    NOT NULL DEFAULT '{}',   -- JSON object, name → value
    status      TEXT    NOT NULL DEFAULT 'connecting',
    last_error  TEXT,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);

-- A catalogue tool imported from a connected server: the name to call it
-- by upstream, the description the upstream last gave (to tell an admin's
-- own from it), and whether the upstream still lists it. A tool gone
-- upstream, or whose server was removed (server_id NULL), stays in the
-- catalogue, unavailable, so bindings and history that name it hold.
CREATE TABLE mcp_server_tools (
    tool_id              TEXT    PRIMARY KEY,
    server_id            INTEGER REFERENCES mcp_servers (id) ON DELETE SET NULL,
    upstream_name        TEXT    NOT NULL,
    upstream_description TEXT    NOT NULL,
    available            INTEGER NOT NULL DEFAULT 1
);

CREATE INDEX mcp_server_tools_server ON mcp_server_tools (server_id);
