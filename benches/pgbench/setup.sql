-- The pgbench scripts' schema: the runtime's tables (runtime/migrations/postgres/) in schema
-- `pb`, with 100,000 open waits over 10,000 subjects and their jobs, as route_bench seeds them.
-- Run after creating the schema and applying the migrations into it (see BENCHMARKS.md).
-- Other sizes: psql's variables `waits` and `subjects` (`-v waits=…`, or `\set` before `\ir`).
\if :{?waits}
\else
\set waits 100000
\endif
\if :{?subjects}
\else
\set subjects 10000
\endif
SET search_path = pb;
INSERT INTO jobs (id, started_at, start_seq, runtime, shadow, sandboxed)
SELECT 'j' || g, 0, 0, 'x', FALSE, FALSE FROM generate_series(0, :waits - 1) g;
INSERT INTO waits (name, job_id, source, subject, types, timeout_ms, since, after_seq,
                   created_at, deadline)
SELECT 'w' || g, 'j' || g, 'ci', 'repo/s#' || (g % :subjects), '["t' || (g / :subjects) || '"]',
       1000, 'now', 0, 0, 999999999
FROM generate_series(0, :waits - 1) g ORDER BY g;
CREATE SEQUENCE evn;
VACUUM ANALYZE;
