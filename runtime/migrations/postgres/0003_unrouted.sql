-- The events still to route move to a table of their own. Marking an event routed was an
-- update of its `routed` column, and a column in an index's predicate makes PostgreSQL write a
-- new version of the row and of every index entry: five index writes per event, on the busiest
-- path of every edge. Now receiving an event adds a narrow row here and routing it deletes the
-- row; the events table is written once per event.
DROP INDEX events_unrouted;
CREATE TABLE unrouted (
    seq         BIGINT PRIMARY KEY,   -- events.seq
    received_at BIGINT NOT NULL       -- events.received_at, for the sweeper and retention
);
INSERT INTO unrouted (seq, received_at) SELECT seq, received_at FROM events WHERE NOT routed;
ALTER TABLE events DROP COLUMN routed;
-- The unique (job_id, name) index answers every lookup by job already.
DROP INDEX waits_job;
