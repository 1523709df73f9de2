//! One codemode call: a worker slot, the script's VM thread, its tool calls run through the
//! agent loop, and the result laid out as pi 1.6 lays it out.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use futures_util::stream::FuturesUnordered;
use pi_agent_core::{AgentTool, AgentToolResult, NestedCaller, NestedOutcome, ToolUpdateFn};
use pi_ai::InputBlock;
use serde_json::{Map, Value, json};
use tokio::sync::{Semaphore, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use super::calls::{self, CallRecord, Status};
use super::catalog::Catalog;
use super::models::ModelsRequest;
use super::output::{self, Block, DEFAULT_MAX_OUTPUT_TOKENS};
use super::source::ScriptSource;
use super::vm::{self, Answer, End, Finished, Launch, Request};
use super::{CodemodeHost, pool};

/// What a call stopped by the user's abort says.
const ABORTED: &str = "This operation was aborted";

/// A script about to run.
pub(super) struct Script {
    pub call_id: String,
    pub source: ScriptSource,
    pub host: Arc<dyn CodemodeHost>,
    pub caller: NestedCaller,
    pub cancel: CancellationToken,
    pub on_update: ToolUpdateFn,
}

/// A tool call of the script in flight: its request, record and tool.
type Running = (u32, usize, Arc<dyn AgentTool>, Option<NestedOutcome>);

/// A model call of the script in flight: its request, record, time taken and result.
type ModelRunning = (u32, usize, Duration, Value);

/// How many model calls of one script run at once (pi 1.6.0); more wait for a slot.
const MAX_CONCURRENT_MODEL_CALLS: usize = 4;

impl Script {
    pub async fn run(self) -> AgentToolResult {
        let started = Instant::now();
        let timeout = self.source.options.timeout_ms.map(Duration::from_millis);
        let wait = timeout.map_or(pool::WORKER_WAIT, |t| t.min(pool::WORKER_WAIT));
        let permit = tokio::select! {
            permit = pool::acquire(wait) => permit,
            () = self.cancel.cancelled() => {
                return not_started(started, &format!("Script aborted: {ABORTED}"));
            }
        };
        let Some(permit) = permit else {
            let why = match self.source.options.timeout_ms {
                Some(ms) if Duration::from_millis(ms) <= pool::WORKER_WAIT => format!(
                    "Script timed out: Execution timed out after {ms} ms while waiting for a free codemode worker"
                ),
                _ => format!(
                    "No codemode worker became free within 60 seconds. All {} workers, shared by every session in this process, are held by other scripts. Retry after they finish.",
                    pool::max_workers()
                ),
            };
            return not_started(started, &why);
        };
        let waited = started.elapsed();
        let remaining = timeout.map(|t| t.saturating_sub(waited).max(Duration::from_millis(1)));
        let catalog = Catalog::new(&self.host.callable(), &self.host.guidelines());
        let stop = Arc::new(AtomicBool::new(false));
        let launch = Launch {
            code: self.source.code.clone(),
            setup: catalog.setup(&self.host.store()),
            deadline: remaining.map(|r| Instant::now() + r),
            stop: stop.clone(),
        };
        let (request_tx, mut requests) = mpsc::unbounded_channel::<Request>();
        let (answer_tx, answer_rx) = std::sync::mpsc::channel::<Answer>();
        let (done_tx, mut done) = oneshot::channel::<Finished>();
        let spawned = std::thread::Builder::new()
            .name("pi-codemode".into())
            .stack_size(vm::THREAD_STACK)
            .spawn(move || {
                let finished = vm::run(launch, request_tx, answer_rx);
                // The slot frees only when the VM is gone.
                drop(permit);
                let _ = done_tx.send(finished);
            });
        if let Err(error) = spawned {
            return not_started(
                started,
                &format!("Script sandbox failed: Failed to start worker: {error}"),
            );
        }

        let mut records: Vec<CallRecord> = Vec::new();
        let mut tokens: Vec<CancellationToken> = Vec::new();
        let mut in_flight = FuturesUnordered::new();
        let mut model_flight: FuturesUnordered<BoxFuture<'static, ModelRunning>> =
            FuturesUnordered::new();
        let model_slots = Arc::new(Semaphore::new(MAX_CONCURRENT_MODEL_CALLS));
        let mut model_calls = 0u32;
        self.publish(&records);
        let mut stopped = false;
        let finished = loop {
            tokio::select! {
                biased;
                finished = &mut done => break finished.ok(),
                Some(request) = requests.recv() => {
                    match request.kind.as_str() {
                        "tool" => match catalog.tool(&request.name).cloned() {
                            Some(tool) => {
                                let index = records.len();
                                records.push(CallRecord::running(&self.call_id, tool.name(), &request.args));
                                self.publish(&records);
                                let token = self.cancel.child_token();
                                tokens.push(token.clone());
                                let arguments = match serde_json::from_str::<Value>(&request.args) {
                                    Ok(Value::Object(map)) => map,
                                    _ => Map::new(),
                                };
                                let caller = self.caller.clone();
                                in_flight.push(async move {
                                    let outcome = caller.call(tool.clone(), arguments, token).await;
                                    (request.id, index, tool, outcome)
                                });
                            }
                            None => settle(&answer_tx, request.id, Err(format!("Tool {} not found", request.name))),
                        },
                        "search" => settle(&answer_tx, request.id, Ok(catalog.search(&parse(&request.args)))),
                        "describe_tool" => {
                            let name = parse(&request.args)["name"].as_str().unwrap_or_default().to_owned();
                            settle(&answer_tx, request.id, Ok(catalog.describe_tool(&name)));
                        }
                        "describe_namespace" => {
                            let name = parse(&request.args)["name"].as_str().unwrap_or_default().to_owned();
                            settle(&answer_tx, request.id, Ok(catalog.describe_namespace(&name)));
                        }
                        "models" => {
                            let token = self.cancel.child_token();
                            match super::models::request(self.host.as_ref(), &parse(&request.args), token.clone()) {
                                Ok(ModelsRequest::Value(value)) => settle(&answer_tx, request.id, Ok(value)),
                                Err(error) => settle(&answer_tx, request.id, Err(error)),
                                Ok(ModelsRequest::Call(call)) => {
                                    model_calls += 1;
                                    let index = records.len();
                                    records.push(CallRecord::model(&self.call_id, call.name, model_calls, &call.reference));
                                    self.publish(&records);
                                    tokens.push(token);
                                    let slots = model_slots.clone();
                                    let id = request.id;
                                    model_flight.push(Box::pin(async move {
                                        let started = Instant::now();
                                        let _slot = slots.acquire_owned().await.ok();
                                        let value = call.run.await;
                                        (id, index, started.elapsed(), value)
                                    }));
                                }
                            }
                        }
                        other => settle(&answer_tx, request.id, Err(format!("Unknown request {other}"))),
                    }
                }
                Some(ended) = in_flight.next(), if !in_flight.is_empty() => {
                    let (id, index, tool, outcome): Running = ended;
                    self.end_call(&mut records, index, outcome.as_ref(), false);
                    let value = match &outcome {
                        Some(outcome) => calls::script_value(tool.as_ref(), outcome),
                        None => Err("Operation aborted".to_owned()),
                    };
                    settle(&answer_tx, id, value);
                    self.publish(&records);
                }
                Some(ended) = model_flight.next(), if !model_flight.is_empty() => {
                    let (id, index, took, value): ModelRunning = ended;
                    if let Some(record) = records.get_mut(index) {
                        record.model_ended(&value, took);
                    }
                    settle(&answer_tx, id, Ok(value));
                    self.publish(&records);
                }
                () = self.cancel.cancelled(), if !stopped => {
                    stopped = true;
                    stop.store(true, Ordering::Relaxed);
                    let _ = answer_tx.send(Answer::Stop);
                }
            }
        };
        // Calls still running when the script ended are cancelled.
        tokens.iter().for_each(CancellationToken::cancel);
        while let Some((_, index, _, outcome)) = in_flight.next().await {
            self.end_call(&mut records, index, outcome.as_ref(), true);
        }
        while let Some((_, index, took, value)) = model_flight.next().await {
            if let Some(record) = records.get_mut(index) {
                record.model_ended(&value, took);
            }
        }
        let finished = finished.unwrap_or(Finished {
            emitted: Vec::new(),
            end: End::Broken("Worker exited before the script settled".into()),
        });
        self.result(started, remaining, finished, records)
    }

    fn publish(&self, records: &[CallRecord]) {
        (self.on_update)(AgentToolResult {
            content: Vec::new(),
            details: Some(json!({ "calls": records })),
            ..AgentToolResult::default()
        });
    }

    fn end_call(
        &self,
        records: &mut [CallRecord],
        index: usize,
        outcome: Option<&NestedOutcome>,
        cancelled: bool,
    ) {
        let Some(record) = records.get_mut(index) else {
            return;
        };
        match outcome {
            Some(outcome) => record.ended(outcome, cancelled),
            None => record.status = Status::Cancelled,
        }
    }

    /// The result: the header block, then the output, the error and its call summary.
    fn result(
        &self,
        started: Instant,
        remaining: Option<Duration>,
        finished: Finished,
        records: Vec<CallRecord>,
    ) -> AgentToolResult {
        let Finished { emitted, end } = finished;
        let (returned, failure) = match end {
            End::Completed { value, store } => {
                self.save_store(store);
                (value.as_deref().map(output::value_text), None)
            }
            End::Failed(error) => (None, Some(error.text())),
            End::Stalled => (
                None,
                Some("Error: The script is waiting on a promise that can never settle: no tool call is pending, and timers do not exist here.".to_owned()),
            ),
            End::TimedOut => (
                None,
                Some(format!(
                    "Script timed out: Execution timed out after {} ms",
                    remaining.map_or(0, |r| r.as_millis().max(1))
                )),
            ),
            End::Aborted => (None, Some(format!("Script aborted: {ABORTED}"))),
            End::Broken(why) => (None, Some(format!("Script sandbox failed: {why}"))),
        };
        let mut blocks = output::format(&emitted, returned);
        if let Some(failure) = &failure {
            blocks.push(Block::Text(format!(
                "Script error:\n{failure}\n\n{}",
                calls::summary(&records)
            )));
        }
        let max_tokens = self
            .source
            .options
            .max_output_tokens
            .unwrap_or(DEFAULT_MAX_OUTPUT_TOKENS);
        let laid = output::truncate(output::join_adjacent_text(blocks), max_tokens);
        let blocks = output::join_adjacent_text(output::save_images(laid.blocks));
        let mut details = json!({ "calls": records });
        if let Some(path) = &laid.full_output_path {
            details["fullOutputPath"] = json!(path.display().to_string());
        }
        let mut content = vec![InputBlock::text(header(started, failure.is_none()))];
        content.extend(blocks.into_iter().map(|block| match block {
            Block::Text(text) => InputBlock::text(text),
            Block::Image { data, mime_type } => {
                InputBlock::Image(pi_ai::ImageContent::new(data, mime_type))
            }
        }));
        AgentToolResult {
            content,
            details: Some(details),
            is_error: failure.is_some(),
            ..AgentToolResult::default()
        }
    }

    fn save_store(&self, writes: Vec<(String, Option<String>)>) {
        if writes.is_empty() {
            return;
        }
        let mut set = Map::new();
        let mut delete = Vec::new();
        for (key, json) in writes {
            match json.and_then(|j| serde_json::from_str::<Value>(&j).ok()) {
                Some(value) => {
                    set.insert(key, value);
                }
                None => delete.push(Value::String(key)),
            }
        }
        self.host
            .save_store(json!({ "set": set, "delete": delete }));
    }
}

fn parse(args: &str) -> Value {
    serde_json::from_str(args).unwrap_or(Value::Null)
}

/// Answers request `id`: a value (`Null` is `undefined`) or a rejection's message.
fn settle(answers: &std::sync::mpsc::Sender<Answer>, id: u32, value: Result<Value, String>) {
    let answer = match value {
        Ok(Value::Null) => Answer::Settle {
            id,
            ok: true,
            payload: String::new(),
        },
        Ok(value) => Answer::Settle {
            id,
            ok: true,
            payload: value.to_string(),
        },
        Err(message) => Answer::Settle {
            id,
            ok: false,
            payload: message,
        },
    };
    let _ = answers.send(answer);
}

fn header(started: Instant, ok: bool) -> String {
    format!(
        "{}\nWall time {:.1} seconds\nOutput:\n",
        if ok {
            "Script completed"
        } else {
            "Script failed"
        },
        started.elapsed().as_secs_f64()
    )
}

/// A script that got no worker.
fn not_started(started: Instant, why: &str) -> AgentToolResult {
    AgentToolResult {
        content: vec![
            InputBlock::text(header(started, false)),
            InputBlock::text(format!("Script error:\n{why}\n\nThe script did not start.")),
        ],
        details: Some(json!({ "calls": [] })),
        is_error: true,
        ..AgentToolResult::default()
    }
}
