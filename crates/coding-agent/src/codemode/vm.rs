//! A script's QuickJS VM, run on a thread of its own: it sets up the globals
//! (`prelude.js`), runs the script as the body of an async function, passes the script's
//! requests (tool calls, tool search) out and their answers back in, and reports what the
//! script printed and how it ended.

use std::cell::RefCell;
use std::collections::HashSet;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::Instant;

use rquickjs::context::EvalOptions;
use rquickjs::{CatchResultExt, Context, Ctx, Function, Object, Persistent, Runtime, Value};
use serde::Deserialize;
use tokio::sync::mpsc::UnboundedSender;

const PRELUDE: &str = include_str!("prelude.js");
/// A script's VM may hold this much memory (pi 1.6: 256 MiB).
const MEMORY_LIMIT: usize = 256 * 1024 * 1024;
/// The VM's stack (pi 1.6: 512 KiB); the thread's own stack is larger.
const MAX_STACK: usize = 512 * 1024;
pub(crate) const THREAD_STACK: usize = 4 * 1024 * 1024;

/// What a script asked of the host.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Request {
    pub id: u32,
    /// `tool`, `search`, `describe_tool` or `describe_namespace`.
    pub kind: String,
    /// The tool's name for `tool`.
    pub name: String,
    /// The arguments as JSON.
    pub args: String,
}

/// An answer to a [`Request`], or the order to stop.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Answer {
    /// `ok`: `payload` is the value as JSON (empty for `undefined`); else the error text.
    Settle {
        id: u32,
        ok: bool,
        payload: String,
    },
    Stop,
}

/// One thing the script printed, in order.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Emitted {
    Text(String),
    Console(String),
    /// A checked image: its MIME type and base64 data.
    Image {
        mime_type: String,
        data: String,
    },
}

/// An error as the script's VM described it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
pub(crate) struct ScriptError {
    pub name: Option<String>,
    pub message: String,
    pub stack: Option<String>,
}

impl ScriptError {
    /// The text after `Script error:` (pi 1.6: the stack, or `name: message`).
    pub fn text(&self) -> String {
        match &self.stack {
            Some(stack) => stack.clone(),
            None => format!(
                "{}: {}",
                self.name.as_deref().unwrap_or("Error"),
                self.message
            ),
        }
    }
}

/// How a script ended.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum End {
    /// Returned (`value` is the returned value as JSON) or called `exit()`; `store` holds
    /// its writes, `None` for a deletion.
    Completed {
        value: Option<String>,
        store: Vec<(String, Option<String>)>,
    },
    Failed(ScriptError),
    /// Waiting on a promise nothing can settle.
    Stalled,
    TimedOut,
    Aborted,
    /// The VM itself failed.
    Broken(String),
}

/// A finished script: its output and its end.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Finished {
    pub emitted: Vec<Emitted>,
    pub end: End,
}

/// What a VM needs to run one script.
pub(crate) struct Launch {
    pub code: String,
    /// The prelude's setup JSON: `{ tools: [{id, name}], allTools: [...], store: {...} }`.
    pub setup: String,
    pub deadline: Option<Instant>,
    /// Set by the host to stop the script (the interrupt handler reads it).
    pub stop: Arc<AtomicBool>,
}

#[derive(Default)]
struct State {
    emitted: Vec<Emitted>,
    next_id: u32,
    pending: HashSet<u32>,
    report: Option<String>,
}

#[derive(Deserialize)]
struct Report {
    ok: bool,
    value: Option<String>,
    #[serde(default)]
    store: Vec<Vec<String>>,
    error: Option<ScriptError>,
}

fn eval_options(filename: &str) -> EvalOptions {
    let mut options = EvalOptions::default();
    options.strict = false;
    options.filename = Some(filename.to_owned());
    options
}

/// Runs `launch` to its end on the calling thread.
pub(crate) fn run(
    launch: Launch,
    requests: UnboundedSender<Request>,
    answers: Receiver<Answer>,
) -> Finished {
    let state = Rc::new(RefCell::new(State::default()));
    let fired = Arc::new(AtomicBool::new(false));
    let end = match drive(&launch, &state, &fired, &requests, &answers) {
        Ok(end) => end,
        Err(error) => End::Broken(error.to_string()),
    };
    let emitted = std::mem::take(&mut state.borrow_mut().emitted);
    Finished { emitted, end }
}

