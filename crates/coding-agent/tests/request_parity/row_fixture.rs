//! The comparison every ledger-case test makes: record its cases through ours and compare
//! with what pi 1.6.0 sent (the fixture), or rewrite the fixture when refreshing.

use std::collections::BTreeMap;

use super::rows::RowCase;
use super::{Pi, Recorded, compare, read_fixture, record_with, refreshing, write_fixture};

/// Runs every case through `pi`, keyed by case name.
fn record_cases(pi: &Pi, cases: &[RowCase]) -> Recorded {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    cases
        .iter()
        .map(|case| {
            let requests = record_with(&runtime, pi, &case.scenario, &|url| case.setup(url))
                .unwrap_or_else(|e| panic!("{}: {e}", case.name));
            (case.name.to_owned(), requests)
        })
        .collect()
}

/// Checks `cases` against the fixture named `fixture` (or rewrites it from pi 1.6.0 when
/// `PI_REQUEST_PARITY_REFRESH=1`), failing with every difference not known.
pub fn check_row_fixture(fixture: &str, cases: &[RowCase]) {
    if refreshing() {
        let Some(wrapper) = crate::support::ts16::ts16() else {
            panic!("PI_REQUEST_PARITY_REFRESH=1 needs PI_TS16 (pi 1.6.0's wrapper)");
        };
        write_fixture(fixture, &record_cases(&Pi::Ts16(wrapper), cases));
        return;
    }
    let theirs = read_fixture(fixture);
    let ours = record_cases(&Pi::Ours, cases);
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        theirs.keys().collect::<Vec<_>>(),
        "{fixture}: the cases changed; run scripts/refresh-request-parity.sh"
    );
    let mut differences = Vec::new();
    for case in cases {
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
        "{fixture}: {} differences from pi 1.6.0:\n{}",
        differences.len(),
        differences.join("\n")
    );
}
