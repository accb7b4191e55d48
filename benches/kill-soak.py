#!/usr/bin/env python3
"""A load-and-kill soak of the live `ozcheck serve` (issue 35's acceptance), written from the
documents alone (SPEC.md, docs/serve.md, docs/deployment.md), not from the runtime's code.

It builds nothing: give it an `ozcheck` binary built with the `runtime` feature. It starts one
edge on an SQLite file, or N edges on one PostgreSQL server it starts itself (initdb and pg_ctl
in a temporary directory, as the `postgres` user when run as root), and drives them at once with

- signed deliveries of a GitHub source and of a generic JSON source; some redelivered under the
  same delivery id (to any edge), some GitHub bodies replayed byte for byte under new delivery
  ids (the same signed body: one event, docs/serve.md "Deliveries");
- jobs and their `wait_for_event` registrations, each retried by the client after an error, a
  503 or a timeout, to any edge, as docs/serve.md says a client may;
- kill -9 of a random edge at random moments, each restarted at once under the same name and
  port, and (PostgreSQL) one outage of the server of about 10 s.

Senders retry a delivery that got no 2xx, as webhook senders do. When the load ends, every edge
is running and the store is quiet (nothing left unrouted, no open wait unmarked by its
look-back), the harness checks, from the store's tables and from the HTTP API:

1. every acknowledged (2xx) delivery is stored exactly once, and every 2xx answer for it names
   that one event (a replay of a GitHub body under new ids included);
2. every stored event fired the routine once (one `fires` row for `rt.r.<trigger>.<event id>`),
   and nothing else fired;
3. no event was given to two waits of one job, and no wait was given two events;
4. no wait is `open` while a matching event of its source, subject and types, not yet given to
   another wait of its job, is stored (E3, E15);
5. every wait whose registration was acknowledged exists, and the API's answer for it
   (`GET /jobs/{job}/waits/{wait}`) agrees with the store; `GET /waits` lists the open ones;
6. no well-formed, signed request got a 4xx other than the documented answers to retries.

It prints a summary and writes every violation with the rows that show it to
`violations.json` in its work directory (kept when anything failed, or with `--keep`), and
exits 1 on any violation (2 when the harness itself could not run). Times in the summary:
for each kill, how long the restarted edge took to answer its first delivery with a 2xx while
the others were under load.

    python3 benches/kill-soak.py --bin target/release/ozcheck --store sqlite --kills 24
    python3 benches/kill-soak.py --bin target/release/ozcheck --store pg --edges 3 --kills 24

docs/soak.md says more. The load is random from `--seed`; the interleaving of threads and
kills with the edges' work is not, so a seed reproduces the load, not the exact schedule.
"""

import argparse
import hashlib
import hmac
import http.client
import json
import os
import random
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

SECRET = "soak-secret"
ROUTINE = "r"
CONFIG = """\
sources:
  - {name: gh, kind: github, secret: %(secret)s}
  - {name: ci, kind: json, secret: %(secret)s}
routines:
  - name: %(routine)s
    triggers:
      - {name: gh, event: {source: gh}}
      - {name: ci, event: {source: ci}}
    limits: {max_fires_per_hour: 1000000}
"""
SEP = "\x1f"


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(port, method, path, body=None, headers=None, timeout=10.0):
    """(status, parsed JSON or text); status None when no answer came (refused, reset, timeout)."""
    try:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
        conn.request(method, path, body, headers or {})
        resp = conn.getresponse()
        raw = resp.read()
        conn.close()
    except (OSError, http.client.HTTPException) as e:
        return None, repr(e)
    try:
        return resp.status, json.loads(raw)
    except ValueError:
        return resp.status, raw.decode("utf-8", "replace")


# ---------------------------------------------------------------------------------------------
# PostgreSQL and the edges


