-- The reference runtime's durable state on PostgreSQL, shared by every edge on the database.
-- The same rows as the SQLite schema (migrations 0001-0003 there): timestamps are milliseconds
-- since the Unix epoch (UTC), JSON is kept as text, and every statement the runtime runs is
-- portable between the two (store/sql.rs).

CREATE TABLE jobs (
    id              TEXT PRIMARY KEY,
    started_at      BIGINT NOT NULL,
    start_seq       BIGINT NOT NULL,
    deadline        BIGINT,
    runtime         TEXT NOT NULL,
    shadow          BOOLEAN NOT NULL,
    sandboxed       BOOLEAN NOT NULL,
    outside_started BOOLEAN NOT NULL DEFAULT FALSE,
    ended_at        BIGINT
);

CREATE TABLE waits (
    seq          BIGSERIAL PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE,
    job_id       TEXT NOT NULL,
    source       TEXT NOT NULL,
    subject      TEXT,                 -- NULL: any subject
    types        TEXT,                 -- JSON array; NULL: any type
    filter       TEXT,
    timeout_ms   BIGINT NOT NULL,
    since        TEXT NOT NULL,
    after_seq    BIGINT NOT NULL,
    created_at   BIGINT NOT NULL,
    deadline     BIGINT NOT NULL,
    state        TEXT NOT NULL DEFAULT 'open'
                 CHECK (state IN ('open', 'matched', 'timed_out', 'refused')),
    event_source TEXT,
    event_id     TEXT,
    reason       TEXT,
    closed_at    BIGINT
);
-- The index every edge routes through: open waits on a subject, and on any subject.
CREATE INDEX waits_open_route ON waits (source, subject, seq) WHERE state = 'open';
CREATE INDEX waits_open_any ON waits (source, seq) WHERE state = 'open' AND subject IS NULL;
CREATE INDEX waits_open_deadline ON waits (deadline, seq) WHERE state = 'open';
CREATE INDEX waits_job ON waits (job_id);

-- Retained events (one day), in arrival order; identity is (source, event_id). An event is
-- routed once its waits were claimed and its triggers fired.
CREATE TABLE events (
    seq         BIGSERIAL PRIMARY KEY,
    source      TEXT NOT NULL,
    event_id    TEXT NOT NULL,
    type        TEXT NOT NULL,
    action      TEXT NOT NULL,
    subject     TEXT NOT NULL,
    text        TEXT NOT NULL,
    attributes  TEXT NOT NULL,
    received_at BIGINT NOT NULL,
    routed      BOOLEAN NOT NULL DEFAULT FALSE,
    UNIQUE (source, event_id)
);
CREATE INDEX events_received ON events (received_at);
CREATE INDEX events_source_seq ON events (source, seq);
CREATE INDEX events_unrouted ON events (seq) WHERE NOT routed;

-- An event goes to one wait of a job, and never counts again for that job.
CREATE TABLE job_events (
    job_id       TEXT NOT NULL,
    event_source TEXT NOT NULL,
    event_id     TEXT NOT NULL,
    wait_seq     BIGINT NOT NULL,
    PRIMARY KEY (job_id, event_source, event_id)
);

-- Trigger fires, once per deterministic job id.
CREATE TABLE fires (
    seq     BIGSERIAL PRIMARY KEY,
    job_id  TEXT NOT NULL UNIQUE,
    kind    TEXT NOT NULL,
    name    TEXT NOT NULL,
    trigger TEXT NOT NULL,
    state   TEXT NOT NULL CHECK (state IN ('started', 'refused')),
    reason  TEXT,
    at      BIGINT NOT NULL
);
CREATE INDEX fires_window ON fires (kind, name, at);

-- One row per routine (or flow) that recorders lock, so the hourly count they read stays true
-- until they commit (READ COMMITTED would let two edges both see the last fire left).
CREATE TABLE fire_locks (
    kind  TEXT NOT NULL,
    name  TEXT NOT NULL,
    taken BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (kind, name)
);

CREATE TABLE audit (
    seq    BIGSERIAL PRIMARY KEY,
    at     BIGINT NOT NULL,
    action TEXT NOT NULL,
    data   TEXT NOT NULL
);

CREATE TABLE refusals (
    source TEXT NOT NULL,
    kind   TEXT NOT NULL,
    minute BIGINT NOT NULL,
    count  BIGINT NOT NULL,
    PRIMARY KEY (source, kind, minute)
);

CREATE TABLE flags (
    key TEXT PRIMARY KEY
);

-- Safe outputs of fires (E10): applied when the fire ends, or at once for `apply: now`.
CREATE TABLE outputs (
    seq        BIGSERIAL PRIMARY KEY,
    job_id     TEXT NOT NULL,
    name       TEXT NOT NULL,
    apply_now  BOOLEAN NOT NULL,
    called_at  BIGINT NOT NULL,
    applied_at BIGINT
);
CREATE INDEX outputs_job ON outputs (job_id);

-- Work that one edge does for all (firing deadlines, retention, re-routing), by lease.
CREATE TABLE leases (
    name       TEXT PRIMARY KEY,
    holder     TEXT NOT NULL,
    expires_at BIGINT NOT NULL
);
