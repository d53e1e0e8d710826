//! `iolens db setup | run | teardown`: the SLOB method on PostgreSQL or
//! embedded SQLite. The work is done by `iolens_db::command` on the
//! database the options name; this module parses, shows progress and prints.

mod args;

pub use args::DbArgs;
use args::{DbCommand, DbKind, DbRunArgs, ServerArgs, SetupArgs, TeardownArgs};

use crate::output::{print_result, progress_shown, Progress};
use anyhow::Result;
use iolens_core::interrupt::STOP;
use iolens_db::command::{self, RunObserver, RunReport};
use iolens_db::run::SecondRow;
use iolens_db::timeseries::progress_line;
use iolens_db::{Capabilities, DbError, SetupReport, BLOCK};
use iolens_db_postgres::PgDatabase;
use iolens_db_sqlite::SqliteDatabase;
use std::time::Instant;

pub fn run(a: DbArgs) -> Result<u8> {
    match a.command {
        DbCommand::Setup(s) => setup(s),
        DbCommand::Run(r) => run_db(r),
        DbCommand::Teardown(t) => teardown(t),
    }
}

fn setup(a: SetupArgs) -> Result<u8> {
    a.server.check_kind()?;
    let spec = a.layout();
    let bar = Progress::counted(progress_shown(a.quiet || a.json), 0);
    let started = Instant::now();
    let show = |done: u64, total: u64| {
        bar.set_total(total);
        bar.set_position(done);
        let rate = done as f64 * BLOCK as f64 / 1e6 / started.elapsed().as_secs_f64().max(1e-3);
        bar.line(&format!("loading {done}/{total} rows, {rate:.1} MB/s"));
    };
    let report = match a.server.db {
        DbKind::Postgres => {
            let o = a.server.postgres();
            command::setup(|| PgDatabase::for_setup(&o, &spec), &spec, &STOP, &show)
        }
        DbKind::Sqlite => {
            let o = a.server.sqlite();
            command::setup(|| SqliteDatabase::open(&o), &spec, &STOP, &show)
        }
    };
    bar.clear();
    let SetupReport {
        interrupted,
        json,
        text,
        failure,
    } = report?;
    if interrupted {
        eprintln!(
            "iolens: setup interrupted; the next `iolens db setup` reloads the incomplete schemas"
        );
        return Ok(130);
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&json)?);
    } else {
        print!("{text}");
    }
    match failure {
        Some(f) => Err(anyhow::anyhow!(f)),
        None => Ok(0),
    }
}

/// The live progress line of `db run`.
struct RunProgress(Progress);

impl RunObserver for RunProgress {
    fn second(&mut self, row: &SecondRow, total_s: f64) {
        self.0.line(&progress_line(row, total_s));
    }

    fn ended(&mut self) {
        self.0.clear();
    }
}

/// Refuses options of a database server that the chosen database has no use for.
fn refuse_server_options(s: &ServerArgs, caps: Capabilities) -> Result<(), DbError> {
    if (s.dsn.is_some() && !caps.existing_server)
        || (s.os_cache_limit.is_some() && !caps.os_cache_limit)
        || (s.direct_io && !caps.direct_io_option)
    {
        return Err(DbError::usage("--dsn, --os-cache-limit and --direct-io are for PostgreSQL; SQLite reads its files with direct I/O already"));
    }
    Ok(())
}

fn run_db(a: DbRunArgs) -> Result<u8> {
    a.server.check_kind()?;
    let opts = a.options();
    let mut progress = RunProgress(Progress::new(&a.out));
    let report: Result<RunReport, DbError> = match a.server.db {
        DbKind::Postgres => {
            let o = a.server.postgres();
            let open =
                |w: &command::WorkloadOptions| PgDatabase::open(&o, w.max_sessions() + 10, false);
            command::run(open, &opts, &STOP, &mut progress)
        }
        DbKind::Sqlite => {
            let o = a.server.sqlite();
            let open = |_: &command::WorkloadOptions| {
                refuse_server_options(&a.server, iolens_db_sqlite::database::CAPABILITIES)?;
                SqliteDatabase::open(&o)
            };
            command::run(open, &opts, &STOP, &mut progress)
        }
    };
    let r = report?;
    print_result(&a.out, &r.doc, &r.text, r.dir.display(), r.exit_code())
}

fn teardown(a: TeardownArgs) -> Result<u8> {
    iolens_db_postgres::database::teardown(&a.pg_dir)?;
    println!("removed the iolens cluster in {}", a.pg_dir.display());
    Ok(0)
}