class Postgres:
    """A server of its own in `dir`, as the `postgres` user when run as root."""

    def __init__(self, workdir, edges):
        bins = sorted(d for d in os.listdir("/usr/lib/postgresql") if d.isdigit())
        if not bins:
            raise SystemExit("kill-soak: no PostgreSQL server binaries (/usr/lib/postgresql/N/bin)")
        self.bin = f"/usr/lib/postgresql/{bins[-1]}/bin"
        self.dir = workdir
        self.port = free_port()
        self.max_conn = 16 * edges + 40
        self.url = f"postgres://postgres@127.0.0.1:{self.port}/postgres"
        os.chmod(workdir, 0o777)
        self._as_pg([f"{self.bin}/initdb", "-D", f"{workdir}/pgdata", "-A", "trust"])

    def _as_pg(self, argv):
        cmd = " ".join(f"'{a}'" for a in argv)
        if os.getuid() == 0:
            argv = ["su", "postgres", "-s", "/bin/sh", "-c", cmd]
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def start(self):
        opts = (f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 "
                f"-c max_connections={self.max_conn}")
        self._as_pg([f"{self.bin}/pg_ctl", "-D", f"{self.dir}/pgdata", "-l",
                     f"{self.dir}/pg.log", "-o", opts, "-w", "start"])

    def stop(self, mode="immediate"):
        try:
            self._as_pg([f"{self.bin}/pg_ctl", "-D", f"{self.dir}/pgdata", "-m", mode,
                         "-w", "stop"])
        except subprocess.CalledProcessError:
            pass

    def query(self, sql):
        out = subprocess.run(["psql", "-X", "-q", "-At", "-F", SEP, "-P", "null=\\N",
                              "-v", "ON_ERROR_STOP=1", self.url, "-c", sql],
                             check=True, capture_output=True, text=True).stdout
        return [tuple(None if v == "\\N" else v for v in line.split(SEP))
                for line in out.splitlines() if line]


class Sqlite:
    def __init__(self, path):
        self.path = path

    def query(self, sql):
        db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, timeout=30)
        try:
            return [tuple(None if v is None else str(v) for v in row)
                    for row in db.execute(sql).fetchall()]
        finally:
            db.close()


class Edge:
    def __init__(self, binary, name, db, config, workdir, multi):
        self.name, self.port = name, free_port()
        self.argv = [binary, "serve", "--db", db, "--listen", f"127.0.0.1:{self.port}",
                     "--config", config] + (["--edge", name] if multi else [])
        self.logpath = os.path.join(workdir, f"{name}.log")
        self.proc = None
        self.lock = threading.Lock()
        self.exits = []  # (when, code) of exits the harness did not cause

    def start(self):
        with open(self.logpath, "a") as out:
            out.write(f"--- start at {time.time():.3f}\n")
            out.flush()
            self.proc = subprocess.Popen(self.argv, stdout=out, stderr=out,
                                         stdin=subprocess.DEVNULL)

    def kill9(self):
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def ready(self, limit=60.0):
        end = time.time() + limit
        while time.time() < end:
            status, _ = request(self.port, "GET", "/readyz", timeout=2)
            if status == 200:
                return True
            time.sleep(0.05)
        return False


# ---------------------------------------------------------------------------------------------
# The plan: events, deliveries, jobs, waits (all from the seed)


def sign(body):
    return "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()


