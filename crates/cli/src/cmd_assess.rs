//! `iolens assess`: the whole picture from one command. The work is done by
//! `iolens_assess` (the raw calibration, the database runs, the picture and
//! its report); this module parses, prints the phases and the result.

use crate::args::OutputArgs;
use anyhow::Result;
use clap::{Args, ValueEnum};
use iolens_assess::{AssessObserver, AssessOptions};
use iolens_core::{ByteSize, DurationArg};
use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DbChoice {
    /// PostgreSQL when its server binaries are found, SQLite otherwise.
    Auto,
    Postgres,
    Sqlite,
}

impl From<DbChoice> for iolens_assess::DbChoice {
    fn from(c: DbChoice) -> Self {
        match c {
            DbChoice::Auto => iolens_assess::DbChoice::Auto,
            DbChoice::Postgres => iolens_assess::DbChoice::Postgres,
            DbChoice::Sqlite => iolens_assess::DbChoice::Sqlite,
        }
    }
}

/// `iolens assess`.
#[derive(Args, Debug, Clone)]
pub struct AssessArgs {
    /// Directory on the storage to assess (its files are created there and removed after).
    #[arg(long, default_value = ".")]
    pub dir: PathBuf,
    /// Total time to spend (±10 %).
    #[arg(long, default_value = "2m")]
    pub duration: DurationArg,
    /// Database for the database part.
    #[arg(long, value_enum, default_value = "auto")]
    pub db: DbChoice,
    /// Size of the raw test file.
    #[arg(long, default_value = "1g")]
    pub size: ByteSize,
    /// Session counts of the database runs.
    #[arg(long, value_delimiter = ',', default_value = "1,4")]
    pub sessions: Vec<u32>,
    /// Keep the files and the cluster created for the assessment.
    #[arg(long)]
    pub keep: bool,
    #[command(flatten)]
    pub out: OutputArgs,
}

impl AssessArgs {
    /// The assessment's options.
    pub fn options(&self) -> AssessOptions {
        AssessOptions {
            dir: self.dir.clone(),
            duration: self.duration.0,
            db: self.db.into(),
            size: self.size.0,
            sessions: self.sessions.clone(),
            keep: self.keep,
            output: self.out.output("assess"),
            quiet: self.out.quiet,
        }
    }
}

/// Prints the phases and the parts' errors on stderr.
struct Phases;

impl AssessObserver for Phases {
    fn phase(&mut self, elapsed: Duration, budget: Duration, what: &str) {
        eprintln!(
            "[{:>5.0}s / {:.0}s] {what}",
            elapsed.as_secs_f64(),
            budget.as_secs_f64()
        );
    }

    fn error(&mut self, message: &str) {
        eprintln!("iolens: {message}");
    }
}

pub fn run(a: AssessArgs) -> Result<u8> {
    let report = iolens_assess::run(&a.options(), &mut Phases)?;
    if a.out.json {
        println!("{}", serde_json::to_string_pretty(&report.doc)?);
    } else {
        print!("{}", report.text);
        let _ = std::io::stdout().flush();
    }
    Ok(report.exit_code() as u8)
}
