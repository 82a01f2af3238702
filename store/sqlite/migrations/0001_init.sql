-- changes is the change log: one row per committed change. Its rowid is the global revision
-- (the resourceVersion); AUTOINCREMENT keeps sqlite_sequence as the high-water mark, so a
-- revision is never handed out twice even after compaction deleted the newest rows.
CREATE TABLE changes (
	rev        INTEGER PRIMARY KEY AUTOINCREMENT,
	resource   TEXT    NOT NULL,
	namespace  TEXT    NOT NULL,
	name       TEXT    NOT NULL,
	type       INTEGER NOT NULL, -- 1 added, 2 modified, 3 deleted
	create_rev INTEGER NOT NULL,
	prev_rev   INTEGER NOT NULL, -- revision of the previous state of the key, 0 if none
	value      BLOB,             -- for deletes, the last value
	created_at INTEGER NOT NULL  -- unix nanoseconds, by the store's clock
);

CREATE INDEX changes_key ON changes (resource, namespace, name, rev);

-- objects is the current state: one row per existing key.
CREATE TABLE objects (
	resource   TEXT    NOT NULL,
	namespace  TEXT    NOT NULL,
	name       TEXT    NOT NULL,
	rev        INTEGER NOT NULL,
	create_rev INTEGER NOT NULL,
	value      BLOB,
	PRIMARY KEY (resource, namespace, name)
) WITHOUT ROWID;

-- meta holds the compacted revision ("compacted": changes at or below it may be gone) and the
-- progress of the compaction that reached it ("compact_cursor").
CREATE TABLE meta (
	key   TEXT    PRIMARY KEY,
	value INTEGER NOT NULL
) WITHOUT ROWID;

INSERT INTO meta (key, value) VALUES ('compacted', 0), ('compact_cursor', 0);
