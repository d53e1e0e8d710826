//! The options of `iolens db setup | run | teardown`, as typed, and their
//! conversion to the typed options of the database libraries.

use crate::args::OutputArgs;
use crate::errors::usage;
use anyhow::Result;
use clap::{Args, Subcommand, ValueEnum};
use iolens_core::{ByteSize, DurationArg};
use iolens_db::command::{RunOptions, WorkloadOptions};
use iolens_db::workload::{Blocks, Hotspot, RedoStress, Think};
use iolens_db::LayoutSpec;
use iolens_db_postgres::PgOptions;
use iolens_db_sqlite::SqliteOptions;
use std::path::PathBuf;

/// `iolens db`.
#[derive(Args, Debug)]
pub struct DbArgs {
    #[command(subcommand)]
    pub command: DbCommand,
}

#[derive(Subcommand, Debug)]
#[allow(clippy::large_enum_variant)] // parsed once per process
pub enum DbCommand {
    /// Create the data set: schemas of one row per 8 KiB page, keys in random order, an index.
    Setup(SetupArgs),
    /// Run the SLOB work loop and measure it, from the database down to the device.
    Run(DbRunArgs),
    /// Stop a managed cluster and remove everything iolens created for it.
    Teardown(TeardownArgs),
}

/// Which server, and how a managed one is configured.
#[derive(Args, Debug, Clone)]
pub struct ServerArgs {
    /// Database: postgres (a managed cluster or --dsn) or sqlite (embedded, files under --path).
    #[arg(long, value_enum, default_value = "postgres")]
    pub db: DbKind,
    /// Directory of the embedded SQLite schema files (with --db sqlite).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["pg_dir", "dsn"])]
    pub path: Option<PathBuf>,
    /// Managed throwaway cluster in this directory (put it on the storage under test).
    #[arg(long, value_name = "PATH", conflicts_with = "dsn")]
    pub pg_dir: Option<PathBuf>,
    /// An existing server: postgres://user:pass@host:port/db or 'host=... dbname=...'.
    /// iolens changes none of its settings.
    #[arg(long, value_name = "DSN")]
    pub dsn: Option<String>,
    /// Directory of the PostgreSQL server binaries (initdb, pg_ctl, postgres).
    #[arg(long, value_name = "DIR")]
    pub pg_bin: Option<PathBuf>,
    /// shared_buffers of the managed server: keep it small so reads reach storage.
    #[arg(long, default_value = "64M", value_name = "SIZE")]
    pub cache: ByteSize,
    /// Limit the OS page cache the managed server may use (memory cgroup; root).
    #[arg(long, value_name = "SIZE")]
    pub os_cache_limit: Option<ByteSize>,
    /// Managed server bypasses the OS page cache (debug_io_direct=data; PostgreSQL 16+).
    #[arg(long)]
    pub direct_io: bool,
    /// Leave the managed server running afterwards (later commands reuse it).
    #[arg(long)]
    pub keep: bool,
}

/// Which database `iolens db` works on.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DbKind {
    Postgres,
    Sqlite,
}

impl ServerArgs {
    /// Checks that --db and --path/--pg-dir/--dsn agree.
    pub fn check_kind(&self) -> Result<()> {
        match (self.db, &self.path) {
            (DbKind::Sqlite, None) => usage("--db sqlite needs --path DIR (where the schema files live)"),
            (DbKind::Postgres, Some(_)) => usage("--path is for --db sqlite; a PostgreSQL cluster takes --pg-dir or --dsn"),
            (DbKind::Postgres, None) if self.pg_dir.is_none() && self.dsn.is_none() => {
                usage("give --pg-dir PATH (a managed cluster iolens creates there) or --dsn postgres://... (an existing server), or --db sqlite --path DIR")
            }
            _ => Ok(()),
        }
    }
}

