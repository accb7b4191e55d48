-- One group of G events as an edge handles it today (decision 0010): the receipt statement
-- (events, their unrouted marks and event.received records; a transaction of its own), the
-- candidate read, and the routing transaction (lock the waits and jobs, read the ledger, one
-- statement of writes). The statements are the runtime's (store/postgres.rs), with the arrays
-- built by generate_series instead of bound: pgbench plans each execution, where the runtime
-- keeps one generic plan per connection. Unlike the runtime, an edge retains about three
-- groups for each one it routes (BENCHMARKS.md); here each group is retained once. Change G
-- below for other group sizes.
\set G 56
SELECT nextval('pb.grp') AS g \gset
WITH k AS (SELECT i, (:g::bigint * :G::int + i) % 400000 AS w FROM generate_series(0, :G::int - 1) i),
 e AS (INSERT INTO pb.events (source, event_id, type, action, subject, text, attributes, received_at)
  SELECT 'ci', 'e' || :g::bigint || '.' || i, 't' || (w / 40000), 'opened', 'repo/s#' || (w % 40000), '', '{"n":"1"}', 1
  FROM k ORDER BY 1, 2 ON CONFLICT (source, event_id) DO NOTHING RETURNING source, event_id, seq, type, subject),
 u AS (INSERT INTO pb.unrouted (seq, source, received_at) SELECT seq, source, 1 FROM e),
 r AS (INSERT INTO pb.audit (at, action, data) SELECT 1, 'event.received',
  json_build_object('source', source, 'id', event_id, 'type', type, 'action', 'opened', 'subject', subject)::text FROM e)
SELECT array_agg(seq ORDER BY seq) AS seqs FROM e \gset
SELECT w.* FROM unnest(ARRAY(SELECT 'ci' FROM generate_series(0, :G::int - 1) i),
  ARRAY(SELECT 'repo/s#' || ((:g::bigint * :G::int + i) % 400000 % 40000) FROM generate_series(0, :G::int - 1) i),
  ARRAY(SELECT 't' || ((:g::bigint * :G::int + i) % 400000 / 40000) FROM generate_series(0, :G::int - 1) i)) AS k(ks, kj, kt)
  CROSS JOIN LATERAL (SELECT seq, name, job_id, source, subject, types, filter, timeout_ms, since, after_seq,
  created_at, deadline, state, event_source, event_id, reason, event_data FROM pb.waits
  WHERE state = 'open' AND source = k.ks AND subject = k.kj AND (types IS NULL OR strpos(types, k.kt) > 0) OFFSET 0) AS w
UNION ALL SELECT seq, name, job_id, source, subject, types, filter, timeout_ms, since, after_seq,
  created_at, deadline, state, event_source, event_id, reason, event_data FROM pb.waits
  WHERE state = 'open' AND subject IS NULL AND source = ANY(ARRAY['ci']) AND (types IS NULL);
BEGIN;
WITH w AS (SELECT seq, state FROM pb.waits WHERE seq = ANY(ARRAY(SELECT (:g::bigint * :G::int + i) % 400000 + 1 FROM generate_series(0, :G::int - 1) i)) ORDER BY seq FOR UPDATE),
 j AS (SELECT id FROM pb.jobs WHERE id = ANY(ARRAY(SELECT 'j' || ((:g::bigint * :G::int + i) % 400000) FROM generate_series(0, :G::int - 1) i)) AND (SELECT count(*) FROM w) >= 0 ORDER BY id FOR NO KEY UPDATE)
SELECT ARRAY(SELECT seq FROM w ORDER BY seq) AS seqs2, ARRAY(SELECT state FROM w ORDER BY seq) AS states, (SELECT count(*) FROM j) AS jobs;
SELECT k.n FROM unnest(ARRAY(SELECT 'j' || ((:g::bigint * :G::int + i) % 400000) FROM generate_series(0, :G::int - 1) i),
  ARRAY(SELECT 'ci' FROM generate_series(0, :G::int - 1) i), ARRAY(SELECT 'e' || :g::bigint || '.' || i FROM generate_series(0, :G::int - 1) i))
  WITH ORDINALITY AS k(j, s, e, n) CROSS JOIN LATERAL (SELECT 1 FROM pb.job_events WHERE job_id = k.j AND event_source = k.s AND event_id = k.e LIMIT 1) AS l;
WITH k AS (SELECT i, (:g::bigint * :G::int + i) % 400000 AS w FROM generate_series(0, :G::int - 1) i),
 l AS (INSERT INTO pb.job_events (job_id, event_source, event_id, wait_seq)
  SELECT 'j' || w, 'ci', 'e' || :g::bigint || '.' || i, w + 1 FROM k ORDER BY i ON CONFLICT DO NOTHING RETURNING 1),
 c AS (UPDATE pb.waits SET state = 'matched', event_source = 'ci', event_id = 'e' || :g::bigint || '.' || (pb.waits.seq - 1 - :g::bigint * :G::int % 400000),
  reason = NULL, closed_at = 2, event_data = '{"source":"ci","id":"e","type":"t1","action":"opened","subject":"repo/s#1","text":"","attributes":{"n":"1"}}'
  FROM k WHERE pb.waits.seq = k.w + 1 AND pb.waits.state = (SELECT 'open') RETURNING 1),
 a AS (INSERT INTO pb.audit (at, action, data) SELECT 2, 'event.match',
  json_build_object('job', 'j' || w, 'wait', 'w' || w, 'source', 'ci', 'id', 'e' || :g::bigint || '.' || i)::text FROM k ORDER BY i RETURNING 1),
 o AS (UPDATE pb.jobs SET outside_started = TRUE WHERE id = ANY(ARRAY(SELECT 'j' || w FROM k)) AND NOT outside_started RETURNING 1),
 r AS (DELETE FROM pb.unrouted WHERE ctid = ANY(ARRAY(SELECT ctid FROM pb.unrouted WHERE seq = ANY(:seqs::bigint[]))) RETURNING 1)
SELECT (SELECT count(*) FROM l), (SELECT count(*) FROM c), (SELECT count(*) FROM a) + (SELECT count(*) FROM o) + (SELECT count(*) FROM r);
COMMIT;
