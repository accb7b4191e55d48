-- Safe outputs of fires (E10): applied when the fire ends, or at once for `apply: now`.
CREATE TABLE outputs (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id     TEXT NOT NULL,
    name       TEXT NOT NULL,
    apply_now  INTEGER NOT NULL,
    called_at  INTEGER NOT NULL,
    applied_at INTEGER
);
CREATE INDEX outputs_job ON outputs (job_id);

ALTER TABLE jobs ADD COLUMN ended_at INTEGER;
