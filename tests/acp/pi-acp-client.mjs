#!/usr/bin/env node
// An ACP client that drives pi-acp as Zed would, from a scripted scenario, and prints what
// it saw as JSON lines: every session update, every permission request (with the answer it
// gave), and the result or error of every step.
//
//   node pi-acp-client.mjs SCENARIO.json
//
// The scenario: {"piAcpDir": DIR (target/pi-acp), "cwd": ABSOLUTE, "steps": [STEP...],
// "permissions": [OPTION-NAME...], "command"?: [PROGRAM, ARGS...], "mcpServers"?: [...]}
// (the servers session/new hands over), "buffers"?: {PATH: TEXT} (the client offers
// fs/read_text_file and fs/write_text_file over these buffers), "terminal"?: true (the
// client offers terminal/*, running the commands itself), "env"?: {NAME: VALUE} (added to
// the agent's environment), "clientCapabilities"?: {...} (more capabilities for
// initialize, e.g. {"auth": {"terminal": true}}). pi-acp runs pi from
// PI_ACP_PI_COMMAND (the caller's environment); with "command" that program is the agent
// (`pi --mode acp`) and pi-acp is not used (its SDK still drives the client side). Steps,
// run in order:
//   {"op": "initialize"}
//   {"op": "new"}                      session/new; later steps use its sessionId
//   {"op": "new", "cwd": DIR}          ... in another folder than the scenario's
//   {"op": "new", "awaitStartup": true}
//                                      ... and waits for pi-acp's startup notice
//   {"op": "prompt", "text": T}        session/prompt, waits for its stopReason (at most
//                                      "limitMs", 20 s by default: then an error);
//                                      "blocks" gives the prompt's content blocks instead,
//                                      "sessionId" another session than the last one
//   {"op": "prompt", "text": T, "cancelOn": KIND}
//                                      sends session/cancel once an update of that kind
//                                      (e.g. "tool_call") arrives during the prompt, and
//                                      holds "cancelOnText" when given
//   {"op": "setMode", "modeId": M}      session/set_mode
//   {"op": "setConfig", "configId": C, "value": V}
//                                      session/set_config_option
//   {"op": "authenticate", "methodId": ID}
//                                      authenticate
//   {"op": "writeFile", "path": P, "text": T}
//                                      writes a file, as a user would beside the editor
//                                      (e.g. pi's auth.json after a login in a terminal)
//   {"op": "list"}                     session/list ("cwd", "cursor" passed on)
//   {"op": "resume"}                   session/resume of a session ("sessionOfStep": N),
//                                      in the same agent
//   {"op": "close"}                    session/close of the current session
//   {"op": "delete", "sessionOfStep": N}
//                                      session/delete
//   {"op": "load"}                     session/load of the last session in a new pi-acp
//                                      (or agent); "sessionId" names another session
//                                      ("sessionOfStep": N, the one step N opened),
//                                      "cwd" another folder, "sameAgent": true keeps the
//                                      agent running
// Permission requests are answered with the option named by the next entry of
// "permissions" (or cancelled when none is left); forms (`elicitation/create`, offered with
// "clientCapabilities": {"elicitation": {"form": {}}}) with the next entry of "forms":
// {"accept": {FIELD: VALUE}}, "decline", "cancel" (also when none is left), or "never" (no
// answer: the agent's own timeout ends it).

import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Readable, Writable } from "node:stream";

const scenario = JSON.parse(readFileSync(process.argv[2], "utf8"));
const acp = await import(join(scenario.piAcpDir, "node_modules/@agentclientprotocol/sdk/dist/acp.js"));
const adapter = join(scenario.piAcpDir, "node_modules/pi-acp/dist/index.js");

const out = (record) => process.stdout.write(JSON.stringify(record) + "\n");
const answers = [...(scenario.permissions ?? [])];
const forms = [...(scenario.forms ?? [])];
let step = 0;
const terminals = new Map();
let startupSeen = null;
let cancelOn = null;

