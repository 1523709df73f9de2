//! Request parity with pi 1.6.0 for the built-in catalog's models: the first model of each
//! kind (provider, wire API, compat flags, reasoning, headers; `request_parity/catalog.rs`)
//! with its provider routed to a capturing mock, once with thinking off and once through a
//! tool round trip at its highest thinking level. What ours sends must be what pi 1.6.0 sent
//! in the same runs, kept as fixtures (`tests/fixtures/request_parity_16/catalog-*.json`)
//! that `scripts/refresh-request-parity.sh` rewrites; the differences that stay are in
//! `request_parity/known.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod request_parity;
mod support;

use std::collections::BTreeMap;

use request_parity::catalog::{CatalogCase, cases};
use request_parity::catalog_known::CATALOG_KNOWN;
use request_parity::known::without_known_in;
use request_parity::{Pi, Recorded, compare, read_fixture, record_with, refreshing, write_fixture};

/// Which fixture a model's API belongs to (one test, and one fixture, per group).
fn group_of(api: &str) -> &'static str {
    match api {
        "openai-completions" => "openai-completions",
        "anthropic-messages" => "anthropic-messages",
        "openai-responses" | "azure-openai-responses" | "openai-codex-responses" => {
            "openai-responses"
        }
        _ => "other-apis",
    }
}

/// The fixture key of a case's scenario.
fn key(case: &CatalogCase, scenario: &str) -> String {
    format!("{} {scenario}", case.key())
}

/// Runs every case of `group` through `pi`.
fn record_group(pi: &Pi, group: &str) -> Recorded {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut out = BTreeMap::new();
    for case in cases().into_iter().filter(|c| group_of(&c.api) == group) {
        for scenario in case.scenarios() {
            let requests = record_with(&runtime, pi, &scenario, &|url| case.setup(url))
                .unwrap_or_else(|e| panic!("{} {}: {e}", case.key(), scenario.name));
            out.insert(key(&case, &scenario.name), requests);
        }
    }
    out
}

/// Compares ours with the fixture of `group`, or rewrites it from pi 1.6.0.
fn check(group: &str) {
    let fixture = format!("catalog-{group}");
    if refreshing() {
        let Some(wrapper) = support::ts16::ts16() else {
            panic!("PI_REQUEST_PARITY_REFRESH=1 needs PI_TS16 (pi 1.6.0's wrapper)");
        };
        write_fixture(&fixture, &record_group(&Pi::Ts16(wrapper), group));
        return;
    }
    let theirs = read_fixture(&fixture);
    let ours = record_group(&Pi::Ours, group);
    // The catalog and the fixture name the same runs: a catalog change needs a refresh.
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        theirs.keys().collect::<Vec<_>>(),
        "{fixture}: the catalog's cases changed; run scripts/refresh-request-parity.sh"
    );
    let mut differences = Vec::new();
    for case in cases().into_iter().filter(|c| group_of(&c.api) == group) {
        for scenario in case.scenarios() {
            let k = key(&case, &scenario.name);
            // The catalog's own known differences for this model go first.
            let one = |recorded: &Recorded| -> Recorded {
                let requests =
                    without_known_in(CATALOG_KNOWN, &case.key(), &scenario.name, &recorded[&k]);
                BTreeMap::from([(scenario.name.clone(), requests)])
            };
            for line in compare(&case.api, &one(&ours), &one(&theirs)) {
                differences.push(format!("{}: {line}", case.key()));
            }
        }
    }
    assert!(
        differences.is_empty(),
        "{fixture}: {} differences from pi 1.6.0:\n{}",
        differences.len(),
        differences.join("\n")
    );
}

#[test]
fn openai_completions_catalog_models_request_as_pi_16() {
    check("openai-completions");
}

#[test]
fn anthropic_messages_catalog_models_request_as_pi_16() {
    check("anthropic-messages");
}

#[test]
fn openai_responses_catalog_models_request_as_pi_16() {
    check("openai-responses");
}

#[test]
fn other_apis_catalog_models_request_as_pi_16() {
    check("other-apis");
}
