-- The server alone, today's schema (migrations 0001-0007) and statements: 400,000 open waits
-- over 40,000 subjects (10 per subject, one per subject and type, as route_bench's 100,000 over
-- 10,000), each with a job of its own, numbered in order (groups.sql reaches wait `wN` as
-- sequence number N + 1). groups.sql closes them in order, so a run can close at most 400,000
-- (at 14,000 events/s, about 28 s); run this again before each run. See BENCHMARKS.md, "the
-- ninth pass", for the commands.
\set waits 400000
\set subjects 40000
\ir setup.sql
CREATE SEQUENCE pb.grp;
