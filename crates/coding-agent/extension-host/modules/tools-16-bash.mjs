/** pi 1.6.0's bash tool factory (createBashTool, createBashToolDefinition, createLocalBashOperations, OutputAccumulator). */
import { createWriteStream } from "node:fs";
import { constants as fsConstants } from "node:fs";
import { access as fsAccess, open as fsOpen } from "node:fs/promises";
import { randomBytes } from "node:crypto";
import { spawn } from "node:child_process";
import { constants as osConstants, tmpdir } from "node:os";
import { join } from "node:path";
import { loadDist } from "../lib/native.mjs";
import {
	BASH_UPDATE_THROTTLE_MS,
	DEFAULT_MAX_BYTES,
	DEFAULT_MAX_LINES,
	MAX_TIMEOUT_MS,
	STRUCTURED_OUTPUT_MAX_BYTES,
	formatSize,
	renderersOf,
	truncateTail,
	typebox,
	wrapToolDefinition,
} from "./tools-16-common.mjs";

// ---------------------------------------------------------------------------------------
// bash

function byteLength(text) {
	return Buffer.byteLength(text, "utf-8");
}

function createOutputFileStream(prefix, extension) {
	const file = join(tmpdir(), `${prefix}-${randomBytes(8).toString("hex")}${extension}`);
	return { path: file, stream: createWriteStream(file, { mode: 0o600, flags: "wx" }) };
}

