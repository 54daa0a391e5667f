-- Open event streams counted across instances (issue #39): per key
-- (`session:<id>`, `user:<id>`, `key:<id>`) each instance holds a lease of
-- slots, taken under an advisory lock on the key so that the leases of
-- live instances never add up past the cap; its streams open within its
-- lease without asking the database. An instance refreshes `seen_at_ms`
-- of its rows every few seconds and gives back what it does not use; the
-- rows of an instance that stopped refreshing stop counting
-- (`server::http::streams::lease`).
CREATE TABLE stream_leases (
    holder TEXT NOT NULL,
    instance TEXT NOT NULL,
    slots BIGINT NOT NULL,
    seen_at_ms BIGINT NOT NULL,
    PRIMARY KEY (holder, instance)
);

CREATE INDEX stream_leases_instance ON stream_leases (instance);
