//! The sweep file (TOML) → a checked plan of points, each with the command
//! line it runs. Options are checked against the command-line definition
//! (a [`clap::Command`]) so a typo fails now rather than hours into the sweep.

use crate::SweepError;
use iolens_core::parse_duration;
use serde_json::{json, Value};
use std::path::Path;
use std::time::Duration;

/// Commands a sweep cannot run.
const NOT_SWEEPABLE: &[&str] = &["sweep", "report", "compare", "help"];

/// Options the sweep sets itself for every point.
const RESERVED: &[&str] = &["output", "json", "quiet"];

/// Keys of the sweep file.
const FILE_KEYS: &[&str] = &["command", "name", "options", "axes", "points", "pause"];

/// At most this many points per sweep.
const MAX_POINTS: usize = 100_000;

/// One point of the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedPoint {
    /// Directory name inside the sweep directory (`03-qd=16`).
    pub dir: String,
    /// The axis values of this point, in axis order.
    pub params: Vec<(String, toml::Value)>,
    /// Command-line arguments (command words and options; not --output/--quiet).
    pub argv: Vec<String>,
    /// The command has `--quiet`.
    pub quiet_flag: bool,
    /// The command has `--name`.
    pub name_flag: bool,
}

impl PlannedPoint {
    /// The child's whole command line: the point's arguments, its result
    /// directory, no live progress (when the command has `--quiet`), and a
    /// name (when it has `--name` and the file sets none).
    pub fn child_args(&self, out: &Path, name: &str) -> Vec<String> {
        let mut v = self.argv.clone();
        v.push("--output".into());
        v.push(out.display().to_string());
        if self.quiet_flag {
            v.push("--quiet".into());
        }
        if self.name_flag && !self.argv.iter().any(|a| a == "--name") {
            v.push("--name".into());
            v.push(name.into());
        }
        v
    }

    /// The axis values as a JSON object (for sweep.json).
    pub fn params_json(&self) -> serde_json::Map<String, Value> {
        self.params
            .iter()
            .map(|(k, v)| (k.clone(), to_json(v)))
            .collect()
    }
}

/// Whether the (sub)command named by `words` has the long option `long`;
/// None when there is no such command.
fn accepts(cli: &clap::Command, words: &[String], long: &str) -> Option<bool> {
    let mut cmd = cli;
    for w in words {
        cmd = cmd.find_subcommand(w)?;
    }
    let found = cmd.get_arguments().any(|a| a.get_long() == Some(long));
    Some(found)
}

/// A validated sweep file.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Name of the sweep.
    pub name: String,
    /// The command words (`["db", "run"]`).
    pub command: Vec<String>,
    /// Names of the parameters, in order.
    pub param_order: Vec<String>,
    /// The points, in the order they run.
    pub points: Vec<PlannedPoint>,
    /// Pause between points.
    pub pause: Duration,
}

fn bad<T>(file: &Path, msg: impl std::fmt::Display) -> Result<T, SweepError> {
    Err(SweepError::BadInput(format!("{}: {msg}", file.display())))
}

/// Validates an option name (`rate_iops`, `rate-iops`) and returns its flag (`--rate-iops`).
fn flag(file: &Path, key: &str) -> Result<String, SweepError> {
    if key.is_empty()
        || !key
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-')
    {
        return bad(
            file,
            format!("'{key}' is not an option name: use the command's long option, e.g. rate_iops or rate-iops"),
        );
    }
    let norm = key.replace('_', "-");
    if RESERVED.contains(&norm.as_str()) {
        return bad(
            file,
            format!("option '{key}' is set by the sweep for every point; remove it (use --output on the sweep)"),
        );
    }
    Ok(format!("--{norm}"))
}

/// The text of a scalar option value.
fn scalar_text(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        toml::Value::Datetime(d) => Some(d.to_string()),
        _ => None,
    }
}

