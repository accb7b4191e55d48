-- The server alone, today's schema (migrations 0001-0007) and statements: 400,000 open waits
-- over 40,000 subjects (10 per subject, one per subject and type, as route_bench's 100,000 over
-- 10,000), each with a job of its own. groups.sql closes them in order, so a run can close at
-- most 400,000 (at 14,000 events/s, about 28 s); run this again before each run. See
-- BENCHMARKS.md, "the ninth pass", for the commands.
SET search_path = pb;
INSERT INTO jobs (id, started_at, start_seq, runtime, shadow, sandboxed)
SELECT 'j' || g, 0, 0, 'x', FALSE, FALSE FROM generate_series(0, 399999) g;
INSERT INTO waits (name, job_id, source, subject, types, timeout_ms, since, after_seq,
                   created_at, deadline)
SELECT 'w' || g, 'j' || g, 'ci', 'repo/s#' || (g % 40000), '["t' || (g / 40000) || '"]', 1000,
       'now', 0, 0, 999999999
FROM generate_series(0, 399999) g ORDER BY g;
CREATE SEQUENCE grp;
VACUUM ANALYZE;
