-- A session's plugin tools, LZ4-compressed (issue #40; SQLite's 0033):
-- `tools_lz4` holds the JSON document packed (its length as four
-- little-endian bytes, then an LZ4 block); a row written before it keeps
-- its document in `tools`, which a new write empties.

ALTER TABLE session_plugins ADD COLUMN tools_lz4 BYTEA;