/// Appends `key = value` as command-line arguments.
fn push_option(
    file: &Path,
    argv: &mut Vec<String>,
    key: &str,
    v: &toml::Value,
) -> Result<(), SweepError> {
    let f = flag(file, key)?;
    match v {
        toml::Value::Boolean(true) => argv.push(f),
        toml::Value::Boolean(false) => {}
        toml::Value::Array(items) => {
            for item in items {
                match scalar_text(item) {
                    Some(t) => {
                        argv.push(f.clone());
                        argv.push(t);
                    }
                    None => {
                        return bad(
                            file,
                            format!("option '{key}': a list may hold only strings and numbers"),
                        )
                    }
                }
            }
        }
        toml::Value::Table(_) => {
            return bad(
                file,
                format!(
                    "option '{key}': expected a string, number, boolean or list, found a table"
                ),
            )
        }
        other => {
            argv.push(f);
            argv.push(scalar_text(other).unwrap_or_default());
        }
    }
    Ok(())
}

/// A value as it appears in a directory name.
fn dir_value(v: &toml::Value) -> String {
    let t = match v {
        toml::Value::Array(a) => a
            .iter()
            .map(|x| scalar_text(x).unwrap_or_default())
            .collect::<Vec<_>>()
            .join("+"),
        toml::Value::Boolean(b) => b.to_string(),
        other => scalar_text(other).unwrap_or_default(),
    };
    let s: String = t
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+') {
                c
            } else {
                '_'
            }
        })
        .collect();
    s.chars().take(40).collect()
}

/// TOML value → JSON value (for sweep.json).
pub fn to_json(v: &toml::Value) -> Value {
    match v {
        toml::Value::String(s) => json!(s),
        toml::Value::Integer(i) => json!(i),
        toml::Value::Float(f) => json!(f),
        toml::Value::Boolean(b) => json!(b),
        toml::Value::Datetime(d) => json!(d.to_string()),
        toml::Value::Array(a) => Value::Array(a.iter().map(to_json).collect()),
        toml::Value::Table(t) => {
            Value::Object(t.iter().map(|(k, v)| (k.clone(), to_json(v))).collect())
        }
    }
}

/// An axis: its name and its values.
type Axis = (String, Vec<toml::Value>);

/// The parameters of one point, in order.
type Params = Vec<(String, toml::Value)>;

/// The command words of the file, checked to be sweepable.
fn command_of(file: &Path, doc: &toml::Table) -> Result<Vec<String>, SweepError> {
    let command: Vec<String> = match doc.get("command") {
        Some(toml::Value::String(s)) => s.split_whitespace().map(str::to_string).collect(),
        Some(_) => return bad(file, "'command' must be a string, e.g. command = \"run\""),
        None => {
            return bad(
                file,
                "missing 'command': the iolens command to run at each point, e.g. command = \"run\" or \"db run\"",
            )
        }
    };
    if command.is_empty() || NOT_SWEEPABLE.contains(&command[0].as_str()) {
        return bad(
            file,
            format!(
                "'command = \"{}\"' cannot be swept: name a measuring command such as run, calibrate, matrix or \"db run\"",
                command.join(" ")
            ),
        );
    }
    Ok(command)
}

/// `name` (default: the file's stem).
fn name_of(file: &Path, doc: &toml::Table) -> Result<String, SweepError> {
    match doc.get("name") {
        Some(toml::Value::String(s)) if !s.trim().is_empty() => Ok(s.trim().to_string()),
        Some(_) => bad(file, "'name' must be a non-empty string"),
        None => Ok(file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "sweep".into())),
    }
}

/// `pause` between points (default none).
fn pause_of(file: &Path, doc: &toml::Table) -> Result<Duration, SweepError> {
    match doc.get("pause") {
        None => Ok(Duration::ZERO),
        Some(toml::Value::String(s)) => match parse_duration(s) {
            Ok(d) => Ok(d),
            Err(e) => bad(file, format!("pause: {e}")),
        },
        Some(toml::Value::Integer(i)) if *i >= 0 => Ok(Duration::from_secs(*i as u64)),
        Some(_) => bad(file, "'pause' must be a duration such as \"10s\""),
    }
}

/// The table under `key` (empty when absent).
fn table_of(file: &Path, doc: &toml::Table, key: &str) -> Result<toml::Table, SweepError> {
    match doc.get(key) {
        None => Ok(toml::Table::new()),
        Some(toml::Value::Table(t)) => Ok(t.clone()),
        Some(_) => bad(file, format!("'{key}' must be a table ([{key}])")),
    }
}