/** 1.6.0's OutputAccumulator (line counting and `readFullOutput`). */
export class OutputAccumulator {
	decoder = new TextDecoder();
	rawChunks = [];
	tailText = "";
	tailBytes = 0;
	tailStartsAtLineBoundary = true;
	totalRawBytes = 0;
	totalDecodedBytes = 0;
	completedLines = 0;
	totalLines = 0;
	currentLineBytes = 0;
	hasOpenLine = false;
	finished = false;
	tempFilePath;
	tempFileStream;
	constructor(options = {}) {
		this.maxLines = options.maxLines ?? DEFAULT_MAX_LINES;
		this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
		this.maxRollingBytes = Math.max(this.maxBytes * 2, 1);
		this.tempFilePrefix = options.tempFilePrefix ?? "pi-output";
	}
	append(data) {
		if (this.finished) throw new Error("Cannot append to a finished output accumulator");
		this.totalRawBytes += data.length;
		this.appendDecodedText(this.decoder.decode(data, { stream: true }));
		if (this.tempFileStream || this.shouldUseTempFile()) {
			this.ensureTempFile();
			this.tempFileStream?.write(data);
		} else if (data.length > 0) {
			this.rawChunks.push(data);
		}
	}
	finish() {
		if (this.finished) return;
		this.finished = true;
		this.appendDecodedText(this.decoder.decode());
		if (this.shouldUseTempFile()) this.ensureTempFile();
	}
	snapshot(options = {}) {
		const snapshotText = this.getSnapshotText() || this.tailText;
		const tailTruncation = truncateTail(snapshotText, { maxLines: this.maxLines, maxBytes: this.maxBytes });
		const truncated = this.totalLines > this.maxLines || this.totalDecodedBytes > this.maxBytes;
		const truncatedBy = truncated
			? (tailTruncation.truncatedBy ?? (this.totalDecodedBytes > this.maxBytes ? "bytes" : "lines"))
			: null;
		const truncation = {
			...tailTruncation,
			truncated,
			truncatedBy,
			totalLines: this.totalLines,
			totalBytes: this.totalDecodedBytes,
			maxLines: this.maxLines,
			maxBytes: this.maxBytes,
		};
		if (options.persistIfTruncated && truncation.truncated) this.ensureTempFile();
		return { content: truncation.content, truncation, fullOutputPath: this.tempFilePath };
	}
	async closeTempFile() {
		if (!this.tempFileStream) return;
		const stream = this.tempFileStream;
		this.tempFileStream = undefined;
		await new Promise((resolve, reject) => {
			const onError = (error) => {
				stream.off("finish", onFinish);
				reject(error);
			};
			const onFinish = () => {
				stream.off("error", onError);
				resolve();
			};
			stream.once("error", onError);
			stream.once("finish", onFinish);
			stream.end();
		});
	}
	/** The whole output, or its first and last `maxBytes / 2` bytes when it is longer. */
	async readFullOutput(maxBytes) {
		if (!this.tempFilePath) return { content: new TextDecoder().decode(Buffer.concat(this.rawChunks)), truncated: false };
		const file = await fsOpen(this.tempFilePath, "r");
		try {
			const size = (await file.stat()).size;
			if (size <= maxBytes) return { content: new TextDecoder().decode(await file.readFile()), truncated: false };
			const headBytes = Math.floor(maxBytes / 2);
			const tailBytes = maxBytes - headBytes;
			const head = Buffer.alloc(headBytes);
			const tail = Buffer.alloc(tailBytes);
			await file.read(head, 0, headBytes, 0);
			await file.read(tail, 0, tailBytes, size - tailBytes);
			const headText = new TextDecoder().decode(head, { stream: true });
			let tailStart = 0;
			while (tailStart < tail.length && (tail[tailStart] & 0xc0) === 0x80) tailStart++;
			const tailText = new TextDecoder().decode(tail.subarray(tailStart));
			const omitted = size - headBytes - tailBytes;
			return { content: `${headText}\n\n[... ${omitted} bytes omitted ...]\n\n${tailText}`, truncated: true };
		} finally {
			await file.close();
		}
	}
	getLastLineBytes() {
		return this.currentLineBytes;
	}
	appendDecodedText(text) {
		if (text.length === 0) return;
		const bytes = byteLength(text);
		this.totalDecodedBytes += bytes;
		this.tailText += text;
		this.tailBytes += bytes;
		if (this.tailBytes > this.maxRollingBytes * 2) this.trimTail();
		let newlines = 0;
		let lastNewline = -1;
		for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) {
			newlines++;
			lastNewline = i;
		}
		if (newlines === 0) {
			this.currentLineBytes += bytes;
			this.hasOpenLine = true;
		} else {
			this.completedLines += newlines;
			const tail = text.slice(lastNewline + 1);
			this.currentLineBytes = byteLength(tail);
			this.hasOpenLine = tail.length > 0;
		}
		this.totalLines = this.completedLines + (this.hasOpenLine ? 1 : 0);
	}
	trimTail() {
		const buffer = Buffer.from(this.tailText, "utf-8");
		if (buffer.length <= this.maxRollingBytes) {
			this.tailBytes = buffer.length;
			return;
		}
		let start = buffer.length - this.maxRollingBytes;
		while (start < buffer.length && (buffer[start] & 0xc0) === 0x80) start++;
		this.tailStartsAtLineBoundary = start === 0 ? this.tailStartsAtLineBoundary : buffer[start - 1] === 0x0a;
		this.tailText = buffer.subarray(start).toString("utf-8");
		this.tailBytes = byteLength(this.tailText);
	}
	getSnapshotText() {
		if (this.tailStartsAtLineBoundary) return this.tailText;
		const firstNewline = this.tailText.indexOf("\n");
		return firstNewline === -1 ? this.tailText : this.tailText.slice(firstNewline + 1);
	}
	shouldUseTempFile() {
		return this.totalRawBytes > this.maxBytes || this.totalDecodedBytes > this.maxBytes || this.totalLines > this.maxLines;
	}
	ensureTempFile() {
		if (this.tempFilePath) return;
		const { path: file, stream } = createOutputFileStream(this.tempFilePrefix, ".log");
		this.tempFilePath = file;
		this.tempFileStream = stream;
		for (const chunk of this.rawChunks) this.tempFileStream.write(chunk);
		this.rawChunks = [];
	}
}

function resolveTimeoutMs(timeout) {
	if (timeout === undefined) return undefined;
	if (!Number.isFinite(timeout) || timeout <= 0) throw new Error("Invalid timeout: must be a finite number of seconds");
	const timeoutMs = timeout * 1000;
	if (timeoutMs > MAX_TIMEOUT_MS) throw new Error(`Invalid timeout: maximum is ${MAX_TIMEOUT_MS / 1000} seconds`);
	return timeoutMs;
}

