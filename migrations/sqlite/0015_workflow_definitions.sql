-- Workflow definitions (issue #14): a workflow's start trigger and ordered
-- steps, as JSON (domain::workflow_def::Definition), with a version a save
-- must name, so concurrent edits never silently overwrite each other. A
-- workflow without a row has an empty definition at version 0.
CREATE TABLE workflow_definitions (
    workflow_id TEXT    PRIMARY KEY REFERENCES workflows (id) ON DELETE CASCADE,
    definition  TEXT    NOT NULL,
    version     INTEGER NOT NULL,
    updated_at  INTEGER NOT NULL,
    updated_by  TEXT    NOT NULL
);

-- Every saved version, with who saved it and what the edit was, for the
-- history and for attributing each change.
CREATE TABLE workflow_definition_versions (
    workflow_id TEXT    NOT NULL REFERENCES workflows (id) ON DELETE CASCADE,
    version     INTEGER NOT NULL,
    definition  TEXT    NOT NULL,
    edit        TEXT    NOT NULL,
    saved_at    INTEGER NOT NULL,
    saved_by    TEXT    NOT NULL,
    PRIMARY KEY (workflow_id, version)
);