/// The axes of `[axes]`, in file order.
fn axes_of(file: &Path, axes_t: &toml::Table) -> Result<Vec<Axis>, SweepError> {
    let mut axes = Vec::new();
    for (k, v) in axes_t {
        flag(file, k)?;
        match v {
            toml::Value::Array(vals) if !vals.is_empty() => {
                if vals.iter().any(|x| matches!(x, toml::Value::Table(_))) {
                    return bad(
                        file,
                        format!("axis '{k}': values must be strings, numbers or booleans"),
                    );
                }
                axes.push((k.clone(), vals.clone()));
            }
            _ => {
                return bad(
                    file,
                    format!("axis '{k}' must be a non-empty list of values, e.g. {k} = [1, 2, 4]"),
                )
            }
        }
    }
    Ok(axes)
}

/// The listed `[[points]]`, checked not to repeat an axis.
fn listed_points(
    file: &Path,
    doc: &toml::Table,
    axes_t: &toml::Table,
) -> Result<Vec<toml::Table>, SweepError> {
    let listed: Vec<toml::Table> = match doc.get("points") {
        None => Vec::new(),
        Some(toml::Value::Array(a)) if !a.is_empty() => a
            .iter()
            .map(|p| match p {
                toml::Value::Table(t) => Ok(t.clone()),
                _ => bad(
                    file,
                    "each entry of 'points' must be a table, e.g. [[points]] qd = 4",
                ),
            })
            .collect::<Result<_, _>>()?,
        Some(_) => {
            return bad(
                file,
                "'points' must be a non-empty list of tables ([[points]])",
            )
        }
    };
    for (i, p) in listed.iter().enumerate() {
        for k in p.keys() {
            flag(file, k)?;
            if axes_t.contains_key(k) {
                return bad(
                    file,
                    format!(
                        "point {} sets '{k}', which is also an axis: set it in one place",
                        i + 1
                    ),
                );
            }
        }
    }
    Ok(listed)
}

/// Each listed point (or one empty point) × the product of the axes.
fn combinations(listed: &[toml::Table], axes: &[Axis]) -> Vec<Params> {
    let bases: Vec<Params> = if listed.is_empty() {
        vec![Vec::new()]
    } else {
        listed
            .iter()
            .map(|t| t.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
            .collect()
    };
    let mut combos = bases;
    for (k, vals) in axes {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                vals.iter().map(move |v| {
                    let mut c = c.clone();
                    c.push((k.clone(), v.clone()));
                    c
                })
            })
            .collect();
    }
    combos
}

/// Parameter order: listed points' keys, then the axes.
fn param_order(listed: &[toml::Table], axes: &[Axis]) -> Vec<String> {
    let mut order: Vec<String> = Vec::new();
    for p in listed {
        for k in p.keys() {
            if !order.contains(k) {
                order.push(k.clone());
            }
        }
    }
    order.extend(axes.iter().map(|(k, _)| k.clone()));
    order
}

impl Plan {
    /// Parses and validates a sweep file's text (`file` names it in
    /// messages); `cli` is the command-line definition of iolens.
    pub fn parse(file: &Path, text: &str, cli: &clap::Command) -> Result<Plan, SweepError> {
        let doc: toml::Table = match text.parse() {
            Ok(d) => d,
            Err(e) => return bad(file, format!("not valid TOML: {}", e.to_string().trim())),
        };
        for k in doc.keys() {
            if !FILE_KEYS.contains(&k.as_str()) {
                return bad(
                    file,
                    format!("unknown key '{k}' (expected: {})", FILE_KEYS.join(", ")),
                );
            }
        }
        let command = command_of(file, &doc)?;
        let name = name_of(file, &doc)?;
        let pause = pause_of(file, &doc)?;
        let options = table_of(file, &doc, "options")?;
        let axes_t = table_of(file, &doc, "axes")?;
        let axes = axes_of(file, &axes_t)?;
        let listed = listed_points(file, &doc, &axes_t)?;
        let param_order = param_order(&listed, &axes);
        let combos = combinations(&listed, &axes);
        if combos.len() > MAX_POINTS {
            return bad(
                file,
                format!("{} points: at most {MAX_POINTS} per sweep", combos.len()),
            );
        }
        let points = points(file, cli, &command, &options, combos)?;
        Ok(Plan {
            name,
            command,
            param_order,
            points,
            pause,
        })
    }

