-- A wait's look-back is marked done once it ran (or the wait closed). Registering commits the
-- wait and then looks back in later transactions; a crash between them left the wait open
-- beside a matching event it never looked at, and a restart re-armed it without its look-back.
-- Now a restart (and the sweeper) runs the look-back of every open wait not marked.
--
-- Waits written before this migration start unmarked, so the first start after it looks back
-- for every wait still open: that heals the waits an earlier crash left open. Closed waits are
-- marked, so the partial index holds only the waits still to look back.
ALTER TABLE waits ADD COLUMN looked_back BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE waits SET looked_back = TRUE WHERE state <> 'open';
CREATE INDEX waits_to_look_back ON waits (seq) WHERE NOT looked_back;