class Plan:
    def __init__(self, rng, args):
        self.subjects = [f"soak/r{k}#{n}" for k in range(args.subjects // 20 + 1)
                         for n in range(20)][:args.subjects]
        self.events = []  # {kind, key, body, ids: [delivery ids], subject, type}
        sends = []  # (event index, delivery id)
        for i in range(args.deliveries):
            subject = rng.choice(self.subjects)
            repo, number = subject.split("#")
            if rng.random() < 0.5:
                body = json.dumps({
                    "action": "completed", "repository": {"full_name": repo},
                    "check_suite": {"id": i, "conclusion": rng.choice(["failure", "success"]),
                                    "head_sha": f"{i:040x}",
                                    "pull_requests": [{"number": int(number)}]}},
                    sort_keys=True).encode()
                ev = {"kind": "gh", "ids": [f"gh-{i}"], "body": body, "subject": subject,
                      "type": "check_suite"}
                if rng.random() < args.replay_share:
                    ev["ids"] += [f"gh-{i}-replay-{n}" for n in range(rng.randint(1, 4))]
            else:
                kind = rng.choice(["build", "deploy"])
                body = json.dumps({"id": f"ci-{i}", "type": kind, "action": "done",
                                   "subject": subject, "text": f"run {i}",
                                   "attributes": {"n": i}}, sort_keys=True).encode()
                ev = {"kind": "ci", "ids": [f"ci-{i}"], "body": body, "subject": subject,
                      "type": kind}
            self.events.append(ev)
            for did in ev["ids"]:
                sends.append((i, did))
            if rng.random() < args.redeliver_share:
                for _ in range(rng.randint(1, 2)):
                    sends.append((i, rng.choice(ev["ids"])))
        # Jobs of five waits each; about one job in five has two waits with the same matching
        # arguments (an event goes to the older one only, E3/E14).
        self.waits = []  # {job, wait, args}
        jobs = max(1, args.waits // 5)
        self.jobs = [f"j{n}" for n in range(jobs)]
        for n in range(args.waits):
            job = self.jobs[n % jobs]
            same = [w for w in self.waits if w["job"] == job]
            if same and rng.random() < 0.2:
                wargs = dict(same[-1]["args"])
            else:
                source = rng.choice(["gh", "ci"])
                # Some waits end while the load runs, so that deadlines fire across kills, the
                # outage and the sweeper lease changing hands.
                timeout = f"{rng.randint(15, 60)}s" if rng.random() < args.short_share else "1h"
                wargs = {"source": source, "timeout": timeout}
                if rng.random() < 0.95:
                    wargs["subject"] = rng.choice(self.subjects)
                types = rng.choice([None, ["check_suite"]] if source == "gh"
                                   else [None, ["build"], ["build", "deploy"], ["deploy"]])
                if types:
                    wargs["types"] = types
            self.waits.append({"job": job, "wait": f"w{n}", "args": wargs})
        tasks = [("deliver", i, did) for i, did in sends] + \
                [("register", n, None) for n in range(len(self.waits))]
        rng.shuffle(tasks)
        self.tasks = tasks


# ---------------------------------------------------------------------------------------------
# The load


class Soak:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.plan = Plan(self.rng, args)
        self.lock = threading.Lock()
        self.answers = {}  # (event index) -> [(delivery id, status, body)]
        self.acked_at = {}  # event index -> when its first 2xx came (ms since the epoch)
        self.registered = {}  # wait index -> (status, body) of the 2xx
        self.odd = []  # answers no well-formed request should get
        self.restarts = []  # {edge, at, first_2xx_s, outage}
        self.probes = []  # extra events the restart probes delivered: index in plan.events
        self.done = 0
        self.outage = threading.Event()
        self.outage_window = (0.0, 0.0)
        self.t0 = time.time()
        self.stop = threading.Event()
        self.work = tempfile.mkdtemp(prefix="kill-soak-")
        cfg = os.path.join(self.work, "config.yaml")
        with open(cfg, "w") as f:
            f.write(CONFIG % {"secret": SECRET, "routine": ROUTINE})
        self.pg = None
        if args.store == "pg":
            self.pg = Postgres(self.work, args.edges)
            self.pg.start()
            db, self.store = self.pg.url, self.pg
        else:
            args.edges = 1
            db = os.path.join(self.work, "soak.db")
            self.store = Sqlite(db)
        self.edges = [Edge(args.bin, f"e{n}", db, cfg, self.work, args.store == "pg")
                      for n in range(args.edges)]

    def note(self, kind, **what):
        with self.lock:
            self.odd.append(dict(kind=kind, **what))

    def edge_port(self, rng):
        return rng.choice(self.edges).port

    # A delivery, sent until an edge answers 2xx (or the attempts run out).
    def deliver(self, rng, i, did, port=None, attempts=None):
        ev = self.plan.events[i]
        headers = {"content-type": "application/json",
                   "x-hub-signature-256": sign(ev["body"])}
        if ev["kind"] == "gh":
            headers |= {"x-github-event": ev["type"], "x-github-delivery": did}
        for attempt in range(attempts or self.args.attempts):
            p = port or self.edge_port(rng)
            status, body = request(p, "POST", f"/sources/{ev['kind']}/deliveries", ev["body"],
                                   headers, timeout=self.args.client_timeout)
            with self.lock:
                self.answers.setdefault(i, []).append((did, status, body))
                if status is not None and 200 <= status < 300:
                    self.acked_at.setdefault(i, time.time() * 1000)
            if status is not None and 200 <= status < 300:
                return True
            if status is not None and status not in (500, 503):
                self.note("delivery-answer", event=i, delivery=did, status=status, body=body)
                return False
            time.sleep(min(2.0, 0.05 * 2 ** min(attempt, 5)) * rng.random())
        return False

    def start_job(self, rng, job):
        unknown = False
        for attempt in range(self.args.attempts):
            status, body = request(self.edge_port(rng), "POST", f"/jobs/{job}", b"{}",
                                   {"content-type": "application/json"})
            if status == 201 or (status == 409 and unknown):
                return
            if status is not None and status not in (500, 503):
                self.note("job-answer", job=job, status=status, body=body)
                return
            unknown = True
            time.sleep(0.05 * (attempt + 1))
        self.note("job-not-started", job=job)

    def register(self, rng, n):
        w = self.plan.waits[n]
        path = f"/jobs/{w['job']}/waits/{w['wait']}"
        body = json.dumps(w["args"]).encode()
        unknown = False
        for attempt in range(self.args.attempts):
            status, answer = request(self.edge_port(rng), "POST", path, body,
                                     {"content-type": "application/json"},
                                     timeout=self.args.client_timeout)
            if status is not None and 200 <= status < 300:
                with self.lock:
                    self.registered[n] = (status, answer, attempt)
                return
            if status is not None and status not in (500, 503):
                # A 409 after a try whose outcome the client never learnt is what issue 35 found
                # (`wait-exists` for a retry); docs/serve.md promises the wait instead.
                self.note("registration-answer", job=w["job"], wait=w["wait"], status=status,
                          body=answer, after_unanswered_try=unknown)
                return
            unknown = True
            time.sleep(min(2.0, 0.05 * 2 ** min(attempt, 5)) * rng.random())
        self.note("registration-gave-up", job=w["job"], wait=w["wait"])

    def worker(self, wid, queue, t0, total):
        rng = random.Random(self.args.seed * 1000 + wid)
        while True:
            with self.lock:
                if not queue:
                    return
                k, task = queue.pop()
            # Pace the load over --duration so that the kills fall all along it.
            delay = t0 + self.args.duration * k / total - time.time()
            if delay > 0:
                time.sleep(delay)
            if task[0] == "deliver":
                self.deliver(rng, task[1], task[2])
            else:
                self.register(rng, task[1])
            with self.lock:
                self.done += 1

    # The restarted edge's first 2xx to a delivery of its own (an event of the JSON source that
    # no wait asks for: subject `probe`).
    def probe(self, edge, started):
        with self.lock:
            i = len(self.plan.events)
            body = json.dumps({"id": f"probe-{i}", "type": "probe", "action": "probe",
                               "subject": "probe", "text": "", "attributes": {}}).encode()
            self.plan.events.append({"kind": "ci", "ids": [f"probe-{i}"], "body": body,
                                     "subject": "probe", "type": "probe"})
        rng = random.Random(i)
        ok = False
        end = time.time() + 120
        while not ok and time.time() < end:
            ok = self.deliver(rng, i, f"probe-{i}", port=edge.port, attempts=1)
            if not ok:
                time.sleep(0.01)
        took = time.time() - started if ok else None
        with self.lock:
            self.restarts.append({"edge": edge.name, "at": started, "first_2xx_s": took})

    def killer(self, t0):
        # Kills at random moments of --duration (not of the requests done: those stall while
        # the database is down, and kills during the outage are part of the attack).
        rng = random.Random(self.args.seed + 7)
        marks = sorted(rng.uniform(0.03, 0.92) * self.args.duration
                       for _ in range(self.args.kills))
        probes = []
        for mark in marks:
            while time.time() - t0 < mark and not self.stop.is_set():
                time.sleep(0.01)
            if self.stop.is_set():
                break
            edge = rng.choice(self.edges)
            with edge.lock:
                edge.kill9()
                started = time.time()
                edge.start()
            t = threading.Thread(target=self.probe, args=(edge, started))
            t.start()
            probes.append(t)
        for t in probes:
            t.join()

    def pg_outage(self, t0):
        time.sleep(max(0.0, t0 + 0.45 * self.args.duration - time.time()))
        log(f"PostgreSQL stopped for {self.args.outage} s")
        self.outage.set()
        start = time.time()
        self.pg.stop("immediate")
        time.sleep(self.args.outage)
        self.pg.start()
        self.outage.clear()
        self.outage_window = (start, time.time())
        log("PostgreSQL started again")

    # An edge that exited without being killed by the harness (during the outage, say) is
    # restarted, and the exit is reported.
    def supervisor(self):
        while not self.stop.is_set():
            for edge in self.edges:
                with edge.lock:
                    code = edge.proc.poll()
                    if code is not None:
                        edge.exits.append((time.time(), code))
                        self.note("edge-exited", edge=edge.name, code=code,
                                  at=time.time() - self.t0,
                                  during_outage=self.outage.is_set())
                        time.sleep(0.5)
                        edge.start()
            time.sleep(0.2)

    def run(self):
        a = self.args
        log(f"work directory {self.work}; {a.store}, {a.edges} edge(s); seed {a.seed}; "
            f"{len(self.plan.events)} events in {sum(1 for t in self.plan.tasks if t[0] == 'deliver')} "
            f"deliveries, {len(self.plan.jobs)} jobs, {len(self.plan.waits)} waits, "
            f"{a.in_flight} in flight, {a.kills} kill -9"
            + (f", PostgreSQL out {a.outage} s" if self.pg else ""))
        for edge in self.edges:
            edge.start()
        for edge in self.edges:
            if not edge.ready():
                raise SystemExit(f"kill-soak: edge {edge.name} not ready; see {edge.logpath}")
        sup = threading.Thread(target=self.supervisor, daemon=True)
        sup.start()
        # Jobs first, so that every event of the load arrives after every job started (E3's
        # boundary is then not in question).
        rng = random.Random(a.seed + 1)
        for job in self.plan.jobs:
            self.start_job(rng, job)
        total = len(self.plan.tasks)
        queue = list(reversed(list(enumerate(self.plan.tasks))))
        t0 = self.t0 = time.time()
        killer = threading.Thread(target=self.killer, args=(t0,))
        killer.start()
        outage = None
        if self.pg and a.outage > 0:
            outage = threading.Thread(target=self.pg_outage, args=(t0,))
            outage.start()
        workers = [threading.Thread(target=self.worker, args=(n, queue, t0, total))
                   for n in range(a.in_flight)]
        for w in workers:
            w.start()
        last = 0
        while any(w.is_alive() for w in workers):
            time.sleep(1)
            if time.time() - last > 15:
                last = time.time()
                log(f"{self.done}/{total} requests done, {len(self.restarts)} restarts")
        load_s = time.time() - t0
        killer.join()
        if outage:
            outage.join()
        self.stop.set()
        sup.join()
        log(f"load done in {load_s:.0f} s; waiting for the edges to be quiet")
        for edge in self.edges:
            if edge.proc.poll() is not None:
                edge.start()
            edge.ready()
        quiet_s = self.quiet()
        if self.args.inject:
            self.inject(self.args.inject)
        log(f"quiet after {quiet_s:.0f} s; checking")
        violations = self.check()
        self.summary(load_s, quiet_s, violations)
        return violations

    def quiet(self):
        """Waits until nothing is left to route, every open wait has looked back and no open
        wait's deadline falls within the next 30 s or passed less than 20 s ago (so that no
        deadline fires while the checks read the store and then the API), and one sweeper
        lease term (10 s) more; at most 150 s."""
        t0 = time.time()
        if self.pg:
            pending = ("SELECT (SELECT count(*) FROM unrouted), "
                       "(SELECT count(*) FROM waits WHERE state = 'open' AND NOT looked_back)")
        else:
            pending = ("SELECT (SELECT count(*) FROM events WHERE NOT routed), "
                       "(SELECT count(*) FROM waits WHERE state = 'open' AND NOT looked_back)")
        while time.time() - t0 < 150:
            now = int(time.time() * 1000)
            due = (f"SELECT count(*) FROM waits WHERE state = 'open' "
                   f"AND deadline BETWEEN {now - 20000} AND {now + 30000}")
            try:
                left = self.store.query(pending)[0]
                if self.store.query(due)[0] != ("0",):
                    left = left + ("deadlines due",)
            except (subprocess.CalledProcessError, sqlite3.Error):
                left = ("?", "?")
            if left == ("0", "0") and time.time() - t0 >= 12:
                break
            time.sleep(1)
        self.left = left
        return time.time() - t0

    def inject(self, what):
        """Breaks the store on purpose, with every edge stopped, to show that the checks see it:
        `reopen` puts a matched wait back to `open` (marked looked back, its claim deleted), so
        it is open beside its event; `unfire` deletes one fire."""
        for edge in self.edges:
            with edge.lock:
                edge.kill9()
        if what == "reopen":
            sql = ["DELETE FROM job_events WHERE wait_seq = (SELECT min(seq) FROM waits "
                   "WHERE state = 'matched')",
                   "UPDATE waits SET state = 'open', event_source = NULL, event_id = NULL, "
                   "closed_at = NULL WHERE seq = (SELECT min(seq) FROM waits "
                   "WHERE state = 'matched')"]
        else:
            sql = ["DELETE FROM fires WHERE seq = (SELECT min(seq) FROM fires)"]
        if self.pg:
            for stmt in sql:
                self.pg.query(stmt)
        else:
            db = sqlite3.connect(self.store.path)
            with db:
                for stmt in sql:
                    db.execute(stmt)
            db.close()
        log(f"injected `{what}` into the store")
        for edge in self.edges:
            edge.start()
        for edge in self.edges:
            edge.ready()

    # -----------------------------------------------------------------------------------------
    # The checks

    def check(self):
        v = []
        plan = self.plan
        if self.left != ("0", "0"):
            v.append({"check": "quiet", "unrouted, open waits not looked back": self.left})
        events = self.store.query("SELECT source, event_id, subject, type, received_at, seq "
                                  "FROM events")
        stored = {(r[0], r[1]): r for r in events}
        fires = {}
        for (job,) in self.store.query("SELECT job_id FROM fires"):
            fires[job] = fires.get(job, 0) + 1
        owner = {}
        for i, ev in enumerate(plan.events):
            for did in ev["ids"]:
                owner[(ev["kind"], did)] = i
        for key in stored:
            if key not in owner:
                v.append({"check": "unknown stored event", "row": stored[key]})
        # What the edge remembers of each GitHub delivery: the digest of its signed body.
        identities = {r[0] for r in self.store.query(
            "SELECT identity FROM deliveries WHERE source = 'gh'")}
        acked_events = 0
        for i, ev in enumerate(plan.events):
            answers = self.answers.get(i, [])
            ok = [a for a in answers if a[1] is not None and 200 <= a[1] < 300]
            rows = [stored[(ev["kind"], d)] for d in ev["ids"] if (ev["kind"], d) in stored]
            if ok:
                acked_events += 1
            if len(rows) > 1:
                v.append({"check": "one signed body stored as several events", "event": i,
                          "rows": rows})
            if ok and not rows:
                v.append({"check": "acknowledged delivery not stored", "event": i,
                          "answers": ok[:3]})
            named = {a[2].get("event", {}).get("id") for a in ok if isinstance(a[2], dict)}
            if ok and (len(named) != 1 or (rows and rows[0][1] not in named)):
                v.append({"check": "2xx answers name another event than the stored one",
                          "event": i, "named": sorted(map(str, named)),
                          "stored": [r[1] for r in rows]})
            fired = sum(fires.get(f"rt.{ROUTINE}.{ev['kind']}.{d}", 0) for d in ev["ids"])
            if rows and fired != 1:
                v.append({"check": "stored event fired the routine other than once",
                          "event": i, "fires": fired, "rows": rows})
            if not rows and fired:
                v.append({"check": "a fire for an event not stored", "event": i})
            if ok and ev["kind"] == "gh":
                ident = "sha256:" + hashlib.sha256(ev["body"]).hexdigest()
                if ident not in identities:
                    v.append({"check": "GitHub body's identity not remembered", "event": i})
        self.acked_events = acked_events
        if sum(fires.values()) != len(stored):
            v.append({"check": "fires other than one per stored event",
                      "fires": sum(fires.values()), "events": len(stored)})
        # Waits and claims.
        waits = self.store.query("SELECT seq, job_id, name, source, subject, types, state, "
                                 "event_source, event_id, looked_back, deadline, closed_at FROM waits")
        claims = self.store.query("SELECT job_id, event_source, event_id, wait_seq "
                                  "FROM job_events")
        by_seq = {r[0]: r for r in waits}
        per_wait = {}
        claimed = set()
        for job, src, eid, wseq in claims:
            per_wait.setdefault(wseq, []).append((src, eid))
            claimed.add((job, src, eid))
        for wseq, evs in per_wait.items():
            w = by_seq.get(wseq)
            if len(evs) > 1:
                v.append({"check": "a wait given two events", "wait": w, "claims": evs})
            if w is None or w[6] != "matched" or (w[7], w[8]) not in evs:
                v.append({"check": "a claim without its matched wait", "wait": w,
                          "claims": evs})
        per_job_event = {}
        for w in waits:
            if w[6] == "matched":
                per_job_event.setdefault((w[1], w[7], w[8]), []).append(w)
                if w[0] not in per_wait:
                    v.append({"check": "a matched wait without its claim", "wait": w})
        for key, ws in per_job_event.items():
            if len(ws) > 1:
                v.append({"check": "one event given to two waits of one job", "rows": ws})
        # Open beside a matching event not given to its job.
        by_source_subject = {}
        by_source = {}
        for r in events:
            by_source_subject.setdefault((r[0], r[2]), []).append(r)
            by_source.setdefault(r[0], []).append(r)
        jobs_started = {r[0]: int(r[1]) for r in
                        self.store.query("SELECT id, started_at FROM jobs")}
        open_beside = 0
        for w in waits:
            if w[6] != "open":
                continue
            seq, job, name, source, subject, types = w[:6]
            types = json.loads(types) if types else None
            cands = by_source_subject.get((source, subject), []) if subject is not None \
                else by_source.get(source, [])
            beside = [e for e in cands
                      if (types is None or e[3] in types)
                      and int(e[4]) >= jobs_started.get(job, 0)
                      and (job, e[0], e[1]) not in claimed]
            if beside:
                open_beside += 1
                if open_beside <= 20:
                    v.append({"check": "a wait open beside a matching unclaimed event",
                              "wait": w, "events": sorted(beside, key=lambda e: int(e[5]))[:3]})
        if open_beside > 20:
            v.append({"check": "a wait open beside a matching unclaimed event",
                      "more": open_beside - 20})
        self.open_beside = open_beside
        now = int(time.time() * 1000)
        overdue = [w for w in waits if w[6] == "open" and int(w[10]) < now - 20000]
        if overdue:
            v.append({"check": "a wait open 20 s past its deadline", "count": len(overdue),
                      "rows": overdue[:5]})
        # Timed out although an event it matches, which its job never got, was acknowledged
        # (committed and routed) more than 2 s before its deadline: the routing or the
        # look-back missed it.
        timed_out_beside = 0
        self.late = []
        for w in waits:
            if w[6] != "timed_out":
                continue
            seq, job, name, source, subject, types = w[:6]
            deadline = int(w[10])
            if w[11] is not None:
                self.late.append((int(w[11]) - deadline) / 1000)
            types = json.loads(types) if types else None
            cands = by_source_subject.get((source, subject), []) if subject is not None \
                else by_source.get(source, [])
            beside = [e for e in cands
                      if (types is None or e[3] in types)
                      and (job, e[0], e[1]) not in claimed
                      and self.acked_at.get(owner.get((e[0], e[1])), 1e18) < deadline - 2000]
            if beside:
                timed_out_beside += 1
                if timed_out_beside <= 20:
                    v.append({"check": "a wait timed out beside an event acknowledged before "
                              "its deadline", "wait": w, "events": beside[:3],
                              "acked_at": [self.acked_at.get(owner.get((e[0], e[1])))
                                           for e in beside[:3]]})
        self.timed_out_beside = timed_out_beside
        # The registrations acknowledged, through the API.
        rng = random.Random(self.args.seed + 3)
        named = {(r[1], r[2]): r for r in waits}
        api_mismatch = 0
        for n in sorted(self.registered):
            w = plan.waits[n]
            row = named.get((w["job"], w["wait"]))
            if row is None:
                v.append({"check": "an acknowledged registration not stored", "wait": w})
                continue
            status, body = request(self.edge_port(rng), "GET",
                                   f"/jobs/{w['job']}/waits/{w['wait']}")
            state = body.get("state") if isinstance(body, dict) else None
            if status != 200 or state != row[6]:
                api_mismatch += 1
                if api_mismatch <= 10:
                    v.append({"check": "the API's wait differs from the store's",
                              "status": status, "api": body, "row": row})
        status, body = request(self.edges[0].port, "GET", "/waits")
        listed = len(body.get("waits", [])) if isinstance(body, dict) else None
        open_rows = sum(1 for r in waits if r[6] == "open")
        if listed != open_rows:
            v.append({"check": "GET /waits lists other than the open waits", "listed": listed,
                      "open": open_rows})
        for odd in self.odd:
            if odd["kind"] != "edge-exited":
                v.append({"check": "an answer no well-formed request should get", **odd})
        self.states = {}
        for r in waits:
            self.states[r[6]] = self.states.get(r[6], 0) + 1
        self.stored_events = len(stored)
        self.fires_total = sum(fires.values())
        return v

    def summary(self, load_s, quiet_s, violations):
        a = self.args
        sends = sum(len(x) for x in self.answers.values())
        statuses = {}
        for answers in self.answers.values():
            for _, status, _ in answers:
                statuses[status] = statuses.get(status, 0) + 1
        # A restart whose wait for its first 2xx overlapped the outage is not counted.
        lo, hi = self.outage_window
        for r in self.restarts:
            end = r["at"] + (r["first_2xx_s"] or 120)
            r["outage"] = r["at"] < hi and end > lo
        times = sorted(r["first_2xx_s"] for r in self.restarts
                       if r["first_2xx_s"] is not None and not r["outage"])
        during = [r["first_2xx_s"] for r in self.restarts if r["outage"]]
        exits = [o for o in self.odd if o["kind"] == "edge-exited"]
        print()
        print(f"kill-soak: {a.store}, {a.edges} edge(s), seed {a.seed}, load {load_s:.0f} s, "
              f"quiet after {quiet_s:.0f} s")
        print(f"  delivery attempts {sends} ({', '.join(f'{k}: {n}' for k, n in sorted(statuses.items(), key=str))}); "
              f"events acknowledged {self.acked_events}/{len(self.plan.events)}; "
              f"stored {self.stored_events}; fires {self.fires_total}")
        print(f"  waits registered {len(self.registered)}/{len(self.plan.waits)}; "
              f"states {self.states}; open beside a matching event {self.open_beside}; "
              f"timed out beside one {self.timed_out_beside}")
        if self.late:
            late = sorted(self.late)
            print(f"  deadlines fired late by (s): median {late[len(late) // 2]:.1f}, "
                  f"max {late[-1]:.1f} over {len(late)} timed-out waits")
        retried = sum(1 for _, _, attempt in self.registered.values() if attempt > 0)
        print(f"  registrations acknowledged only after a retry: {retried}")
        print(f"  kill -9: {len(self.restarts)}; edge exits not caused by the harness: "
              f"{len(exits)}")
        for x in exits:
            print(f"    {x['edge']} exited with {x['code']} at {x['at']:.1f} s of the load"
                  f"{' (database down)' if x['during_outage'] else ''}; its log: "
                  f"{os.path.join(self.work, x['edge'] + '.log')}")
        if times:
            print(f"  restart to first 2xx delivery (s): min {times[0]:.2f}, median "
                  f"{times[len(times) // 2]:.2f}, max {times[-1]:.2f} over {len(times)} "
                  f"restarts (outside the outage)")
        if during:
            print(f"  restarts overlapping the outage, first 2xx (s): "
                  f"{', '.join(f'{t:.2f}' if t is not None else 'none' for t in during)}")
        never = [r for r in self.restarts if r["first_2xx_s"] is None]
        if never:
            print(f"  restarts with no 2xx within 120 s: {len(never)}")
        with open(os.path.join(self.work, "violations.json"), "w") as f:
            json.dump({"seed": a.seed, "args": vars(a), "violations": violations,
                       "restarts": self.restarts, "exits": exits}, f, indent=1, default=str)
        if violations:
            print(f"  VIOLATIONS: {len(violations)}")
            for x in violations[:30]:
                print("   ", json.dumps(x, default=str)[:600])
        else:
            print("  no violation")

    def close(self, keep):
        for edge in self.edges:
            if edge.proc and edge.proc.poll() is None:
                edge.kill9()
        if self.pg:
            self.pg.stop("fast")
        if keep:
            print(f"  kept {self.work} (logs, store, violations.json)")
        else:
            shutil.rmtree(self.work, ignore_errors=True)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bin", required=True, help="an ozcheck binary built with `runtime`")
    p.add_argument("--store", choices=["sqlite", "pg"], default="sqlite")
    p.add_argument("--edges", type=int, default=3, help="edges on PostgreSQL (SQLite: one)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--deliveries", type=int, default=2000, help="distinct events")
    p.add_argument("--waits", type=int, default=1500, help="waits, five per job")
    p.add_argument("--subjects", type=int, default=200)
    p.add_argument("--short-share", type=float, default=0.2,
                   help="share of waits with a 15-60 s timeout (the others: 1 h)")
    p.add_argument("--redeliver-share", type=float, default=0.2)
    p.add_argument("--replay-share", type=float, default=0.1,
                   help="share of GitHub bodies also sent under new delivery ids")
    p.add_argument("--in-flight", type=int, default=96)
    p.add_argument("--kills", type=int, default=24)
    p.add_argument("--outage", type=float, default=10.0, help="PostgreSQL stopped (s); 0: none")
    p.add_argument("--duration", type=float, default=120.0,
                   help="seconds over which the load is spread (it may take longer)")
    p.add_argument("--attempts", type=int, default=40, help="a client's tries per request")
    p.add_argument("--client-timeout", type=float, default=10.0,
                   help="seconds a client waits for an answer before it sends the request again "
                        "(short: retries race the first try, still running, on another edge)")
    p.add_argument("--keep", action="store_true", help="keep the work directory")
    p.add_argument("--inject", choices=["reopen", "unfire"],
                   help="break the store after the load, to see the checks fail")
    args = p.parse_args()
    if not os.access(args.bin, os.X_OK):
        print(f"kill-soak: {args.bin} is not an executable", file=sys.stderr)
        return 2
    soak = Soak(args)
    violations = None
    try:
        violations = soak.run()
    finally:
        exited = any(o["kind"] == "edge-exited" for o in soak.odd)
        soak.close(args.keep or violations is None or bool(violations) or exited)
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())
