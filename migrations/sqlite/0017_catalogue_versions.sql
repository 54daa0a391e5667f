-- Every change of the catalogue's tools (issue #33): the whole tool list as
-- it stood after the change (JSON, domain::catalogue::CatalogueTool in
-- catalogue order), what it changed and who made it. `catalogue_tools`
-- keeps the tools in force; a database from before this table gets its
-- first version (the catalogue as it stood) at the next start-up.
-- Append-only: a change inserts version N+1 and fails on the primary key if
-- someone else inserted it first; updates and deletes are refused.
CREATE TABLE catalogue_versions (
    version     INTEGER PRIMARY KEY,
    document    TEXT    NOT NULL,
    summary     TEXT    NOT NULL,
    author_id   INTEGER REFERENCES users (id) ON DELETE SET NULL,
    author_name TEXT    NOT NULL,             -- e-mail, API key name or source; kept if the account goes
    created_at  INTEGER NOT NULL
);

-- (author_id may still be cleared when an account is deleted.)
CREATE TRIGGER catalogue_versions_no_update
BEFORE UPDATE OF version, document, summary, author_name, created_at ON catalogue_versions
BEGIN
    SELECT RAISE(ABORT, 'catalogue_versions is append-only');
END;

CREATE TRIGGER catalogue_versions_no_delete BEFORE DELETE ON catalogue_versions
BEGIN
    SELECT RAISE(ABORT, 'catalogue_versions is append-only');
END;
