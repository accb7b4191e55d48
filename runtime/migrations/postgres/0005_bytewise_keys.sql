-- Text keys compare byte by byte (collation "C"), as SQLite's and the runtime's own do. Under
-- the database's collation (any but C or POSIX, C.UTF-8 included), every comparison in a
-- B-tree on a text key went through the C library's strcoll: about a twentieth of the server's
-- time on routing's path (the ledger, the events' identities, the jobs, the waits' routes).
-- Equality is the same under both; only the order of the keys in the indexes changes, and the
-- indexes on these columns are built again.
ALTER TABLE jobs ALTER COLUMN id TYPE TEXT COLLATE "C";
ALTER TABLE waits
    ALTER COLUMN name TYPE TEXT COLLATE "C",
    ALTER COLUMN job_id TYPE TEXT COLLATE "C",
    ALTER COLUMN source TYPE TEXT COLLATE "C",
    ALTER COLUMN subject TYPE TEXT COLLATE "C",
    ALTER COLUMN event_source TYPE TEXT COLLATE "C",
    ALTER COLUMN event_id TYPE TEXT COLLATE "C";
ALTER TABLE events
    ALTER COLUMN source TYPE TEXT COLLATE "C",
    ALTER COLUMN event_id TYPE TEXT COLLATE "C";
ALTER TABLE job_events
    ALTER COLUMN job_id TYPE TEXT COLLATE "C",
    ALTER COLUMN event_source TYPE TEXT COLLATE "C",
    ALTER COLUMN event_id TYPE TEXT COLLATE "C";
ALTER TABLE fires
    ALTER COLUMN job_id TYPE TEXT COLLATE "C",
    ALTER COLUMN kind TYPE TEXT COLLATE "C",
    ALTER COLUMN name TYPE TEXT COLLATE "C";
ALTER TABLE fire_locks
    ALTER COLUMN kind TYPE TEXT COLLATE "C",
    ALTER COLUMN name TYPE TEXT COLLATE "C";
ALTER TABLE refusals
    ALTER COLUMN source TYPE TEXT COLLATE "C",
    ALTER COLUMN kind TYPE TEXT COLLATE "C";
ALTER TABLE flags ALTER COLUMN key TYPE TEXT COLLATE "C";
ALTER TABLE outputs ALTER COLUMN job_id TYPE TEXT COLLATE "C";
ALTER TABLE flow_steps
    ALTER COLUMN job_id TYPE TEXT COLLATE "C",
    ALTER COLUMN step_id TYPE TEXT COLLATE "C";
ALTER TABLE leases ALTER COLUMN name TYPE TEXT COLLATE "C";

-- A job is updated once on routing's path (marked outside-started when a wait of it first gets
-- an event), and once more when it ends. With room left on its page, the new version stays
-- there and the key index is not written again (a heap-only update). Pages written from now on
-- keep half their room for that: a job row is narrow, and with a fifth kept free a third of
-- the jobs started together and reached together (`tests/plans_pg.rs`) still moved.
ALTER TABLE jobs SET (fillfactor = 50);
