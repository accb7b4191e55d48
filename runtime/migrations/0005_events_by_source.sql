-- A wait's look-back reads the events of one source after a sequence number. The only index
-- that began with the source was the identity (source, event_id), so every registration read
-- all the source's retained events (a day of them) and sorted them; by (source, seq) it reads
-- only those after its sequence, already in order. PostgreSQL's schema has had this index
-- from its first migration.
CREATE INDEX events_source_seq ON events (source, seq);
