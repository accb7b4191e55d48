#!/bin/bash
# Two schema changes measured on their own (decision 0010, seventh pass), without the runtime:
# in scratch schemas of the database at URL (dropped at the end), 100,000 open waits as the
# routing benchmark registers them, then 1,000 statements of 30 rows each, and for each the
# server's execution time (µs), WAL records and buffers per row (per event looked up, for the
# reads) from pg_stat_statements.
#
#   a  closing waits as today: the state is in the partial indexes' predicate, a new version
#      goes into every index of the row
#   b  the open waits' keys in a table of their own, the waits at fillfactor 70: the close is a
#      heap-only update and one deletion
#   read a / read b  the routing read of the candidates of 30 events, on each layout
#   mark  the `unrouted` mark of 30 events: inserted, then deleted by place
#
# The server must load pg_stat_statements (see pg-statements.sh).
#
#   benches/pg-close-experiment.sh URL
set -euo pipefail
url=$1
q() { psql -qAtX -v ON_ERROR_STOP=1 "$url" "$@"; }
trap 'q -c "DROP SCHEMA IF EXISTS expa, expb CASCADE" >/dev/null 2>&1 || true' EXIT
q >/dev/null <<'SQL'
SET client_min_messages = warning;
DROP SCHEMA IF EXISTS expa, expb CASCADE;
CREATE SCHEMA expa; CREATE SCHEMA expb;
CREATE TABLE expa.waits (seq BIGSERIAL PRIMARY KEY, name TEXT COLLATE "C" NOT NULL,
  job_id TEXT COLLATE "C" NOT NULL, source TEXT COLLATE "C" NOT NULL, subject TEXT COLLATE "C",
  types TEXT, filter TEXT, timeout_ms BIGINT NOT NULL, since TEXT NOT NULL,
  after_seq BIGINT NOT NULL, created_at BIGINT NOT NULL, deadline BIGINT NOT NULL,
  state TEXT NOT NULL DEFAULT 'open', event_source TEXT, event_id TEXT, reason TEXT,
  closed_at BIGINT, event_data TEXT, UNIQUE (job_id, name));
CREATE INDEX ON expa.waits (name);
CREATE INDEX ON expa.waits (source, subject, seq) WHERE state = 'open';
CREATE INDEX ON expa.waits (source, seq) WHERE state = 'open' AND subject IS NULL;
CREATE INDEX ON expa.waits (deadline, seq) WHERE state = 'open';
INSERT INTO expa.waits (name, job_id, source, subject, types, timeout_ms, since, after_seq,
  created_at, deadline)
  SELECT 'w', 'job-' || g, 'ci', 'repo/s#' || (g % 10000), '["t' || (g / 10000) || '"]',
  3600000, 'now', 0, 1, 1000000 + g FROM generate_series(0, 99999) g;
CREATE TABLE expb.waits (LIKE expa.waits INCLUDING DEFAULTS) WITH (fillfactor = 70);
ALTER TABLE expb.waits ADD PRIMARY KEY (seq), ADD UNIQUE (job_id, name);
CREATE INDEX ON expb.waits (name);
INSERT INTO expb.waits SELECT * FROM expa.waits;
CREATE TABLE expb.open_waits (seq BIGINT PRIMARY KEY, source TEXT COLLATE "C" NOT NULL,
  subject TEXT COLLATE "C", types TEXT, deadline BIGINT NOT NULL);
CREATE INDEX ON expb.open_waits (source, subject, seq);
CREATE INDEX ON expb.open_waits (source, seq) WHERE subject IS NULL;
CREATE INDEX ON expb.open_waits (deadline, seq);
INSERT INTO expb.open_waits SELECT seq, source, subject, types, deadline FROM expa.waits;
CREATE TABLE expa.unrouted (seq BIGINT PRIMARY KEY, source TEXT COLLATE "C" NOT NULL,
  received_at BIGINT NOT NULL);
VACUUM ANALYZE expa.waits, expb.waits, expb.open_waits;
SQL
# 30,000 distinct waits in a fixed random order, 30 per statement.
batches() {
    q -c "SELECT setseed(0.7)" -c "SELECT string_agg(seq::text, ',') FROM (SELECT seq,
        (row_number() OVER () - 1) / 30 AS b FROM (SELECT seq FROM expa.waits
        ORDER BY random() LIMIT 30000) r) s GROUP BY b" | tail -n +2
}
measure() { # label, statements on stdin
    q -c 'SELECT pg_stat_statements_reset()' >/dev/null
    q >/dev/null
    q -c "SELECT '$1', round(sum(total_exec_time)::numeric * 1000 / 30000, 1) AS us,
        round(sum(wal_records) / 30000.0, 2) AS wal_records,
        round(sum(shared_blks_hit + shared_blks_read) / 30000.0, 1) AS buffers
        FROM pg_stat_statements WHERE query LIKE '%exp%' AND query NOT LIKE '%reset%'"
}
data="'{\"id\":\"e1\",\"source\":\"ci\",\"type\":\"t1\"}'"
echo "what|µs per row|WAL records per row|buffers per row"
batches | while read -r seqs; do
    echo "UPDATE expa.waits SET state = 'matched', event_source = 'ci', event_id = 'e' || seq,
      closed_at = 5, event_data = $data FROM unnest('{$seqs}'::bigint[]) AS c(s)
      WHERE waits.seq = c.s AND waits.state = (SELECT 'open');"