    /// Checks every point's command line against the CLI definition, so a
    /// typo fails now rather than hours into the sweep.
    pub fn check_args(&self, file: &Path, cli: &clap::Command) -> Result<(), SweepError> {
        for p in &self.points {
            let argv = std::iter::once("iolens".to_string())
                .chain(p.child_args(Path::new("out"), &self.name));
            if let Err(e) = cli.clone().try_get_matches_from(argv) {
                let msg = e.to_string();
                let first = msg
                    .lines()
                    .find(|l| !l.trim().is_empty())
                    .unwrap_or("")
                    .trim_start_matches("error: ")
                    .to_string();
                return bad(
                    file,
                    format!(
                        "point {}: `iolens {}` is not accepted: {first}",
                        p.dir,
                        shell_words(&p.argv)
                    ),
                );
            }
        }
        Ok(())
    }

    /// The expected seconds of a point, from its runtime/ramp/warmup options.
    pub fn expected_s(&self, p: &PlannedPoint) -> Option<f64> {
        let mut total = None;
        let mut it = p.argv.iter();
        while let Some(a) = it.next() {
            if matches!(
                a.as_str(),
                "--runtime" | "--ramp" | "--warmup" | "--duration"
            ) {
                if let Some(d) = it.next().and_then(|v| parse_duration(v).ok()) {
                    total = Some(total.unwrap_or(0.0) + d.as_secs_f64());
                }
            }
        }
        total.map(|t| t + 1.0)
    }
}

/// The planned points: each combination's command line and directory name.
fn points(
    file: &Path,
    cli: &clap::Command,
    command: &[String],
    options: &toml::Table,
    combos: Vec<Params>,
) -> Result<Vec<PlannedPoint>, SweepError> {
    let Some(true) = accepts(cli, command, "output") else {
        return bad(
            file,
            format!(
                "`iolens {}` is not a measuring command with --output: name one such as run, calibrate, matrix or \"db run\"",
                command.join(" ")
            ),
        );
    };
    let quiet_flag = accepts(cli, command, "quiet").unwrap_or(false);
    let name_flag = accepts(cli, command, "name").unwrap_or(false);
    let width = combos.len().to_string().len().max(2);
    let mut points = Vec::with_capacity(combos.len());
    for (i, params) in combos.into_iter().enumerate() {
        let mut argv = command.to_vec();
        for (k, v) in options {
            let overridden = params
                .iter()
                .any(|(pk, _)| pk.replace('_', "-") == k.replace('_', "-"));
            if !overridden {
                push_option(file, &mut argv, k, v)?;
            }
        }
        for (k, v) in &params {
            push_option(file, &mut argv, k, v)?;
        }
        let mut dir = format!("{:0width$}", i + 1);
        for (k, v) in &params {
            dir.push_str(&format!("-{k}={}", dir_value(v)));
        }
        points.push(PlannedPoint {
            dir,
            params,
            argv,
            quiet_flag,
            name_flag,
        });
    }
    Ok(points)
}