class ShellTimeoutError extends Error {
	constructor(timeout, shellExit) {
		super(`timeout:${timeout}`);
		this.shellExit = shellExit;
	}
}

function createLocalShellOperations(shellName, resolveShellConfig) {
	return {
		exec: async (command, cwd, { onData, signal, timeout, env }) => {
			const shell = loadDist("utils/shell.js");
			const { waitForChildProcess } = loadDist("utils/child-process.js");
			const timeoutMs = resolveTimeoutMs(timeout);
			if (signal?.aborted) throw new Error("aborted");
			const shellConfig = resolveShellConfig();
			try {
				await fsAccess(cwd, fsConstants.F_OK);
			} catch {
				throw new Error(`Working directory does not exist: ${cwd}\nCannot execute ${shellName} commands.`);
			}
			const commandFromStdin = shellConfig.commandTransport === "stdin";
			const child = spawn(shellConfig.shell, commandFromStdin ? shellConfig.args : [...shellConfig.args, command], {
				cwd,
				detached: process.platform !== "win32",
				env: env ?? shell.getShellEnv(),
				stdio: [commandFromStdin ? "pipe" : "ignore", "pipe", "pipe"],
				windowsHide: true,
			});
			if (commandFromStdin) {
				child.stdin?.on("error", () => {});
				child.stdin?.end(command);
			}
			if (child.pid) shell.trackDetachedChildPid(child.pid);
			const startedAt = performance.now();
			let shellExitedAfterMs;
			child.once("exit", () => {
				shellExitedAfterMs = performance.now() - startedAt;
			});
			let timedOut = false;
			let exitedBeforeDeadlineAfterMs;
			let timeoutHandle;
			const onAbort = () => {
				if (child.pid) shell.killProcessTree(child.pid);
			};
			try {
				if (timeoutMs !== undefined) {
					timeoutHandle = setTimeout(() => {
						timedOut = true;
						exitedBeforeDeadlineAfterMs = shellExitedAfterMs;
						if (child.pid) shell.killProcessTree(child.pid);
					}, timeoutMs);
				}
				child.stdout?.on("data", onData);
				child.stderr?.on("data", onData);
				if (signal) {
					if (signal.aborted) onAbort();
					else signal.addEventListener("abort", onAbort, { once: true });
				}
				const exitCode = await waitForChildProcess(child);
				if (signal?.aborted) throw new Error("aborted");
				const signalCode = child.signalCode;
				const resolvedExitCode = exitCode ?? (signalCode ? 128 + (osConstants.signals[signalCode] ?? 0) : 1);
				if (timedOut) {
					throw new ShellTimeoutError(
						timeout,
						exitedBeforeDeadlineAfterMs !== undefined
							? { exitCode: resolvedExitCode, afterSeconds: Math.round(exitedBeforeDeadlineAfterMs / 100) / 10 }
							: undefined,
					);
				}
				return { exitCode: resolvedExitCode };
			} finally {
				if (child.pid) shell.untrackDetachedChildPid(child.pid);
				if (timeoutHandle) clearTimeout(timeoutHandle);
				if (signal) signal.removeEventListener("abort", onAbort);
			}
		},
	};
}

export function createLocalBashOperations(options) {
	return createLocalShellOperations("bash", () => loadDist("utils/shell.js").getShellConfig(options?.shellPath));
}

function resolveSpawnContext(command, cwd, spawnHook, exposeSessionEnvironment, ctx) {
	const env = { ...loadDist("utils/shell.js").getShellEnv() };
	delete env.PI_SESSION_ID;
	delete env.PI_SESSION_FILE;
	delete env.PI_PROVIDER;
	delete env.PI_MODEL;
	delete env.PI_REASONING_LEVEL;
	if (exposeSessionEnvironment && ctx) {
		const model = ctx.model;
		env.PI_SESSION_ID = ctx.sessionManager.getSessionId();
		const sessionFile = ctx.sessionManager.getSessionFile();
		if (sessionFile) env.PI_SESSION_FILE = sessionFile;
		if (model) {
			env.PI_PROVIDER = model.provider;
			env.PI_MODEL = model.id;
		}
		if (ctx.thinkingLevel) env.PI_REASONING_LEVEL = ctx.thinkingLevel;
	}
	const baseContext = { command, cwd, env };
	return spawnHook ? spawnHook(baseContext) : baseContext;
}

