-- The SQLite schema's 0006 on PostgreSQL: a wait's look-back is marked done once it ran (or the
-- wait closed), so that a restart, or the sweeper of any edge, runs the look-back of a wait
-- whose registering edge crashed between committing it and looking back. Waits written before
-- this migration start unmarked when open (the first start looks back for them, healing what
-- an earlier crash left); the partial index holds only the waits still to look back.
ALTER TABLE waits ADD COLUMN looked_back BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE waits SET looked_back = TRUE WHERE state <> 'open';
CREATE INDEX waits_to_look_back ON waits (seq) WHERE NOT looked_back;
