-- Plugin tools as one document per session (issue #13). A registration
-- or patch always replaces the whole set, and writing it as a thousand
-- rows was the largest part of registering a thousand tools; the set is
-- now one JSON array on the plugin's row, in registration order, each
-- tool {name, description, parameters, status, registeredAt}.
--
-- Use counts change on every relayed call, so they keep rows of their
-- own (one per tool that was called), and a change of the set never
-- rewrites them.

ALTER TABLE session_plugins ADD COLUMN tools TEXT NOT NULL DEFAULT '[]';

UPDATE session_plugins SET tools = (
    SELECT json_group_array(json_object(
               'name', t.name,
               'description', t.description,
               'parameters', json(t.parameters),
               'status', t.status,
               'registeredAt', t.registered_at) ORDER BY t.position)
    FROM session_plugin_tools t
    WHERE t.session_id = session_plugins.session_id
);

CREATE TABLE session_plugin_tool_uses (
    session_id TEXT    NOT NULL REFERENCES session_plugins (session_id) ON DELETE CASCADE,
    name       TEXT    NOT NULL,
    count      INTEGER NOT NULL,
    PRIMARY KEY (session_id, name)
) WITHOUT ROWID;

INSERT INTO session_plugin_tool_uses (session_id, name, count)
SELECT session_id, name, usage_count FROM session_plugin_tools WHERE usage_count > 0;

DROP TABLE session_plugin_tools;
