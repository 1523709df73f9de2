//! Inputs the fuzz targets (`fuzz/`) found crashing pi-ai, replayed through the same public
//! entry points: each must end in a final message, never a panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::convert::Infallible;

use bytes::Bytes;
use pi_ai::providers::bedrock::eventstream::Message;
use pi_ai::providers::{anthropic_messages, bedrock, google, openai_completions};
use pi_ai::{AssistantMessage, AssistantMessageEventStream, api};
use tokio_util::sync::CancellationToken;

type Body = futures_util::stream::Iter<std::vec::IntoIter<Result<Bytes, Infallible>>>;

fn body(bytes: &[u8]) -> Body {
    futures_util::stream::iter(vec![Ok(Bytes::copy_from_slice(bytes))])
}

async fn decode(api: &str, bytes: &[u8]) -> AssistantMessage {
    let model = common::mock_model(api, "p", "m", "http://127.0.0.1:1".into());
    let cancel = CancellationToken::new();
    let stream: AssistantMessageEventStream = match api {
        api::ANTHROPIC_MESSAGES => {
            anthropic_messages::decode_sse_bytes(&model, body(bytes), cancel)
        }
        api::OPENAI_COMPLETIONS => {
            openai_completions::decode_sse_bytes(&model, body(bytes), cancel)
        }
        api::GOOGLE_GENERATIVE_AI => google::decode_sse_bytes(&model, body(bytes), cancel),
        api::BEDROCK_CONVERSE_STREAM => bedrock::decode_bytes(&model, body(bytes), cancel),
        other => panic!("no decoder for {other}"),
    };
    stream.result().await
}

/// Token counts are the provider's: summed past `u64::MAX` they overflowed (a panic where
/// overflow is checked, a wrapped total elsewhere); they saturate.
#[tokio::test]
async fn token_counts_near_u64_max_saturate() {
    let max = u64::MAX;
    let anthropic = decode(
        api::ANTHROPIC_MESSAGES,
        b"data:{\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":18446744073709551615,\"output_tokens\":1}}}\n\n",
    )
    .await;
    assert_eq!(anthropic.usage.total_tokens, max);

    let openai = decode(
        api::OPENAI_COMPLETIONS,
        b"data:{\"usage\":{\"prompt_tokens\":18446744073709551615,\"completion_tokens\":9}}\n\n",
    )
    .await;
    assert_eq!(openai.usage.total_tokens, max);

    let google = decode(
        api::GOOGLE_GENERATIVE_AI,
        b"data: {\"usageMetadata\":{\"candidatesTokenCount\":18446744073709551615,\"thoughtsTokenCount\":9}}\n\n",
    )
    .await;
    assert_eq!(google.usage.output, max);

    let metadata = Message::new(
        &[(":message-type", "event"), (":event-type", "metadata")],
        &b"{\"usage\":{\"inputTokens\":18446744073709551615,\"outputTokens\":20}}"[..],
    );
    let bedrock = decode(api::BEDROCK_CONVERSE_STREAM, &metadata.encode()).await;
    assert_eq!(bedrock.usage.total_tokens, max);
}
