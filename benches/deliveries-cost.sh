#!/bin/sh
# The cost of remembering deliveries (issue 35, item 4): rows and bytes per delivery of the
# `deliveries` table, with its primary key and its index on `first_at`, on PostgreSQL and on
# SQLite, for N GitHub deliveries (identity `sha256:` + 64 hex digits, a 36-character delivery
# id) on one source. The table is created by the runtime's own migration file.
#
#   sh benches/deliveries-cost.sh [N]        (default 100000; PostgreSQL 15 binaries and sqlite3)
#
# As root it runs the server as the `postgres` user, which the server requires.
set -eu
N=${1:-100000}
here=$(cd "$(dirname "$0")/.." && pwd)
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | tail -1)
dir=$(mktemp -d)
trap 'as_pg "$bin/pg_ctl" -D "$dir/data" stop -m immediate >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT
as_pg() { if [ "$(id -u)" = 0 ]; then su postgres -s /bin/sh -c "$*"; else sh -c "$*"; fi; }
chmod 777 "$dir"
as_pg "$bin/initdb" -D "$dir/data" -A trust >/dev/null
as_pg "$bin/pg_ctl" -D "$dir/data" -o "'-p 55439 -k $dir -c listen_addresses='''" -w start >/dev/null
rows="SELECT 'gh', 'sha256:' || encode(sha256(n::text::bytea), 'hex'), \
  md5(n::text)::uuid::text, 1000000 + n FROM generate_series(1, $N) n"
psql -q -h "$dir" -p 55439 -U postgres -d postgres -f "$here/runtime/migrations/postgres/0009_deliveries.sql"
psql -q -h "$dir" -p 55439 -U postgres -d postgres -c "INSERT INTO deliveries $rows" -c "VACUUM ANALYZE deliveries"
psql -h "$dir" -p 55439 -U postgres -d postgres -At -c "SELECT 'PostgreSQL: ' || count(*) || ' rows, ' || \
  pg_total_relation_size('deliveries') || ' bytes, ' || \
  round(pg_total_relation_size('deliveries')::numeric / count(*), 1) || ' bytes per delivery' FROM deliveries"
db="$dir/lite.db"
sqlite3 "$db" < "$here/runtime/migrations/0007_deliveries.sql"
# SQLite has no sha256(): the digest is 64 hex characters of a random blob, of the same size.
sqlite3 "$db" "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < $N) \
  INSERT INTO deliveries SELECT 'gh', 'sha256:' || lower(hex(randomblob(32))), \
  lower(hex(randomblob(16))) || '-abcd', 1000000 + n FROM s; VACUUM;"
size=$(( $(sqlite3 "$db" "PRAGMA page_count") * $(sqlite3 "$db" "PRAGMA page_size") ))
empty=$(mktemp -u); sqlite3 "$empty" < "$here/runtime/migrations/0007_deliveries.sql"
base=$(( $(sqlite3 "$empty" "PRAGMA page_count") * $(sqlite3 "$empty" "PRAGMA page_size") )); rm -f "$empty"
echo "SQLite: $N rows, $((size - base)) bytes, $(( (size - base) / N )) bytes per delivery"
