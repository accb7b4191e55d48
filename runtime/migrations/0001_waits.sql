-- The reference runtime's durable state. Timestamps are milliseconds since the Unix epoch (UTC).
-- The SQL is kept portable to PostgreSQL except for AUTOINCREMENT (BIGSERIAL there).

CREATE TABLE jobs (
    id              TEXT PRIMARY KEY,
    started_at      INTEGER NOT NULL,
    start_seq       INTEGER NOT NULL,
    deadline        INTEGER,
    runtime         TEXT NOT NULL,
    shadow          INTEGER NOT NULL,
    sandboxed       INTEGER NOT NULL,
    outside_started INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE waits (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    name         TEXT NOT NULL UNIQUE,
    job_id       TEXT NOT NULL,
    source       TEXT NOT NULL,
    subject      TEXT,                 -- NULL: any subject
    types        TEXT,                 -- JSON array; NULL: any type
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
    closed_at    INTEGER
);
CREATE INDEX waits_open_route ON waits (source, subject) WHERE state = 'open';
CREATE INDEX waits_open_deadline ON waits (deadline) WHERE state = 'open';
CREATE INDEX waits_job ON waits (job_id);

-- Retained events (one day), in arrival order; identity is (source, event_id).
CREATE TABLE events (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    source      TEXT NOT NULL,
    event_id    TEXT NOT NULL,
    type        TEXT NOT NULL,
    action      TEXT NOT NULL,
    subject     TEXT NOT NULL,
    text        TEXT NOT NULL,
    attributes  TEXT NOT NULL,
    received_at INTEGER NOT NULL,
    UNIQUE (source, event_id)
);
CREATE INDEX events_received ON events (received_at);

-- An event goes to one wait of a job, and never counts again for that job.
CREATE TABLE job_events (
    job_id       TEXT NOT NULL,
    event_source TEXT NOT NULL,
    event_id     TEXT NOT NULL,
    wait_seq     INTEGER NOT NULL,
    PRIMARY KEY (job_id, event_source, event_id)
);

-- Trigger fires, once per deterministic job id.
CREATE TABLE fires (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id  TEXT NOT NULL UNIQUE,
    kind    TEXT NOT NULL,
    name    TEXT NOT NULL,
    trigger TEXT NOT NULL,
    state   TEXT NOT NULL CHECK (state IN ('started', 'refused')),
    reason  TEXT,
    at      INTEGER NOT NULL
);
CREATE INDEX fires_window ON fires (kind, name, at);

CREATE TABLE audit (
    seq    INTEGER PRIMARY KEY AUTOINCREMENT,
    at     INTEGER NOT NULL,
    action TEXT NOT NULL,
    data   TEXT NOT NULL
);

CREATE TABLE refusals (
    source TEXT NOT NULL,
    kind   TEXT NOT NULL,
    minute INTEGER NOT NULL,
    count  INTEGER NOT NULL,
    PRIMARY KEY (source, kind, minute)
);

CREATE TABLE flags (
    key TEXT PRIMARY KEY
);
