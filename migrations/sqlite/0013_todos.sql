-- The todo tools' data (issue #12): each agent session has its own todo
-- lists, which the built-in todo tools act on. Everything belongs to one
-- session and goes with it. A session's first todo call creates its state
-- row and its default list, Inbox.

-- A session's lists. Names are unique per session whatever their case:
-- name_key is the name in lower case (Unicode-aware, which COLLATE NOCASE
-- is not).
CREATE TABLE todo_lists (
    id          INTEGER PRIMARY KEY,
    session_id  TEXT    NOT NULL REFERENCES agent_sessions (id) ON DELETE CASCADE,
    name        TEXT    NOT NULL,
    name_key    TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    UNIQUE (session_id, name_key)
);

-- Per session: the one active list (a single column, so there can never be
-- two) and the last todo number handed out, so numbers are never reused
-- after a removal and "todo 3" always means the same todo.
CREATE TABLE todo_sessions (
    session_id  TEXT    PRIMARY KEY REFERENCES agent_sessions (id) ON DELETE CASCADE,
    active_list INTEGER NOT NULL REFERENCES todo_lists (id) ON DELETE CASCADE,
    last_number INTEGER NOT NULL DEFAULT 0
);

-- A todo: number is its id as the model sees it, unique in its session.
CREATE TABLE todos (
    id          INTEGER PRIMARY KEY,
    session_id  TEXT    NOT NULL REFERENCES agent_sessions (id) ON DELETE CASCADE,
    number      INTEGER NOT NULL,
    list_id     INTEGER NOT NULL REFERENCES todo_lists (id) ON DELETE CASCADE,
    text        TEXT    NOT NULL,
    done        INTEGER NOT NULL DEFAULT 0 CHECK (done IN (0, 1)),
    created_at  INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    UNIQUE (session_id, number)
);
CREATE INDEX todos_list ON todos (list_id, number);
-- Lets a list's deletion (with its session) find the row pointing at it.
CREATE INDEX todo_sessions_active ON todo_sessions (active_list);
