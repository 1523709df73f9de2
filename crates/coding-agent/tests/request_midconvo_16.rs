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

use request_parity::midconvo::cases;
use request_parity::row_fixture::check_row_fixture;

#[test]
fn mid_conversation_changes_as_pi_16() {
    check_row_fixture("midconvo", &cases());
}
