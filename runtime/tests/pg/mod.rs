//! A `PostgreSQL` server for tests, one per test binary: `OZCHECK_TEST_PG` (a URL to a database
//! in which schemas may be created) when set; otherwise the server binaries of the machine
//! (`/usr/lib/postgresql/<version>/bin`, `pg_config --bindir`, or `PATH`) run `initdb` and
//! `pg_ctl` in a temporary directory on a free port, as the `postgres` user when the tests run
//! as root (the server refuses root). A watchdog stops the server and removes its directory when
//! the test process is gone. Each test takes a fresh schema.
//!
//! Without a server the tests say loudly that they were skipped; under `CI=true` that is a
//! failure.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use ozcheck_runtime::store::PostgresStore;

/// A running server (or the one `OZCHECK_TEST_PG` names).
pub struct TestPg {
    /// The URL of a database on it in which tests create schemas.
    pub url: String,
    managed: Option<Managed>,
}

/// A server this harness started.
struct Managed {
    bin: PathBuf,
    dir: PathBuf,
    port: u16,
    as_postgres: bool,
}

/// The binary's server, started at the first call; `None` (after saying so) without one.
pub fn server(test: &str) -> Option<&'static TestPg> {
    static SERVER: OnceLock<Result<TestPg, String>> = OnceLock::new();
    match SERVER.get_or_init(start) {
        Ok(pg) => Some(pg),
        Err(why) => {
            skipped(
                test,
                &format!(
                    "no PostgreSQL server ({why}); install the `postgresql` package or set \
                     OZCHECK_TEST_PG=postgres://…"
                ),
            );
            None
        }
    }
}

/// Says loudly that `test` was skipped and why; under `CI=true` fails it instead.
pub fn skipped(test: &str, why: &str) {
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{test}: not skipped under CI=true: {why}"
    );
    eprintln!("\n*** SKIPPED {test}: {why} ***\n");
}

impl TestPg {
    /// A URL of a new, empty schema on the server.
    pub async fn fresh_url(&self) -> String {
        let schema = PostgresStore::create_schema(&self.url)
            .await
            .expect("create a schema");
        with_schema(&self.url, &schema)
    }

    /// Whether this harness started the server (so a test may stop and start it).
    pub fn is_managed(&self) -> bool {
        self.managed.is_some()
    }

    /// Stops the server at once, as a crash would (only a server this harness started).
    pub fn stop_immediately(&self) {
        let managed = self
            .managed
            .as_ref()
            .expect("a server this harness started");
        managed.pg_ctl(&["stop", "-m", "immediate", "-w"]);
    }

    /// Starts the server again after [`TestPg::stop_immediately`].
    pub fn start_again(&self) {
        let managed = self
            .managed
            .as_ref()
            .expect("a server this harness started");
        managed.start_server().expect("restart the server");
    }
}

/// `url` with libpq's `options=-c search_path=SCHEMA`.
pub fn with_schema(url: &str, schema: &str) -> String {
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}options=-c%20search_path%3D{schema}")
}

fn start() -> Result<TestPg, String> {
    if let Ok(url) = std::env::var("OZCHECK_TEST_PG") {
        return Ok(TestPg { url, managed: None });
    }
    let bin = server_binaries().ok_or("no `initdb` found")?;
    let as_postgres = running_as_root();
    let dir = std::env::temp_dir().join(format!(
        "ozcheck-pg-{}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos())
    ));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let port = free_port()?;
    let managed = Managed {
        bin,
        dir,
        port,
        as_postgres,
    };
    if as_postgres {
        managed.give_to_postgres()?;
    }
    managed.watch();
    managed.run(
        "initdb",
        &[
            "-D",
            &managed.data(),
            "-A",
            "trust",
            "-U",
            "ozcheck",
            "-E",
            "UTF8",
            "--no-sync",
        ],
    )?;
    managed.start_server()?;
    Ok(TestPg {
        url: format!("postgres://ozcheck@127.0.0.1:{port}/postgres"),
        managed: Some(managed),
    })
}

impl Managed {
    fn data(&self) -> String {
        self.dir.join("data").display().to_string()
    }

    fn start_server(&self) -> Result<(), String> {
        // fsync off: these servers are thrown away; commits still reach the WAL before they are
        // acknowledged, so a killed server keeps them.
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300 \
             -c shared_buffers=64MB",
            self.port,
            self.dir.display()
        );
        let log = self.dir.join("server.log").display().to_string();
        self.run(
            "pg_ctl",
            &[
                "-D",
                &self.data(),
                "-l",
                &log,
                "-o",
                &options,
                "-w",
                "start",
            ],
        )
    }

    fn pg_ctl(&self, args: &[&str]) {
        let mut all = vec!["-D".to_owned(), self.data()];
        all.extend(args.iter().map(|a| (*a).to_owned()));
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        self.run("pg_ctl", &all).expect("pg_ctl");
    }

    fn command(&self, program: &str) -> Command {
        let path = self.bin.join(program);
        if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(path);
            c
        } else {
            Command::new(path)
        }
    }

    fn run(&self, program: &str, args: &[&str]) -> Result<(), String> {
        let out = self
            .command(program)
            .args(args)
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("{program}: {e}"))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(format!(
                "{program} failed: {}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ))
        }
    }

    fn give_to_postgres(&self) -> Result<(), String> {
        let id = |flag: &str| -> Result<u32, String> {
            let out = Command::new("id")
                .args([flag, "postgres"])
                .output()
                .map_err(|e| e.to_string())?;
            String::from_utf8_lossy(&out.stdout)
                .trim()
                .parse()
                .map_err(|_| "no `postgres` user to run the server as root".to_owned())
        };
        std::os::unix::fs::chown(&self.dir, Some(id("-u")?), Some(id("-g")?))
            .map_err(|e| format!("chown {}: {e}", self.dir.display()))
    }

    /// Stops the server and removes its directory once this process is gone.
    fn watch(&self) {
        let stop = format!(
            "{} {} -D {} stop -m immediate",
            if self.as_postgres {
                "runuser -u postgres --"
            } else {
                ""
            },
            self.bin.join("pg_ctl").display(),
            self.data()
        );
        let script = format!(
            "while kill -0 {pid} 2>/dev/null; do sleep 1; done; {stop} >/dev/null 2>&1; rm -rf {dir}",
            pid = std::process::id(),
            dir = self.dir.display()
        );
        let detached = Command::new("setsid")
            .args(["sh", "-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
        if detached.is_err() {
            let _ = Command::new("sh")
                .args(["-c", &script])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn();
        }
    }
}

fn running_as_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn free_port() -> Result<u16, String> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    Ok(listener.local_addr().map_err(|e| e.to_string())?.port())
}

/// The directory of `initdb` and `pg_ctl`: Debian's newest versioned directory, then
/// `pg_config --bindir`, then `PATH`.
fn server_binaries() -> Option<PathBuf> {
    let debian = Path::new("/usr/lib/postgresql");
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir(debian)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let version = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    versions.sort();
    if let Some((_, bin)) = versions.pop() {
        return Some(bin);
    }
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output() {
        let bin = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if bin.join("initdb").is_file() {
            return Some(bin);
        }
    }
    std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .find(|p| p.join("initdb").is_file() && p.join("pg_ctl").is_file())
    })
}
