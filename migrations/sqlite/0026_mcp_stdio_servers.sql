-- Stdio MCP servers (issue #37): a connected server is reached either by
-- its Streamable HTTP URL (with headers) or by a command Switchboard
-- starts (with variables of its own), so `url` becomes nullable beside a
-- new `command` and `env`. Like the headers, `env` holds secrets: it is
-- handed to the process and never read back into an answer or a log line.
--
-- SQLite cannot drop a NOT NULL, so the table is rebuilt keeping every
-- row, its id and the AUTOINCREMENT counter. Dropping the old table sets
-- `mcp_server_tools.server_id` to NULL (its foreign key's ON DELETE), so
-- the links are set aside first and put back afterwards.
CREATE TABLE mcp_servers_0026 (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    name        TEXT    NOT NULL UNIQUE,
    url         TEXT,
    headers     TEXT    NOT NULL DEFAULT '{}',   -- JSON object, name → value
    command     TEXT,                            -- JSON array: program, arguments
    env         TEXT    NOT NULL DEFAULT '{}',   -- JSON object, name → value
    status      TEXT    NOT NULL DEFAULT 'connecting',
    last_error  TEXT,
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    CHECK ((url IS NULL) <> (command IS NULL))
);

INSERT INTO mcp_servers_0026 (id, name, url, headers, status, last_error, created_at, updated_at)
SELECT id, name, url, headers, status, last_error, created_at, updated_at FROM mcp_servers;

DELETE FROM sqlite_sequence WHERE name = 'mcp_servers_0026';
INSERT INTO sqlite_sequence (name, seq)
SELECT 'mcp_servers_0026', seq FROM sqlite_sequence WHERE name = 'mcp_servers';

CREATE TEMP TABLE mcp_server_links_0026 AS
SELECT tool_id, server_id FROM mcp_server_tools WHERE server_id IS NOT NULL;

DROP TABLE mcp_servers;
ALTER TABLE mcp_servers_0026 RENAME TO mcp_servers;

UPDATE mcp_server_tools
SET server_id = (SELECT k.server_id FROM temp.mcp_server_links_0026 k
                 WHERE k.tool_id = mcp_server_tools.tool_id)
WHERE tool_id IN (SELECT tool_id FROM temp.mcp_server_links_0026);

DROP TABLE temp.mcp_server_links_0026;