done | measure "close a"
batches | while read -r seqs; do
    echo "WITH c AS (UPDATE expb.waits SET state = 'matched', event_source = 'ci',
      event_id = 'e' || seq, closed_at = 5, event_data = $data FROM unnest('{$seqs}'::bigint[])
      AS c(s) WHERE waits.seq = c.s AND waits.state = (SELECT 'open') RETURNING waits.seq),
      d AS (DELETE FROM expb.open_waits WHERE seq IN (SELECT seq FROM c)) SELECT 1;"
done | measure "close b"
q -c "SELECT 'heap-only updates', (SELECT n_tup_hot_upd FROM pg_stat_user_tables
    WHERE schemaname = 'expa' AND relname = 'waits'), (SELECT n_tup_hot_upd
    FROM pg_stat_user_tables WHERE schemaname = 'expb' AND relname = 'waits'), ''"
q >/dev/null -c "UPDATE expa.waits SET state = 'open', event_data = NULL" \
    -c "UPDATE expb.waits SET state = 'open', event_data = NULL" \
    -c "INSERT INTO expb.open_waits SELECT seq, source, subject, types, deadline FROM expb.waits
        ON CONFLICT DO NOTHING" -c "VACUUM ANALYZE expa.waits, expb.waits, expb.open_waits"
# The candidates of 30 events (subject and type drawn at random), as the routing read asks.
keys() {
    q -c "SELECT setseed(0.3)" -c "SELECT string_agg('ci', ',') || '|' ||
        string_agg('\"repo/s#' || (random() * 9999)::int || '\"', ',') || '|' ||
        string_agg('\"\\\"t' || (random() * 9)::int || '\\\"\"', ',')
        FROM generate_series(0, 29999) g GROUP BY g / 30" | tail -n +2
}
for layout in a b; do
    keys | while IFS='|' read -r s j t; do
        k="unnest('{$s}'::text[], '{$j}'::text[], '{$t}'::text[]) AS k(ks, kj, kt)"
        # A wait on any subject that takes one of the 30 types (`$1`: its `types` column).
        any() { echo "EXISTS (SELECT 1 FROM unnest('{$t}'::text[]) AS t(kt) WHERE strpos($1, t.kt) > 0)"; }
        if [ "$layout" = a ]; then
            echo "SELECT w.* FROM $k CROSS JOIN LATERAL (SELECT * FROM expa.waits
              WHERE state = 'open' AND source = k.ks AND subject = k.kj
              AND (types IS NULL OR strpos(types, k.kt) > 0) OFFSET 0) AS w UNION ALL
              SELECT * FROM expa.waits WHERE state = 'open' AND subject IS NULL
              AND source = ANY('{$s}') AND (types IS NULL OR $(any types));"
        else
            echo "SELECT w.* FROM $k CROSS JOIN LATERAL (SELECT seq FROM expb.open_waits
              WHERE source = k.ks AND subject = k.kj
              AND (types IS NULL OR strpos(types, k.kt) > 0) OFFSET 0) AS o
              JOIN expb.waits w ON w.seq = o.seq UNION ALL
              SELECT w.* FROM expb.open_waits o JOIN expb.waits w ON w.seq = o.seq
              WHERE o.subject IS NULL AND o.source = ANY('{$s}')
              AND (o.types IS NULL OR $(any o.types));"
        fi
    done | measure "read $layout"
done
for b in $(seq 0 999); do
    echo "INSERT INTO expa.unrouted (seq, source, received_at)
      SELECT g, 'ci', 5 FROM generate_series($((b * 30 + 1)), $((b * 30 + 30))) g;"
    echo "DELETE FROM expa.unrouted WHERE ctid = ANY(ARRAY(SELECT ctid FROM expa.unrouted
      WHERE seq = ANY(ARRAY(SELECT generate_series($((b * 30 + 1)), $((b * 30 + 30)))::bigint))));"
done | measure "mark"
