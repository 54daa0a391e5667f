-- Agent personas and vibes (app experiences), held as data with versions
-- so concurrent edits never silently overwrite each other. Each row keeps
-- the object as JSON in its manifest layout (AGENTS/<id>/config.json,
-- VIBES/<id>/manifest.json), so import and export are the same shape.
CREATE TABLE agents (
    id          TEXT    PRIMARY KEY,
    config      TEXT    NOT NULL,             -- JSON Agent
    version     INTEGER NOT NULL DEFAULT 1,
    position    INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    updated_by  TEXT
);
CREATE TABLE vibes (
    id          TEXT    PRIMARY KEY,
    manifest    TEXT    NOT NULL,             -- JSON Vibe
    version     INTEGER NOT NULL DEFAULT 1,
    position    INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    updated_by  TEXT
);
-- Which catalogue tools are Ultravox's own (selected by name, not declared).
ALTER TABLE catalogue_tools ADD COLUMN ultravox_builtin INTEGER NOT NULL DEFAULT 0;
