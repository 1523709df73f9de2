//! The owner's memory of the operations it was sent, so a sender may send one again until
//! it hears back (a request or its reply can be lost on a route between servers that has
//! just healed) without the operation running twice: a repeat of a running operation
//! waits for its outcome, a repeat of a finished one gets the outcome it had.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures_util::future::BoxFuture;
use serde_json::Value;
use tokio::sync::watch;

use crate::server::protocol::ApiError;

/// How long a finished operation's outcome is kept for a repeat that comes late.
const KEPT: Duration = Duration::from_secs(600);

type Outcome = Option<Result<Value, ApiError>>;

/// One operation the owner was sent: its outcome once it has one.
struct Delivery {
    outcome: watch::Receiver<Outcome>,
    at: Instant,
}

/// What the owner does with an operation it was sent.
pub enum Arrival {
    /// Seen for the first time: run it, and give its outcome to `Recorder::done`.
    First(Recorder),
    /// A repeat: the outcome of the first, when it has one.
    Repeat(BoxFuture<'static, Result<Value, ApiError>>),
}

/// Takes the outcome of an operation seen for the first time.
pub struct Recorder(watch::Sender<Outcome>);

impl Recorder {
    pub fn done(&self, outcome: &Result<Value, ApiError>) {
        self.0.send_replace(Some(outcome.clone()));
    }
}

/// The operations sent to one lane, by delivery id.
#[derive(Default)]
pub struct Deliveries {
    seen: Mutex<HashMap<String, Delivery>>,
}

impl Deliveries {
    /// Notes the arrival of the operation `id`.
    pub fn arrive(&self, id: &str) -> Arrival {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(delivery) = seen.get(id) {
            let mut outcome = delivery.outcome.clone();
            return Arrival::Repeat(Box::pin(async move {
                match outcome.wait_for(Option::is_some).await {
                    Ok(outcome) => outcome.clone().unwrap_or(Ok(Value::Null)),
                    // The first arrival's work was dropped before it had an outcome.
                    Err(_) => Err(ApiError::failed(
                        "the operation ended without an outcome on its node",
                    )),
                }
            }));
        }
        // Finished ones are kept a while; running ones while their work is alive.
        seen.retain(|_, d| match d.outcome.borrow().is_some() {
            true => d.at.elapsed() < KEPT,
            false => d.outcome.has_changed().is_ok(),
        });
        let (sender, outcome) = watch::channel(None);
        seen.insert(
            id.to_owned(),
            Delivery {
                outcome,
                at: Instant::now(),
            },
        );
        Arrival::First(Recorder(sender))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[tokio::test]
    async fn a_repeat_waits_for_the_first_outcome_and_a_late_one_gets_it() {
        let deliveries = Deliveries::default();
        let Arrival::First(recorder) = deliveries.arrive("a") else {
            panic!("the first arrival is a repeat");
        };
        let Arrival::Repeat(waiting) = deliveries.arrive("a") else {
            panic!("the second arrival is not a repeat");
        };
        let waiting = tokio::spawn(waiting);
        assert!(!waiting.is_finished());
        recorder.done(&Ok(json!({"ran": 1})));
        assert_eq!(waiting.await.unwrap(), Ok(json!({"ran": 1})));
        let Arrival::Repeat(late) = deliveries.arrive("a") else {
            panic!("the late arrival is not a repeat");
        };
        assert_eq!(late.await, Ok(json!({"ran": 1})));
        assert!(matches!(deliveries.arrive("b"), Arrival::First(_)));
    }

    #[tokio::test]
    async fn a_repeat_of_an_operation_dropped_unfinished_fails() {
        let deliveries = Deliveries::default();
        let first = deliveries.arrive("a");
        let Arrival::Repeat(waiting) = deliveries.arrive("a") else {
            panic!("the second arrival is not a repeat");
        };
        drop(first);
        assert!(waiting.await.is_err());
    }
}
