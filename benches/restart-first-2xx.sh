#!/bin/sh
# Time from an edge's restart to its first 2xx while the other edges are under load (issue 35,
# item 2). Three `ozcheck serve` edges on one PostgreSQL database; IN_FLIGHT senders deliver
# events of a JSON source to all three for LOAD seconds; then edge b is killed (SIGKILL) and
# started again at once, under the same name, while the load goes on (its share going to the
# other two), and the script prints how long the new process took to answer a delivery with a
# 2xx, then a registration (POST /jobs/…), and how many events were left unrouted at the restart.
#
#   cargo build --features runtime && sh benches/restart-first-2xx.sh [LOAD] [IN_FLIGHT]
#
# LOAD defaults to 20 s and IN_FLIGHT to 64. OZCHECK names the binary (default
# target/debug/ozcheck). It starts its own PostgreSQL server (15's binaries; as the `postgres`
# user when run as root) in a temporary directory and removes it at the end.
set -eu
LOAD=${1:-20}
IN_FLIGHT=${2:-64}
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${OZCHECK:-$here/target/debug/ozcheck}
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | tail -1)
dir=$(mktemp -d)
chmod 777 "$dir"
as_pg() { if [ "$(id -u)" = 0 ]; then su postgres -s /bin/sh -c "$*"; else sh -c "$*"; fi; }
pids=""
cleanup() {
    for p in $pids; do kill -9 "$p" 2>/dev/null || true; done
    as_pg "$pgbin/pg_ctl" -D "$dir/data" stop -m immediate >/dev/null 2>&1 || true
    rm -rf "$dir"
}
trap cleanup EXIT
as_pg "$pgbin/initdb" -D "$dir/data" -A trust >/dev/null
as_pg "$pgbin/pg_ctl" -D "$dir/data" -l "$dir/pg.log" \
    -o "'-p 55441 -k $dir -c listen_addresses=127.0.0.1 -c max_connections=200'" -w start >/dev/null
db="postgres://postgres@127.0.0.1:55441/postgres"
printf 'sources:\n  - {name: ci, kind: json}\n' > "$dir/config.yaml"

edge() { # name port
    "$bin" serve --db "$db" --edge "$1" --listen "127.0.0.1:$2" --config "$dir/config.yaml" \
        >"$dir/$1.log" 2>&1 &
    echo $!
}
ready() { # port
    until curl -sf "http://127.0.0.1:$1/readyz" >/dev/null 2>&1; do sleep 0.1; done
}
a=$(edge a 18091); pids="$pids $a"; ready 18091
b=$(edge b 18092); pids="$pids $b"; ready 18092
c=$(edge c 18093); pids="$pids $c"; ready 18093

cat > "$dir/load.py" <<'PY'
import http.client, json, sys, threading, time, itertools
ports, in_flight, seconds = [18091, 18092, 18093], int(sys.argv[1]), float(sys.argv[2])
counter = itertools.count()
end = time.time() + seconds
ok = [0]
def sender(n):
    while time.time() < end:
        i = next(counter)
        port = ports[i % 3]
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            body = json.dumps({"id": f"e{i}", "type": "t", "subject": f"s{i % 500}"})
            c.request("POST", "/sources/ci/deliveries", body, {"content-type": "application/json"})
            if c.getresponse().status < 300:
                ok[0] += 1
            c.close()
        except OSError:
            time.sleep(0.01)
threads = [threading.Thread(target=sender, args=(n,)) for n in range(in_flight)]
for t in threads: t.start()
for t in threads: t.join()
print(f"load: {ok[0]} deliveries acknowledged in {seconds:.0f} s")
PY
python3 "$dir/load.py" "$IN_FLIGHT" "$LOAD" &
load=$!
sleep $((LOAD / 2))
kill -9 "$b"
unrouted=$(psql -At "$db" -c "SELECT count(*) FROM unrouted")
start=$(date +%s%N)
b=$(edge b 18092); pids="$pids $b"
# The status of a request to the restarted edge ("000" while nothing listens).
status() { curl -s -o /dev/null -w '%{http_code}' -X POST "$@" || true; }
until case $(status -d "{\"id\": \"probe-$start\", \"type\": \"t\", \"subject\": \"p\"}" \
    http://127.0.0.1:18092/sources/ci/deliveries) in 2??) true ;; *) false ;; esac
do sleep 0.01; done
delivered=$(date +%s%N)
until [ "$(status "http://127.0.0.1:18092/jobs/probe-$start")" = 201 ]; do sleep 0.01; done
registered=$(date +%s%N)
echo "unrouted events at the restart: $unrouted"
echo "restart to first 2xx delivery: $(( (delivered - start) / 1000000 )) ms"
echo "restart to first job registered: $(( (registered - start) / 1000000 )) ms"
wait "$load"
