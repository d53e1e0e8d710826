//! Result directories and live progress, shared by the measuring commands.

use crate::args::OutputArgs;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use iolens_core::Output;
use std::io::IsTerminal;
use std::time::Duration;

pub use iolens_core::result::record::RESULTS_ROOT;

impl OutputArgs {
    /// Where the library writes the result: `--name` (or `default_name`) and `--output`.
    pub fn output(&self, default_name: &str) -> Output {
        Output {
            name: self
                .name
                .clone()
                .unwrap_or_else(|| default_name.to_string()),
            dir: self.output.clone(),
        }
    }
}

/// Prints a measuring command's outcome — `result.json` with `--json`, else
/// the summary text and the line naming the result directory — and passes
/// on its exit code.
pub fn print_result(
    o: &OutputArgs,
    doc: &impl serde::Serialize,
    text: &str,
    dir: impl std::fmt::Display,
    exit_code: i32,
) -> anyhow::Result<u8> {
    if o.json {
        println!("{}", serde_json::to_string_pretty(doc)?);
    } else {
        print!("{text}");
        println!("result: {dir}");
    }
    Ok(exit_code as u8)
}

/// Whether live progress is drawn: on a terminal only, and never when quiet.
pub fn progress_shown(quiet: bool) -> bool {
    !quiet && std::io::stderr().is_terminal()
}

/// How often a shown progress display redraws by itself (elapsed time, ETA,
/// spinner), between the updates its command makes.
const TICK: Duration = Duration::from_millis(250);

/// Live progress on stderr, drawn with indicatif; hidden (every call does
/// nothing) when stderr is not a terminal or the user asked for quiet.
///
/// Two shapes: a status line (a spinner, the elapsed time and a message the
/// command replaces) and a counted bar (the bar, a message, elapsed time and
/// the ETA indicatif estimates from the rate of progress). Several of them
/// share the terminal through a [`ProgressGroup`].
pub struct Progress {
    bar: ProgressBar,
}

impl Progress {
    /// A status line for these output options.
    pub fn new(o: &OutputArgs) -> Progress {
        Progress::status(progress_shown(o.quiet))
    }

    /// A status line, drawn only when `shown` (see [`progress_shown`]).
    pub fn status(shown: bool) -> Progress {
        Progress::styled(shown, None, "{spinner} [{elapsed}] {wide_msg}")
    }

    /// A bar counting to `total` (in any unit: points, blocks, milliseconds of
    /// planned work), with elapsed time and ETA; drawn only when `shown`.
    pub fn counted(shown: bool, total: u64) -> Progress {
        Progress::styled(
            shown,
            Some(total),
            "[{bar:24}] {elapsed} ETA {eta}  {wide_msg}",
        )
    }

    fn styled(shown: bool, total: Option<u64>, template: &str) -> Progress {
        let target = if shown {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let style = ProgressStyle::with_template(template)
            .expect("progress templates are valid")
            .progress_chars("#>.");
        let bar = ProgressBar::with_draw_target(total, target).with_style(style);
        if shown {
            bar.enable_steady_tick(TICK);
        }
        Progress { bar }
    }

    /// Replaces the message.
    pub fn line(&self, text: &str) {
        self.bar.set_message(text.to_string());
    }

    /// Sets how far the bar is, in the unit of its total.
    pub fn set_position(&self, done: u64) {
        self.bar.set_position(done);
    }

    /// Changes the total (when it becomes known or grows).
    pub fn set_total(&self, total: u64) {
        self.bar.set_length(total);
    }

    /// Prints a line above the display (plainly when it is hidden).
    pub fn println(&self, text: &str) {
        if self.bar.is_hidden() || self.bar.is_finished() {
            eprintln!("{text}");
        } else {
            self.bar.println(text);
        }
    }

    /// Removes the display from the terminal.
    pub fn clear(&self) {
        self.bar.finish_and_clear();
    }
}

/// Several progress displays drawn together (a sweep's overall bar and the
/// point that runs), each a [`Progress`]; hidden like them.
pub struct ProgressGroup {
    multi: MultiProgress,
    shown: bool,
}

impl ProgressGroup {
    /// A group drawn only when `shown` (see [`progress_shown`]).
    pub fn shown(shown: bool) -> ProgressGroup {
        let target = if shown {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        ProgressGroup {
            multi: MultiProgress::with_draw_target(target),
            shown,
        }
    }

    /// Adds a status line under the displays already there.
    pub fn status(&self) -> Progress {
        self.add(Progress::status(self.shown))
    }

    /// Adds a counted bar under the displays already there.
    pub fn counted(&self, total: u64) -> Progress {
        self.add(Progress::counted(self.shown, total))
    }

    fn add(&self, p: Progress) -> Progress {
        Progress {
            bar: self.multi.add(p.bar),
        }
    }

    /// Removes every display of the group from the terminal.
    pub fn clear(&self) {
        let _ = self.multi.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_progress_accepts_every_call() {
        let group = ProgressGroup::shown(false);
        let total = group.counted(10);
        let point = group.status();
        total.set_position(5);
        total.set_total(20);
        point.line("bs=4k qd=1");
        assert!(total.bar.is_hidden() && point.bar.is_hidden());
        assert_eq!(total.bar.position(), 5);
        assert_eq!(total.bar.length(), Some(20));
        point.clear();
        group.clear();
        Progress::status(false).clear();
    }
}
