//! The differences from pi 1.6.0 that stay for catalog models (`catalog_requests_16.rs`),
//! by `provider/id` pattern (`*` at the end matches a prefix). Each is open work in ours,
//! named in its reason; the wire API's own entries (`known.rs`) apply as well.

use super::known::{Known, Part};

/// An entry for the models `key` names, every scenario and request.
const fn entry(key: &'static str, part: Part, reason: &'static str) -> Known {
    Known {
        api: key,
        scenario: "*",
        request: None,
        part,
        reason,
    }
}

const FITTED_MAX_TOKENS: &str = "pi 1.6.0 fits the output cap into the context left after \
    the prompt, which it estimates from its own system prompt's wording; ours is our own \
    wording, so a cap fitted near the window differs by that much; which field carries \
    the cap is compared (the request-parity scenarios compare the cap where it is not fitted)";

const CLAUDE_5_CONTROLS: &str = "open: pi 1.6.0 sends Bedrock's Fable 5 its fallbacks in \
    `additionalModelRequestFields`; ours sends none (per-message effort, thinking binding, \
    inline tool changes with their beta and Anthropic `fallbacks` are compared)";

const TOOL_SEARCH: &str = "open (issue 39, tool search): pi 1.6.0 gives models with native \
    tool search their tools as an `additional_tools` input item with deferred loading; ours \
    sends them as plain tools";

const CLOCK_IDS: &str = "a Gemini function call without an id gets one made from the clock \
    (`<name>_<ms>_<n>`) by both pis, so the ids differ by the time of the run; that both \
    send one, on the call and on its response, is what the recorded requests show";

/// The catalog differences that stay.
pub const CATALOG_KNOWN: &[Known] = &[
    entry(
        "*",
        Part::Values(&[
            "/body/max_tokens",
            "/body/max_output_tokens",
            "/body/max_completion_tokens",
        ]),
        FITTED_MAX_TOKENS,
    ),
    entry(
        "*claude-fable-5*",
        Part::Fields(&["/body/additionalModelRequestFields"]),
        CLAUDE_5_CONTROLS,
    ),
    entry(
        "*gpt-5.6-luna",
        Part::Fields(&["/body/input", "/body/tools"]),
        TOOL_SEARCH,
    ),
    entry(
        "*gpt-6-astra",
        Part::Fields(&["/body/input", "/body/tools", "/body/reasoning/effort"]),
        TOOL_SEARCH,
    ),
    entry(
        "openai-codex/*",
        Part::Request("GET /backend-api/codex/responses"),
        "both pis try the Codex WebSocket first (the mock refuses it here, then both use \
         SSE); the upgrade carries each WebSocket client's own handshake headers",
    ),
    entry(
        "opencode-go/gemini-4-argon",
        Part::Fields(&[
            "/body/contents/*/parts/*/functionCall/id",
            "/body/contents/*/parts/*/functionResponse/id",
        ]),
        CLOCK_IDS,
    ),
    entry(
        "opencode/gemini-3.5-flash",
        Part::Fields(&[
            "/body/contents/*/parts/*/functionCall/id",
            "/body/contents/*/parts/*/functionResponse/id",
        ]),
        CLOCK_IDS,
    ),
];
