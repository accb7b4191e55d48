-- Several edges on one database, and routing that survives a crash.

-- An event is retained unrouted and marked routed once its waits were claimed and its triggers
-- fired; a restart or another edge routes what a dead router left. Events retained before this
-- migration were routed by the runtime that received them.
ALTER TABLE events ADD COLUMN routed INTEGER NOT NULL DEFAULT 1;
CREATE INDEX events_unrouted ON events (seq) WHERE NOT routed;

-- Work that one edge does for all (firing deadlines, retention, re-routing), by lease.
CREATE TABLE leases (
    name       TEXT PRIMARY KEY,
    holder     TEXT NOT NULL,
    expires_at INTEGER NOT NULL
);
