//! Polling a device-code sign-in until the user approves it, honouring `slow_down`.

use std::future::Future;
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::OAuthError;

/// What one poll found.
pub(crate) enum Poll<T> {
    Done(T),
    Pending,
    /// Poll less often; the server may name the new interval in seconds.
    SlowDown(Option<f64>),
}

/// How to poll.
pub(crate) struct PollPlan {
    pub interval_secs: f64,
    pub expires_in_secs: f64,
    /// Wait one interval before the first poll (a poll at once is answered `slow_down`
    /// by servers that count it against the interval).
    pub wait_before_first: bool,
}

const SLOW_DOWN_TIMEOUT: &str = "Device flow timed out after one or more slow_down responses. This is often caused by clock drift in WSL or VM environments. Please sync or restart the VM clock and try again.";

/// Polls until `poll` is done, fails, the code expires or `cancel` fires.
pub(crate) async fn poll_until<T, F, Fut>(
    plan: PollPlan,
    cancel: &CancellationToken,
    mut poll: F,
) -> Result<T, OAuthError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<Poll<T>, OAuthError>>,
{
    let deadline = Instant::now() + Duration::from_secs_f64(plan.expires_in_secs.max(0.0));
    let mut interval = Duration::from_secs_f64(plan.interval_secs.max(1.0));
    let mut slow_downs = 0u32;
    let mut first = true;
    while Instant::now() < deadline {
        if !first || plan.wait_before_first {
            let wait = interval.min(deadline.saturating_duration_since(Instant::now()));
            tokio::select! {
                () = tokio::time::sleep(wait) => {}
                () = cancel.cancelled() => return Err(OAuthError::Cancelled),
            }
        }
        first = false;
        if cancel.is_cancelled() {
            return Err(OAuthError::Cancelled);
        }
        match poll().await? {
            Poll::Done(value) => return Ok(value),
            Poll::Pending => {}
            Poll::SlowDown(seconds) => {
                slow_downs += 1;
                interval = match seconds.filter(|s| s.is_finite() && *s > 0.0) {
                    Some(s) => Duration::from_secs_f64(s.max(1.0)),
                    None => interval + Duration::from_secs(5),
                };
            }
        }
    }
    Err(OAuthError::Failed(if slow_downs > 0 {
        SLOW_DOWN_TIMEOUT.into()
    } else {
        "Device flow timed out".into()
    }))
}