function connect() {
  // A native ACP agent (`"command": [PROGRAM, ...ARGS]`), else pi-acp in front of pi.
  const [program, ...args] = scenario.command ?? [process.execPath, adapter];
  const child = spawn(program, args, {
    cwd: scenario.cwd,
    stdio: ["pipe", "pipe", "inherit"],
    env: { ...process.env, ...(scenario.env ?? {}) },
  });
  const client = {
    async sessionUpdate(params) {
      out({ step, update: params.update });
      if (params.update.sessionUpdate === "agent_message_chunk") startupSeen?.();
      const matches = !cancelOn?.text || JSON.stringify(params.update).includes(cancelOn.text);
      if (cancelOn && params.update.sessionUpdate === cancelOn.kind && matches) {
        const { connection, sessionId } = cancelOn;
        cancelOn = null;
        await connection.cancel({ sessionId });
      }
    },
    async requestPermission(params) {
      const name = answers.shift();
      const option = params.options.find((o) => o.name === name);
      out({ step, permission: { title: params.toolCall?.title, options: params.options.map((o) => o.name) }, answer: option ? option.name : null });
      return option
        ? { outcome: { outcome: "selected", optionId: option.optionId } }
        : { outcome: { outcome: "cancelled" } };
    },
    async unstable_createElicitation(params) {
      const answer = forms.shift() ?? "cancel";
      out({ step, elicitation: params, answer });
      if (answer === "never") return new Promise(() => {});
      return typeof answer === "string" ? { action: answer } : { action: "accept", content: answer.accept };
    },
    // With "buffers" ({path: text}) the client offers its files: reads see the buffers
    // (unsaved text), writes replace them and are reported.
    async readTextFile(params) {
      const text = scenario.buffers?.[params.path];
      if (text === undefined) throw new Error(`no buffer for ${params.path}`);
      out({ step, fsRead: params.path });
      return { content: text };
    },
    // With "terminal": true the client offers terminals: commands run here, their output
    // and exit status go back, and each is reported.
    async createTerminal(params) {
      if (!scenario.terminal) throw new Error("not offered");
      const id = `term-${terminals.size + 1}`;
      const proc = spawn(params.command, params.args ?? [], { cwd: params.cwd ?? scenario.cwd, stdio: ["ignore", "pipe", "pipe"] });
      const term = { proc, output: "", exit: null };
      proc.stdout.on("data", (d) => (term.output += d));
      proc.stderr.on("data", (d) => (term.output += d));
      term.done = new Promise((resolve) =>
        proc.on("close", (code, signal) => {
          term.exit = { exitCode: code, signal };
          resolve();
        }),
      );
      terminals.set(id, term);
      out({ step, terminal: { id, command: params.command, args: params.args } });
      return { terminalId: id };
    },
    async waitForTerminalExit(params) {
      const term = terminals.get(params.terminalId);
      await term.done;
      return term.exit;
    },
    async terminalOutput(params) {
      const term = terminals.get(params.terminalId);
      return { output: term.output, truncated: false, exitStatus: term.exit ?? undefined };
    },
    async killTerminal(params) {
      const term = terminals.get(params.terminalId);
      term.proc.kill("SIGKILL");
      await term.done;
      out({ step, terminalKilled: params.terminalId });
      return {};
    },
    async releaseTerminal(params) {
      terminals.delete(params.terminalId);
      return {};
    },
    async writeTextFile(params) {
      if (!scenario.buffers) throw new Error("not offered");
      scenario.buffers[params.path] = params.content;
      out({ step, fsWrite: { path: params.path, content: params.content } });
      return {};
    },
  };
  const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
  const connection = new acp.ClientSideConnection(() => client, stream);
  return { child, connection };
}

/// `promise`, or an error naming the limit when it has not settled by then (a prompt that
/// never completes, as a handled command's under pi 1.6.0).
function withLimit(promise, ms) {
  let timer;
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, limit]).finally(() => clearTimeout(timer));
}

let { child, connection } = connect();
let sessionId = null;
// The session each step opened, by step.
const ids = {};
const offersFiles = scenario.buffers !== undefined;
const initialize = () =>
  connection.initialize({
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: {
      ...(offersFiles ? { fs: { readTextFile: true, writeTextFile: true } } : {}),
      ...(scenario.terminal ? { terminal: true } : {}),
      ...(scenario.clientCapabilities ?? {}),
    },
  });

try {
  for (const s of scenario.steps) {
    step += 1;
    try {
      let result;
      switch (s.op) {
        case "initialize":
          result = await initialize();
          break;
        case "new": {
          const startup = new Promise((resolve) => {
            startupSeen = resolve;
          });
          result = await connection.newSession({ cwd: s.cwd ?? scenario.cwd, mcpServers: scenario.mcpServers ?? [] });
          sessionId = result.sessionId;
          ids[step] = sessionId;
          // pi-acp sends its startup notice (pi's version, resources) just after answering;
          // it belongs to this step, not to the next prompt.
          if (s.awaitStartup) await withLimit(startup, 10000);
          break;
        }
        case "prompt":
          if (s.cancelOn) cancelOn = { kind: s.cancelOn, text: s.cancelOnText, connection, sessionId };
          result = await withLimit(
            connection.prompt({ sessionId: s.sessionId ?? sessionId, prompt: s.blocks ?? [{ type: "text", text: s.text }] }),
            s.limitMs ?? 20000,
          );
          cancelOn = null;
          break;
        case "setMode":
          result = await connection.setSessionMode({ sessionId, modeId: s.modeId });
          break;
        case "setConfig":
          result = await connection.setSessionConfigOption({ sessionId, configId: s.configId, value: s.value });
          break;
        case "authenticate":
          result = await connection.authenticate({ methodId: s.methodId });
          break;
        case "writeFile":
          writeFileSync(s.path, s.text);
          break;
        case "list":
          result = await connection.listSessions({ ...(s.cwd ? { cwd: s.cwd } : {}), ...(s.cursor ? { cursor: s.cursor } : {}) });
          break;
        case "resume":
          sessionId = ids[s.sessionOfStep] ?? sessionId;
          result = await connection.resumeSession({ sessionId, cwd: s.cwd ?? scenario.cwd, mcpServers: [] });
          break;
        case "close":
          result = await connection.closeSession({ sessionId });
          break;
        case "delete":
          result = await connection.deleteSession({ sessionId: ids[s.sessionOfStep] });
          break;
        case "load":
          if (!s.sameAgent) {
            child.kill();
            ({ child, connection } = connect());
            await initialize();
          }
          sessionId = s.sessionId ?? ids[s.sessionOfStep] ?? sessionId;
          result = await connection.loadSession({ sessionId, cwd: s.cwd ?? scenario.cwd, mcpServers: [] });
          break;
        default:
          throw new Error(`unknown step ${s.op}`);
      }
      if (result?.sessionId) ids[step] = result.sessionId;
      out({ step, op: s.op, result: result ?? null });
    } catch (error) {
      out({ step, op: s.op, error: { code: error?.code ?? null, message: String(error?.message ?? error), data: error?.data ?? null } });
    }
  }
} finally {
  child.kill();
}
process.exit(0);
