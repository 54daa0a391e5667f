-- A session's plugin tools, LZ4-compressed (issue #40). The set is one
-- JSON document (0016) of up to PLUGIN_SET_MAX_BYTES, rewritten whole by
-- every registration; writing a thousand tools' schemas (about 1 MB) to
-- the write-ahead log and then to the database file was a quarter of a
-- registration's CPU. `tools_lz4` holds the same document packed (its
-- length as four little-endian bytes, then an LZ4 block); a row written
-- before it keeps its document in `tools`, which a new write empties.

ALTER TABLE session_plugins ADD COLUMN tools_lz4 BLOB;
