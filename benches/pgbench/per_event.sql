-- One event as the runtime routed it before decision 0010: a receive transaction, the
-- candidates read, a route transaction with one claim (the wait update keeps the wait open so
-- the index stays at full size).
\set s random(0, 9999)
BEGIN;
SELECT nextval('pb.evn') AS n \gset
INSERT INTO pb.events (source, event_id, type, action, subject, text, attributes, received_at, routed)
  SELECT 'ci', 'e' || :n, 't1', '', 'repo/s#' || :s, '', '{}', 1, FALSE
  WHERE NOT EXISTS (SELECT 1 FROM pb.events WHERE source = 'ci' AND event_id = 'e' || :n)
  ON CONFLICT DO NOTHING RETURNING seq;
INSERT INTO pb.audit (at, action, data) VALUES (1, 'event.received', '{"source":"ci","id":"x","type":"t1","action":"","subject":"repo/s#1"}');
COMMIT;
SELECT seq, name, job_id, source, subject, types, filter FROM pb.waits
  WHERE state = 'open' AND source = 'ci' AND (subject = 'repo/s#' || :s OR subject IS NULL) ORDER BY seq;
BEGIN;
INSERT INTO pb.job_events (job_id, event_source, event_id, wait_seq) VALUES ('j' || :s, 'ci', 'e' || :n, :s) ON CONFLICT DO NOTHING;
UPDATE pb.waits SET state = 'open', event_source = 'ci', event_id = 'e' || :n, closed_at = 1 WHERE seq = :s + 1 AND state = 'open';
INSERT INTO pb.audit (at, action, data) VALUES (1, 'wait.matched', '{"source":"ci","id":"x","type":"t1","action":"","subject":"repo/s#1"}');
UPDATE pb.jobs SET outside_started = FALSE WHERE id = 'j' || :s AND NOT outside_started;
UPDATE pb.events SET routed = TRUE WHERE source = 'ci' AND event_id = 'e' || :n AND NOT routed;
COMMIT;
