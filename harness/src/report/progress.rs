//! The report's progress on stderr: the rows of events files read so far, shown once the report
//! has taken PROGRESS_AFTER and only on a terminal (indicatif draws nothing elsewhere), so a
//! short report and piped output stay as they are.
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// How long a report runs before its progress shows.
const PROGRESS_AFTER: Duration = Duration::from_secs(2);

pub struct Progress {
    pb: ProgressBar,
    done: Arc<AtomicBool>,
    shower: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    pub fn start() -> Self {
        let pb = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        pb.set_style(
            ProgressStyle::with_template("{spinner} [{elapsed_precise}] report: {rows} rows of events read")
                .map(|s| {
                    s.with_key("rows", |_: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                        let _ = write!(w, "{}", crate::results::read::rows_read());
                    })
                })
                .unwrap_or_else(|_| ProgressStyle::default_spinner()),
        );
        let done = Arc::new(AtomicBool::new(false));
        let (bar, stop) = (pb.clone(), done.clone());
        let shower = std::thread::spawn(move || {
            let step = Duration::from_millis(50);
            let mut waited = Duration::ZERO;
            while waited < PROGRESS_AFTER {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                std::thread::sleep(step);
                waited += step;
            }
            if !stop.load(Ordering::Relaxed) {
                bar.set_draw_target(ProgressDrawTarget::stderr());
                bar.enable_steady_tick(Duration::from_millis(200));
            }
        });
        Progress { pb, done, shower: Some(shower) }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(h) = self.shower.take() {
            let _ = h.join();
        }
        self.pb.finish_and_clear();
    }
}
