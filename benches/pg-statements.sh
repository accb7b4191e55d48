#!/bin/bash
# The PostgreSQL server's work per routed event, by build: for each route_bench binary given,
# resets pg_stat_statements, runs `route_bench postgres URL 2 10000 IN_FLIGHT` (IN_FLIGHT from
# the environment, 64 if unset), and prints the events per second with the server's execution
# and planning time (µs), WAL records and bytes, and buffers touched per event, summed over the
# statements of the timed part (those run fewer than 5,000 times: the seeding runs each of its
# statements 110,000 times). Planning time is counted when the server was started with
# `-c pg_stat_statements.track_planning=on`.
#
# The server must load the extension (`-c shared_preload_libraries=pg_stat_statements` when
# started, then `CREATE EXTENSION pg_stat_statements`).
#
#   benches/pg-statements.sh URL path/to/route_bench [more builds...]
set -euo pipefail
url=$1
shift
for bench in "$@"; do
    psql -qAt "$url" -c 'SELECT pg_stat_statements_reset()' >/dev/null
    out=$("$bench" postgres "$url" 2 10000 "${IN_FLIGHT:-64}")
    rate=$(printf '%s\n' "$out" | head -1 | sed 's/.*subjects: //; s/,.*//')
    psql -qAt "$url" -c "SELECT '$bench', '$rate', \
        round(sum(total_exec_time)::numeric * 100 / 1000, 1) AS exec_us, \
        round(sum(total_plan_time)::numeric * 100 / 1000, 1) AS plan_us, \
        round(sum(wal_records) / 10000.0, 1) AS wal_records, \
        round(sum(wal_bytes) / 10000) AS wal_bytes, \
        round(sum(shared_blks_hit + shared_blks_read) / 10000.0, 1) AS buffers, \
        round(sum(calls) / 10000.0, 2) AS statements \
        FROM pg_stat_statements WHERE calls < 5000 AND query NOT LIKE 'CREATE%' \
        AND query NOT LIKE '%DROP%' AND query NOT LIKE '%sqlx%'"
done
