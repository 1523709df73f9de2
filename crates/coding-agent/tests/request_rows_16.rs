//! Request parity with pi 1.6.0 for the upstream ledger's request rows
//! (`request_parity/rows.rs`): custom models' compat and sampling settings, a model switch
//! within a session, and a compaction's summary request. What ours sends must be what
//! pi 1.6.0 sent in the same runs, kept as a fixture (`tests/fixtures/request_parity_16/
//! rows.json`) that `scripts/refresh-request-parity.sh` rewrites; the differences that
//! stay are in `request_parity/known.rs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod request_parity;
mod support;

use request_parity::row_fixture::check_row_fixture;
use request_parity::rows::cases;

#[test]
fn ledger_request_rows_as_pi_16() {
    check_row_fixture("rows", &cases());
}
