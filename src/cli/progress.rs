//! The progress bar every long command shows.

use indicatif::{ProgressBar, ProgressStyle};

/// A bar over `total` `unit`s labelled `what`, with rate and time left.
pub fn bar(total: usize, unit: &str, what: &str) -> ProgressBar {
    let bar = ProgressBar::new(total as u64);
    bar.set_style(
        ProgressStyle::with_template(&format!(
            "{{msg}} [{{bar:40}}] {{pos}}/{{len}} {unit} ({{per_sec}}, eta {{eta}})"
        ))
        .expect("valid template")
        .progress_chars("=> "),
    );
    bar.set_message(what.to_string());
    bar
}
