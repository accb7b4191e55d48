-- What still needs an event keeps it; waits are named within their job; flow steps that are
-- not waits.

-- A wait's name is unique within its job, not across jobs. SQLite cannot drop the column's
-- UNIQUE, so the table is rebuilt (with its sequences, so `seq` stays a wait's id). A matched
-- wait keeps the event it got (`event_data`, JSON), so its answer and step output outlive the
-- one-day retention of the events table.
CREATE TABLE waits_by_job (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    name         TEXT NOT NULL,
    job_id       TEXT NOT NULL,
    source       TEXT NOT NULL,
    subject      TEXT,
    types        TEXT,
    filter       TEXT,
    timeout_ms   INTEGER NOT NULL,
    since        TEXT NOT NULL,
    after_seq    INTEGER NOT NULL,
    created_at   INTEGER NOT NULL,
    deadline     INTEGER NOT NULL,
    state        TEXT NOT NULL DEFAULT 'open'
                 CHECK (state IN ('open', 'matched', 'timed_out', 'refused')),
    event_source TEXT,
    event_id     TEXT,
    reason       TEXT,
    closed_at    INTEGER,
    event_data   TEXT,
    UNIQUE (job_id, name)
);
INSERT INTO waits_by_job (seq, name, job_id, source, subject, types, filter, timeout_ms, since,
                          after_seq, created_at, deadline, state, event_source, event_id, reason,
                          closed_at)
    SELECT seq, name, job_id, source, subject, types, filter, timeout_ms, since, after_seq,
           created_at, deadline, state, event_source, event_id, reason, closed_at
    FROM waits;
DROP TABLE waits;
ALTER TABLE waits_by_job RENAME TO waits;
CREATE INDEX waits_open_route ON waits (source, subject) WHERE state = 'open';
CREATE INDEX waits_open_deadline ON waits (deadline) WHERE state = 'open';
CREATE INDEX waits_name ON waits (name);

-- A fire keeps the event it fired on: its trigger data, and a flow's trigger.event while the
-- flow runs.
ALTER TABLE fires ADD COLUMN event_data TEXT;

-- Flow steps that are not waits: approvals (pending until answered) and steps skipped by `when`.
CREATE TABLE flow_steps (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id     TEXT NOT NULL,
    step_id    TEXT NOT NULL,
    state      TEXT NOT NULL CHECK (state IN ('pending', 'decided', 'skipped')),
    output     TEXT,
    details    TEXT,
    at         INTEGER NOT NULL,
    decided_at INTEGER,
    UNIQUE (job_id, step_id)
);