/// `iolens db setup`.
#[derive(Args, Debug, Clone)]
pub struct SetupArgs {
    #[command(flatten)]
    pub server: ServerArgs,
    /// Number of schemas (SLOB users), one table each.
    #[arg(long, default_value_t = 1, value_name = "N")]
    pub schemas: u32,
    /// Rows per schema, one per 8 KiB block: a block count (131072) or a size (1G).
    #[arg(long, default_value = "10000", value_name = "SIZE|BLOCKS")]
    pub scale: Blocks,
    /// Size of each unindexed scan table: blocks or a size.
    #[arg(long, default_value = "1M", value_name = "SIZE|BLOCKS")]
    pub scan_scale: Blocks,
    /// Loader connections.
    #[arg(long, default_value_t = 2, value_name = "N")]
    pub load_parallel: u32,
    /// Replace an existing layout (needed when it differs from the one asked for).
    #[arg(long)]
    pub reload: bool,
    /// Seed of the keys' physical order.
    #[arg(long, default_value_t = 0x5107)]
    pub seed: u64,
    /// Print the layout as JSON.
    #[arg(long)]
    pub json: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedoArg {
    Lite,
    Heavy,
}

/// `iolens db run`.
#[derive(Args, Debug, Clone)]
pub struct DbRunArgs {
    #[command(flatten)]
    pub server: ServerArgs,
    /// Sessions in all (default: one per schema).
    #[arg(long, value_name = "N", conflicts_with = "threads_per_schema")]
    pub sessions: Option<u32>,
    /// Sessions per schema (SLOB's threads per schema).
    #[arg(long, value_name = "N")]
    pub threads_per_schema: Option<u32>,
    /// Use only the first N schemas of the layout.
    #[arg(long, value_name = "N")]
    pub schemas: Option<u32>,
    /// Updates per window of 100 loops: 0..50 or 100.
    #[arg(long, default_value_t = 25, value_name = "PCT")]
    pub update_pct: u32,
    /// Full scans of the unindexed table per window of 100 loops.
    #[arg(long, default_value_t = 0, value_name = "PCT")]
    pub scan_pct: u32,
    /// Rows read by each select (index range).
    #[arg(long, default_value_t = 64, value_name = "ROWS")]
    pub work_unit: u64,
    /// Rows changed by each update.
    #[arg(long, default_value_t = 8, value_name = "ROWS")]
    pub update_work_unit: u64,
    /// lite: updates change one filler column; heavy: all of them.
    #[arg(long, value_enum, default_value = "lite")]
    pub redo_stress: RedoArg,
    /// SIZE@OFFSET/FREQ: every FREQ-th loop works inside the hot spot (e.g. 8M@16M/3).
    #[arg(long, value_name = "SIZE@OFFSET/FREQ")]
    pub hotspot: Option<Hotspot>,
    /// Every N-th loop works on schema 1.
    #[arg(long, value_name = "N")]
    pub hot_schema_freq: Option<u32>,
    /// MIN..MAX/FREQ: every FREQ-th loop sleeps between MIN and MAX (e.g. 1ms..5ms/10).
    #[arg(long, value_name = "MIN..MAX/FREQ")]
    pub think: Option<Think>,
    /// Measured time.
    #[arg(long, default_value = "5m")]
    pub runtime: DurationArg,
    /// Measured loops per session (ends the run when all are done; --runtime still caps it).
    #[arg(long, value_name = "N")]
    pub work_loop: Option<u64>,
    /// Time run first and not counted.
    #[arg(long, default_value = "30s")]
    pub warmup: DurationArg,
    /// Seed of the sessions' key choices.
    #[arg(long, default_value_t = 0x10_1E45)]
    pub seed: u64,
    /// Keep the OS page cache as it is (by default the data files are dropped from it first).
    #[arg(long)]
    pub no_evict: bool,
    #[command(flatten)]
    pub out: OutputArgs,
}

/// `iolens db teardown`.
#[derive(Args, Debug, Clone)]
pub struct TeardownArgs {
    /// The managed cluster's directory.
    #[arg(long, value_name = "PATH")]
    pub pg_dir: PathBuf,
}

impl ServerArgs {
    /// The options of a PostgreSQL server.
    pub fn postgres(&self) -> PgOptions {
        PgOptions {
            pg_dir: self.pg_dir.clone(),
            dsn: self.dsn.clone(),
            pg_bin: self.pg_bin.clone(),
            cache_bytes: self.cache.0,
            os_cache_limit: self.os_cache_limit.map(|l| l.0),
            direct_io: self.direct_io,
            keep: self.keep,
        }
    }

    /// The options of embedded SQLite.
    pub fn sqlite(&self) -> SqliteOptions {
        SqliteOptions {
            path: self.path.clone().expect("check_kind requires --path"),
            cache_bytes: self.cache.0,
        }
    }
}

impl SetupArgs {
    /// The layout to build.
    pub fn layout(&self) -> LayoutSpec {
        LayoutSpec {
            schemas: self.schemas,
            scale: self.scale.0,
            scan_blocks: self.scan_scale.0,
            load_parallel: self.load_parallel,
            reload: self.reload,
            seed: self.seed,
        }
    }
}

impl DbRunArgs {
    /// The run's options.
    pub fn options(&self) -> RunOptions {
        let a = self;
        RunOptions {
            workload: WorkloadOptions {
                sessions: a.sessions,
                threads_per_schema: a.threads_per_schema,
                schemas: a.schemas,
                update_pct: a.update_pct,
                scan_pct: a.scan_pct,
                work_unit: a.work_unit,
                update_work_unit: a.update_work_unit,
                redo_stress: match a.redo_stress {
                    RedoArg::Lite => RedoStress::Lite,
                    RedoArg::Heavy => RedoStress::Heavy,
                },
                hotspot: a.hotspot,
                hot_schema_every: a.hot_schema_freq,
                think: a.think,
                runtime: a.runtime.0,
                work_loop: a.work_loop,
                warmup: a.warmup.0,
                seed: a.seed,
            },
            evict: !a.no_evict,
            out: a.out.output("db"),
        }
    }
}
