-- The events table loses its primary key on `seq`. Every event was written into four indexes;
-- the one on `seq` alone served a single statement, the sweeper's read of the events left
-- unrouted, which now finds them by source and sequence (`events_source_seq`, which look-back
-- reads already). The sequence still gives each event a number of its own. Routing marks an
-- event routed by its sequence number in `unrouted`, whose key it stays.
ALTER TABLE unrouted ADD COLUMN source TEXT COLLATE "C";
UPDATE unrouted u SET source = e.source FROM events e WHERE e.seq = u.seq;
-- A mark whose event is gone (none is expected: retention deletes both at once) has nothing
-- left to route.
DELETE FROM unrouted WHERE source IS NULL;
ALTER TABLE unrouted ALTER COLUMN source SET NOT NULL;
ALTER TABLE events DROP CONSTRAINT events_pkey;
