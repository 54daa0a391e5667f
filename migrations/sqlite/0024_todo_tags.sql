-- The todo tools take seed 003's contracts (issue #36): `createTodo` takes
-- comma-separated `tags` and `filterTodos` shows the todos carrying one.
-- A todo's tags, as a JSON array of strings in the order given (each at
-- most 16 characters, at most 5: domain::todos); todos from before have
-- none.
ALTER TABLE todos ADD COLUMN tags TEXT NOT NULL DEFAULT '[]';
