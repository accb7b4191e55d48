-- The pgbench scripts' schema: the runtime's tables (runtime/migrations/postgres/) in schema
-- `pb`, with 100,000 open waits over 10,000 subjects and their jobs, as route_bench seeds them.
-- Run after creating the schema and applying the migrations into it (see BENCHMARKS.md).
SET search_path = pb;
INSERT INTO jobs (id, started_at, start_seq, runtime, shadow, sandboxed)
SELECT 'j' || g, 0, 0, 'x', FALSE, FALSE FROM generate_series(0, 99999) g;
INSERT INTO waits (name, job_id, source, subject, types, timeout_ms, since, after_seq,
                   created_at, deadline)
SELECT 'w' || g, 'j' || g, 'ci', 'repo/s#' || (g % 10000), '["t' || (g / 10000) || '"]', 1000,
       'now', 0, 0, 999999999
FROM generate_series(0, 99999) g;
CREATE SEQUENCE evn;
VACUUM ANALYZE;
