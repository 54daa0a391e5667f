-- The tool catalogue, the workflows, and every saved version of the bindings.
CREATE TABLE catalogue_tools (
    id          TEXT    PRIMARY KEY,
    name        TEXT    NOT NULL,
    description TEXT    NOT NULL,
    category    TEXT    NOT NULL,
    parameters  TEXT    NOT NULL,            -- JSON Schema (object)
    position    INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL
);

CREATE TABLE workflows (
    id          TEXT    PRIMARY KEY,
    name        TEXT    NOT NULL,
    description TEXT    NOT NULL DEFAULT '',
    position    INTEGER NOT NULL
);

-- Append-only: a save inserts version N+1 and fails on the primary key if
-- someone else inserted it first, which is how concurrent saves are caught.
CREATE TABLE bindings_versions (
    version     INTEGER PRIMARY KEY,
    document    TEXT    NOT NULL,             -- tool-bindings.json
    summary     TEXT    NOT NULL,
    author_id   INTEGER REFERENCES users (id) ON DELETE SET NULL,
    author_name TEXT    NOT NULL,
    created_at  INTEGER NOT NULL
);