/// Arguments quoted for a POSIX shell where needed.
pub fn shell_words(argv: &[String]) -> String {
    argv.iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
            {
                a.clone()
            } else {
                format!("'{}'", a.replace('\'', "'\\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Arg, ArgAction, Command};

    /// A command line shaped like iolens's, with the options the tests use.
    fn cli() -> Command {
        let opt = |name: &'static str| Arg::new(name).long(name);
        let flag = |name: &'static str| Arg::new(name).long(name).action(ArgAction::SetTrue);
        let common = |c: Command| c.arg(opt("output")).arg(flag("quiet")).arg(opt("name"));
        let run = common(Command::new("run"))
            .arg(opt("target").action(ArgAction::Append))
            .args(["rw", "bs", "qd", "engine", "runtime"].map(opt))
            .args(["buffered", "verify"].map(flag));
        let db_run =
            common(Command::new("run")).args(["runtime", "update-pct", "sessions"].map(opt));
        Command::new("iolens")
            .subcommand(run)
            .subcommand(Command::new("db").subcommand(db_run))
            .subcommand(Command::new("report").arg(opt("output")))
    }

    fn plan(text: &str) -> Result<Plan, SweepError> {
        Plan::parse(Path::new("s.toml"), text, &cli())
    }

    #[test]
    fn axes_make_a_cartesian_product_in_file_order() {
        let p = plan(
            r#"
            command = "run"
            name = "qd"
            [options]
            target = ["/a", "/b"]
            rw = "randread"
            buffered = false
            verify = true
            [axes]
            bs = ["8k", "64k"]
            qd = [1, 4, 16]
            "#,
        )
        .unwrap();
        assert_eq!(p.points.len(), 6);
        assert_eq!(p.param_order, vec!["bs", "qd"]);
        assert_eq!(p.points[0].dir, "01-bs=8k-qd=1");
        assert_eq!(p.points[5].dir, "06-bs=64k-qd=16");
        assert_eq!(
            p.points[1].argv,
            vec![
                "run", "--target", "/a", "--target", "/b", "--rw", "randread", "--verify", "--bs",
                "8k", "--qd", "4"
            ]
        );
    }

    #[test]
    fn listed_points_combine_with_axes_and_override_options() {
        let p = plan(
            r#"
            command = "db run"
            [options]
            update_pct = 0
            runtime = "10s"
            [[points]]
            update_pct = 0
            [[points]]
            update_pct = 20
            [axes]
            sessions = [1, 2]
            "#,
        )
        .unwrap();
        assert_eq!(p.points.len(), 4);
        assert_eq!(p.name, "s");
        assert_eq!(p.param_order, vec!["update_pct", "sessions"]);
        assert_eq!(
            p.points[3].argv,
            vec![
                "db",
                "run",
                "--runtime",
                "10s",
                "--update-pct",
                "20",
                "--sessions",
                "2"
            ]
        );
        assert_eq!(p.expected_s(&p.points[0]), Some(11.0));
    }

    #[test]
    fn bad_files_say_what_to_fix() {
        let cases = [
            ("", "missing 'command'"),
            ("command = \"report\"", "cannot be swept"),
            ("command = \"nosuch\"", "not a measuring command"),
            ("command = \"run\"\n[axes]\nqd = []", "non-empty list"),
            (
                "command = \"run\"\n[options]\noutput = \"x\"",
                "set by the sweep",
            ),
            ("command = \"run\"\naxis = 1", "unknown key 'axis'"),
            (
                "command = \"run\"\n[options]\n\"Bad Key\" = 1",
                "not an option name",
            ),
            ("command = run", "not valid TOML"),
            (
                "command = \"run\"\n[axes]\nqd=[1]\n[[points]]\nqd = 2",
                "also an axis",
            ),
        ];
        for (text, want) in cases {
            let e = plan(text).unwrap_err().to_string();
            assert!(e.contains(want), "{text:?}: {e}");
            assert!(e.starts_with("s.toml: "), "{e}");
        }
    }

    #[test]
    fn unknown_options_are_caught_before_running() {
        let p = plan("command = \"run\"\n[axes]\nqdd = [1]").unwrap();
        let e = p
            .check_args(Path::new("s.toml"), &cli())
            .unwrap_err()
            .to_string();
        assert!(e.contains("--qdd"), "{e}");
        let ok =
            plan("command = \"run\"\n[options]\nengine = \"null\"\n[axes]\nqd = [1, 2]").unwrap();
        ok.check_args(Path::new("s.toml"), &cli()).unwrap();
    }

    #[test]
    fn shell_words_quote_what_needs_it() {
        let v: Vec<String> = ["run", "--target", "/a b", "--x", "it's"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(shell_words(&v), "run --target '/a b' --x 'it'\\''s'");
    }
}
