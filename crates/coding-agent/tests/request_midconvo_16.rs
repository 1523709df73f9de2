//! Request parity with pi 1.6.0 for what changes in the middle of a conversation
//! (`request_parity/midconvo.rs`): the system prompt and the tools changed between runs of a
//! session, on models with and without mid-conversation system messages, tool changes and
//! effort changes. What ours sends must be what pi 1.6.0 sent in the same runs, kept as a
//! fixture (`tests/fixtures/request_parity_16/midconvo.json`) that
//! `scripts/refresh-request-parity.sh` rewrites; the differences that stay are in
//! `request_parity/known.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod request_parity;
mod support;

use std::collections::BTreeMap;

use request_parity::midconvo::cases;
use request_parity::{Pi, Recorded, compare, read_fixture, record_with, refreshing, write_fixture};

const FIXTURE: &str = "midconvo";

/// Runs every case through `pi`, keyed by case name.
fn record_rows(pi: &Pi) -> Recorded {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    cases()
        .iter()
        .map(|case| {
            let requests = record_with(&runtime, pi, &case.scenario, &|url| case.setup(url))
                .unwrap_or_else(|e| panic!("{}: {e}", case.name));
            (case.name.to_owned(), requests)
        })
        .collect()
}

#[test]
fn mid_conversation_changes_as_pi_16() {
    if refreshing() {
        let Some(wrapper) = support::ts16::ts16() else {
            panic!("PI_REQUEST_PARITY_REFRESH=1 needs PI_TS16 (pi 1.6.0's wrapper)");
        };
        write_fixture(FIXTURE, &record_rows(&Pi::Ts16(wrapper)));
        return;
    }
    let theirs = read_fixture(FIXTURE);
    let ours = record_rows(&Pi::Ours);
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        theirs.keys().collect::<Vec<_>>(),
        "{FIXTURE}: the cases changed; run scripts/refresh-request-parity.sh"
    );
    let mut differences = Vec::new();
    for case in cases() {
        // Compared under the scenario's own name, so the API's known differences apply.
        let one = |recorded: &Recorded| -> Recorded {
            BTreeMap::from([(case.scenario.name.clone(), recorded[case.name].clone())])
        };
        for line in compare(case.api.api, &one(&ours), &one(&theirs)) {
            differences.push(format!("{}: {line}", case.name));
        }
    }
    assert!(
        differences.is_empty(),
        "{FIXTURE}: {} differences from pi 1.6.0:\n{}",
        differences.len(),
        differences.join("\n")
    );
}