fn drive(
    launch: &Launch,
    state: &Rc<RefCell<State>>,
    fired: &Arc<AtomicBool>,
    requests: &UnboundedSender<Request>,
    answers: &Receiver<Answer>,
) -> rquickjs::Result<End> {
    let runtime = Runtime::new()?;
    runtime.set_memory_limit(MEMORY_LIMIT);
    runtime.set_max_stack_size(MAX_STACK);
    let (stop, deadline, flag) = (launch.stop.clone(), launch.deadline, fired.clone());
    runtime.set_interrupt_handler(Some(Box::new(move || {
        let now = stop.load(Ordering::Relaxed) || deadline.is_some_and(|d| Instant::now() >= d);
        if now {
            flag.store(true, Ordering::Relaxed);
        }
        now
    })));
    let context = Context::full(&runtime)?;
    let settle = context.with(|ctx| start(&ctx, launch, state, requests))?;
    let interrupted = || {
        if launch.stop.load(Ordering::Relaxed) {
            Some(End::Aborted)
        } else if fired.load(Ordering::Relaxed)
            || launch.deadline.is_some_and(|d| Instant::now() >= d)
        {
            Some(End::TimedOut)
        } else {
            None
        }
    };
    loop {
        while runtime.is_job_pending() {
            if runtime.execute_pending_job().is_err() && fired.load(Ordering::Relaxed) {
                break;
            }
        }
        if let Some(end) = interrupted() {
            return Ok(end);
        }
        if let Some(report) = state.borrow_mut().report.take() {
            return Ok(end_of(&report));
        }
        if state.borrow().pending.is_empty() {
            return Ok(End::Stalled);
        }
        let answer = match launch.deadline {
            Some(deadline) => {
                answers.recv_timeout(deadline.saturating_duration_since(Instant::now()))
            }
            None => answers.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        match answer {
            Ok(Answer::Settle { id, ok, payload }) => {
                if !state.borrow_mut().pending.remove(&id) {
                    continue;
                }
                context.with(|ctx| -> rquickjs::Result<()> {
                    let settle = settle.clone().restore(&ctx)?;
                    // A throw here is the script's own code failing in a callback it ran
                    // synchronously: its promise chain reports it.
                    let _ = settle.call::<_, ()>((id, ok, payload)).catch(&ctx);
                    Ok(())
                })?;
            }
            Ok(Answer::Stop) | Err(RecvTimeoutError::Disconnected) => return Ok(End::Aborted),
            Err(RecvTimeoutError::Timeout) => return Ok(End::TimedOut),
        }
    }
}

/// Sets up the globals and starts the script; gives the prelude's `settle`.
fn start<'js>(
    ctx: &Ctx<'js>,
    launch: &Launch,
    state: &Rc<RefCell<State>>,
    requests: &UnboundedSender<Request>,
) -> rquickjs::Result<Persistent<Function<'static>>> {
    let host = Object::new(ctx.clone())?;
    let calls = state.clone();
    let out = requests.clone();
    host.set(
        "call",
        Function::new(
            ctx.clone(),
            move |kind: String, name: String, args: String| -> u32 {
                let mut state = calls.borrow_mut();
                state.next_id += 1;
                let id = state.next_id;
                state.pending.insert(id);
                let _ = out.send(Request {
                    id,
                    kind,
                    name,
                    args,
                });
                id
            },
        )?,
    )?;
    let emits = state.clone();
    host.set(
        "emit",
        Function::new(ctx.clone(), move |kind: String, data: String| {
            let item = match kind.as_str() {
                "console" => Emitted::Console(data),
                "image" => {
                    let (mime_type, data) = data.split_once(',').unwrap_or(("", &data));
                    Emitted::Image {
                        mime_type: mime_type.to_owned(),
                        data: data.to_owned(),
                    }
                }
                _ => Emitted::Text(data),
            };
            emits.borrow_mut().emitted.push(item);
        })?,
    )?;
    let finishes = state.clone();
    host.set(
        "finish",
        Function::new(ctx.clone(), move |report: String| {
            finishes.borrow_mut().report.get_or_insert(report);
        })?,
    )?;
    let prelude: Function = ctx.eval_with_options(PRELUDE, eval_options("codemode-prelude.js"))?;
    let api: Object = prelude.call((host, launch.setup.as_str()))?;
    let run: Function = api.get("run")?;
    let settle: Function = api.get("settle")?;
    let wrapped = format!("(async (tools, console) => {{{}\n}})", launch.code);
    match ctx
        .eval_with_options::<Value, _>(wrapped, eval_options("codemode.js"))
        .catch(ctx)
    {
        // The prelude's `run` describes whatever the script throws, a syntax error too.
        // A deadline or stop reached while the script's first steps run ends the call
        // with an uncatchable error; the driver reports it as a time-out or an abort.
        Ok(script) => {
            let _ = run.call::<_, ()>((script,)).catch(ctx);
        }
        Err(error) => {
            let report = serde_json::json!({
                "ok": false,
                "error": syntax_error(&error),
            });
            state.borrow_mut().report = Some(report.to_string());
        }
    }
    Ok(Persistent::save(ctx, settle))
}

/// A script that did not compile, described as the prelude describes errors.
fn syntax_error(error: &rquickjs::CaughtError<'_>) -> serde_json::Value {
    match error {
        rquickjs::CaughtError::Exception(exception) => {
            let name = exception
                .get::<_, String>("name")
                .unwrap_or_else(|_| "SyntaxError".into());
            let message = exception.message().unwrap_or_default();
            let head = if message.is_empty() {
                name.clone()
            } else {
                format!("{name}: {message}")
            };
            let frames: Vec<String> = exception
                .stack()
                .unwrap_or_default()
                .lines()
                .filter(|l| !l.trim().is_empty() && !l.contains("codemode-prelude.js"))
                .map(str::to_owned)
                .collect();
            let stack = std::iter::once(head)
                .chain(frames)
                .collect::<Vec<_>>()
                .join("\n");
            serde_json::json!({"name": name, "message": message, "stack": stack})
        }
        other => serde_json::json!({"message": other.to_string()}),
    }
}

fn end_of(report: &str) -> End {
    let Ok(report) = serde_json::from_str::<Report>(report) else {
        return End::Broken(format!("Sandbox bridge broken: unreadable report {report}"));
    };
    if report.ok {
        End::Completed {
            value: report.value,
            store: report
                .store
                .into_iter()
                .filter_map(|write| {
                    let mut write = write.into_iter();
                    let key = write.next()?;
                    Some((key, write.next()))
                })
                .collect(),
        }
    } else {
        End::Failed(report.error.unwrap_or_default())
    }
}
