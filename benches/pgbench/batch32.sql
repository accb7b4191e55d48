-- The same rows for 32 events at once, one statement per kind of row (decision 0010).
\set s random(0, 9960)
BEGIN;
SELECT nextval('pb.evn') AS n \gset
INSERT INTO pb.events (source, event_id, type, action, subject, text, attributes, received_at, routed)
  SELECT 'ci', 'e' || :n || '.' || g, 't1', '', 'repo/s#' || (:s + g), '', '{}', 1, FALSE
  FROM generate_series(1, 32) g ON CONFLICT DO NOTHING RETURNING seq;
INSERT INTO pb.audit (at, action, data) SELECT 1, 'event.received', '{"source":"ci","id":"x","type":"t1","action":"","subject":"repo/s#1"}' FROM generate_series(1, 32) g;
COMMIT;
SELECT seq, name, job_id, source, subject, types, filter FROM pb.waits
  WHERE state = 'open' AND source = 'ci'
  AND subject = ANY (ARRAY(SELECT 'repo/s#' || (:s + g) FROM generate_series(1, 32) g)) ORDER BY seq;
BEGIN;
SELECT seq, state FROM pb.waits WHERE seq = ANY (ARRAY(SELECT :s + g FROM generate_series(1, 32) g)) ORDER BY seq FOR UPDATE;
INSERT INTO pb.job_events (job_id, event_source, event_id, wait_seq)
  SELECT 'j' || (:s + g), 'ci', 'e' || :n || '.' || g, :s + g FROM generate_series(1, 32) g
  ON CONFLICT DO NOTHING RETURNING job_id;
UPDATE pb.waits SET state = 'open', event_source = 'ci', event_id = 'e' || :n, closed_at = 1
  WHERE seq = ANY (ARRAY(SELECT :s + g FROM generate_series(1, 32) g)) AND state = 'open';
INSERT INTO pb.audit (at, action, data) SELECT 1, 'wait.matched', '{"source":"ci","id":"x","type":"t1","action":"","subject":"repo/s#1"}' FROM generate_series(1, 32) g;
UPDATE pb.jobs SET outside_started = FALSE
  WHERE id = ANY (ARRAY(SELECT 'j' || (:s + g) FROM generate_series(1, 32) g)) AND NOT outside_started;
UPDATE pb.events SET routed = TRUE WHERE source = 'ci'
  AND event_id = ANY (ARRAY(SELECT 'e' || :n || '.' || g FROM generate_series(1, 32) g)) AND NOT routed;
COMMIT;