let bashSchemas;
function bashSchemasOnce() {
	if (bashSchemas) return bashSchemas;
	const Type = typebox();
	bashSchemas = {
		parameters: Type.Object({
			command: Type.String({ description: "Shell command to execute" }),
			timeout: Type.Optional(Type.Number({ description: "Timeout in seconds (optional, no default timeout)" })),
		}),
		output: Type.Object({
			output: Type.String({ description: "Combined stdout and stderr, possibly truncated" }),
			truncated: Type.Boolean(),
			full_output_path: Type.Optional(Type.String({ description: "Full output, when truncated" })),
			exit_code: Type.Number(),
			wall_time_seconds: Type.Number(),
		}),
	};
	return bashSchemas;
}

const bashToolConfig = {
	name: "bash",
	label: "bash",
	shellName: "bash",
	promptSnippet: "Execute bash commands (ls, grep, find, etc.)",
	promptGuidelines: ["You can inspect PI_* environment variables for current model and session details."],
	tempFilePrefix: "pi-bash",
};

function createShellToolDefinition(cwd, config, options) {
	const ops = options?.operations ?? createLocalBashOperations({ shellPath: options?.shellPath });
	const commandPrefix = options?.commandPrefix;
	const exposeSessionEnvironment = options?.exposeSessionEnvironment ?? true;
	const spawnHook = options?.spawnHook;
	const schemas = bashSchemasOnce();
	return {
		name: config.name,
		label: config.label,
		description: `Execute a ${config.shellName} command in the current working directory. Returns stdout and stderr. Output is truncated to last ${DEFAULT_MAX_LINES} lines or ${DEFAULT_MAX_BYTES / 1024}KB (whichever is hit first). If truncated, full output is saved to a temp file. Optionally provide a timeout in seconds.`,
		promptSnippet: config.promptSnippet,
		promptGuidelines: exposeSessionEnvironment && config.promptGuidelines ? [...config.promptGuidelines] : undefined,
		parameters: schemas.parameters,
		outputSchema: schemas.output,
		constrainedSampling: { type: "json_schema", strict: "prefer" },
		async execute(_toolCallId, { command, timeout }, signal, onUpdate, ctx) {
			const resolvedCommand = commandPrefix ? `${commandPrefix}\n${command}` : command;
			const spawnContext = resolveSpawnContext(resolvedCommand, ctx?.cwd || cwd, spawnHook, exposeSessionEnvironment, ctx);
			const output = new OutputAccumulator({ tempFilePrefix: config.tempFilePrefix });
			let acceptingOutput = true;
			let updateTimer;
			let updateDirty = false;
			let lastUpdateAt = 0;
			const emitOutputUpdate = () => {
				if (!onUpdate || !updateDirty) return;
				updateDirty = false;
				lastUpdateAt = Date.now();
				const snapshot = output.snapshot({ persistIfTruncated: true });
				onUpdate({
					content: [{ type: "text", text: snapshot.content || "" }],
					details: {
						truncation: snapshot.truncation.truncated ? snapshot.truncation : undefined,
						fullOutputPath: snapshot.fullOutputPath,
					},
				});
			};
			const clearUpdateTimer = () => {
				if (updateTimer) {
					clearTimeout(updateTimer);
					updateTimer = undefined;
				}
			};
			const scheduleOutputUpdate = () => {
				if (!onUpdate) return;
				updateDirty = true;
				const delay = BASH_UPDATE_THROTTLE_MS - (Date.now() - lastUpdateAt);
				if (delay <= 0) {
					clearUpdateTimer();
					emitOutputUpdate();
					return;
				}
				updateTimer ??= setTimeout(() => {
					updateTimer = undefined;
					emitOutputUpdate();
				}, delay);
			};
			if (onUpdate) onUpdate({ content: [], details: undefined });
			const handleData = (data) => {
				if (!acceptingOutput) return;
				output.append(data);
				scheduleOutputUpdate();
			};
			const finishOutput = async () => {
				acceptingOutput = false;
				output.finish();
				clearUpdateTimer();
				emitOutputUpdate();
				const snapshot = output.snapshot({ persistIfTruncated: true });
				await output.closeTempFile();
				return snapshot;
			};
			const formatOutput = (snapshot, emptyText = "(no output)") => {
				const truncation = snapshot.truncation;
				let text = snapshot.content || emptyText;
				let details;
				if (truncation.truncated) {
					details = { truncation, fullOutputPath: snapshot.fullOutputPath };
					const startLine = truncation.totalLines - truncation.outputLines + 1;
					const endLine = truncation.totalLines;
					if (truncation.lastLinePartial) {
						const lastLineSize = formatSize(output.getLastLineBytes());
						text += `\n\n[Showing last ${formatSize(truncation.outputBytes)} of line ${endLine} (line is ${lastLineSize}). Full output: ${snapshot.fullOutputPath}]`;
					} else if (truncation.truncatedBy === "lines") {
						text += `\n\n[Showing lines ${startLine}-${endLine} of ${truncation.totalLines}. Full output: ${snapshot.fullOutputPath}]`;
					} else {
						text += `\n\n[Showing lines ${startLine}-${endLine} of ${truncation.totalLines} (${formatSize(DEFAULT_MAX_BYTES)} limit). Full output: ${snapshot.fullOutputPath}]`;
					}
				}
				return { text, details };
			};
			const appendStatus = (text, status) => `${text ? `${text}\n\n` : ""}${status}`;
			const startedAt = performance.now();
			try {
				let exitCode;
				try {
					exitCode = (
						await ops.exec(spawnContext.command, spawnContext.cwd, {
							onData: handleData,
							signal,
							timeout,
							env: spawnContext.env,
						})
					).exitCode;
				} catch (err) {
					const snapshot = await finishOutput();
					const { text } = formatOutput(snapshot, "");
					if (err instanceof Error && err.message === "aborted") throw new Error(appendStatus(text, "Command aborted"));
					if (err instanceof Error && err.message.startsWith("timeout:")) {
						let status = `Command timed out after ${err.message.split(":")[1]} seconds`;
						if (err instanceof ShellTimeoutError && err.shellExit) {
							status += `. The shell exited with code ${err.shellExit.exitCode} after ${err.shellExit.afterSeconds} seconds, but background processes it started kept writing output until the timeout.`;
						}
						throw new Error(appendStatus(text, status));
					}
					throw err;
				}
				const snapshot = await finishOutput();
				const { text: outputText, details } = formatOutput(snapshot);
				if (exitCode === null) throw new Error(appendStatus(outputText, "Command terminated without an exit code"));
				const wallTimeSeconds = Math.round((performance.now() - startedAt) / 100) / 10;
				const fullOutput = await output.readFullOutput(STRUCTURED_OUTPUT_MAX_BYTES);
				const structuredContent = {
					output: fullOutput.content,
					truncated: fullOutput.truncated,
					...(fullOutput.truncated && snapshot.fullOutputPath ? { full_output_path: snapshot.fullOutputPath } : {}),
					exit_code: exitCode,
					wall_time_seconds: wallTimeSeconds,
				};
				if (exitCode !== 0) {
					return {
						content: [{ type: "text", text: appendStatus(outputText, `Command exited with code ${exitCode}`) }],
						details,
						structuredContent,
						isError: true,
					};
				}
				return { content: [{ type: "text", text: outputText }], details, structuredContent };
			} finally {
				clearUpdateTimer();
			}
		},
		...renderersOf(loadDist("core/tools/bash.js").createBashToolDefinition(cwd)),
	};
}

export function createBashToolDefinition(cwd, options) {
	return createShellToolDefinition(cwd, bashToolConfig, options);
}

export function createBashTool(cwd, options) {
	const definition = createBashToolDefinition(cwd, options);
	const tool = wrapToolDefinition(definition);
	return Object.assign(tool, { promptSnippet: definition.promptSnippet, promptGuidelines: definition.promptGuidelines });
}
