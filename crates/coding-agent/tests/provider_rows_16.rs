//! Request parity with pi 1.6.0 for the upstream ledger's OpenAI-family provider rows
//! (`request_parity/provider_rows.rs`): named catalog models and custom providers set up
//! as each row says. What ours sends must be what pi 1.6.0 sent in the same runs, kept as
//! a fixture (`tests/fixtures/request_parity_16/provider-rows.json`) that
//! `scripts/refresh-request-parity.sh` rewrites; the differences that stay are in
//! `request_parity/known.rs` and `request_parity/catalog_known.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod request_parity;
mod support;

use std::collections::BTreeMap;

use request_parity::catalog_known::CATALOG_KNOWN;
use request_parity::known::without_known_in;
use request_parity::provider_rows::{ProviderRow, cases};
use request_parity::{Pi, Recorded, compare, read_fixture, record_with, refreshing, write_fixture};

const FIXTURE: &str = "provider-rows";

/// Runs every case through `pi`, keyed by case name.
fn record_rows(pi: &Pi, rows: &[ProviderRow]) -> Recorded {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    rows.iter()
        .map(|row| {
            let requests = record_with(&runtime, pi, &row.scenario, &*row.setup)
                .unwrap_or_else(|e| panic!("{}: {e}", row.name));
            (row.name.clone(), requests)
        })
        .collect()
}

#[test]
fn openai_family_provider_rows_request_as_pi_16() {
    let rows = cases();
    if refreshing() {
        let Some(wrapper) = support::ts16::ts16() else {
            panic!("PI_REQUEST_PARITY_REFRESH=1 needs PI_TS16 (pi 1.6.0's wrapper)");
        };
        write_fixture(FIXTURE, &record_rows(&Pi::Ts16(wrapper), &rows));
        return;
    }
    let theirs = read_fixture(FIXTURE);
    let ours = record_rows(&Pi::Ours, &rows);
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        theirs.keys().collect::<Vec<_>>(),
        "{FIXTURE}: the cases changed; run scripts/refresh-request-parity.sh"
    );
    let mut differences = Vec::new();
    for row in &rows {
        // Compared under the scenario's own name, so the API's known differences apply,
        // after a catalog model's own.
        let one = |recorded: &Recorded| -> Recorded {
            let requests = match &row.catalog {
                Some(key) => {
                    without_known_in(CATALOG_KNOWN, key, &row.scenario.name, &recorded[&row.name])
                }
                None => recorded[&row.name].clone(),
            };
            BTreeMap::from([(row.scenario.name.clone(), requests)])
        };
        for line in compare(&row.api, &one(&ours), &one(&theirs)) {
            differences.push(format!("{}: {line}", row.name));
        }
    }
    assert!(
        differences.is_empty(),
        "{FIXTURE}: {} differences from pi 1.6.0:\n{}",
        differences.len(),
        differences.join("\n")
    );
}
