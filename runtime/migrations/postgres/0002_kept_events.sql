-- The SQLite schema's 0004 on PostgreSQL: waits are named within their job; a matched wait and
-- a fire keep the event they got (`event_data`, JSON), so answers and step outputs outlive the
-- one-day retention of the events table; flow steps that are not waits.

ALTER TABLE waits DROP CONSTRAINT waits_name_key;
ALTER TABLE waits ADD CONSTRAINT waits_job_name UNIQUE (job_id, name);
ALTER TABLE waits ADD COLUMN event_data TEXT;
CREATE INDEX waits_name ON waits (name);

ALTER TABLE fires ADD COLUMN event_data TEXT;

-- Approvals (pending until answered) and steps skipped by `when`.
CREATE TABLE flow_steps (
    seq        BIGSERIAL PRIMARY KEY,
    job_id     TEXT NOT NULL,
    step_id    TEXT NOT NULL,
    state      TEXT NOT NULL CHECK (state IN ('pending', 'decided', 'skipped')),
    output     TEXT,
    details    TEXT,
    at         BIGINT NOT NULL,
    decided_at BIGINT,
    UNIQUE (job_id, step_id)
);
