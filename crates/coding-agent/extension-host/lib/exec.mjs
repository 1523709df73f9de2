/**
 * `pi.exec(command, args, {signal, timeout, cwd, maxBuffer})`, run by the host itself as
 * pi 1.6.0 does: no shell, stdin ignored, SIGTERM on abort, timeout or overflow (SIGKILL
 * 5 s later if the child has not exited). Resolves `{stdout, stderr, code, killed, truncated}`:
 * - output is decoded as UTF-8 across chunks (a character split between two chunks stays
 *   whole) and capped at `maxBuffer` bytes of stdout and stderr together (default 256 MiB,
 *   at most the longest string node can make); past the cap both pipes close, the child is
 *   killed, `truncated` is true and a code of 0 becomes 1;
 * - a spawn failure (a missing executable) gives code 1 and the error's message as stderr;
 * - a child ended by a signal gives 128 + its number, as a shell reports it.
 * A `maxBuffer` that is not an integer in [0, max string length] rejects with a RangeError.
 * Like pi, it stops waiting for stdio once the pipes stay quiet 100 ms after the exit, so
 * detached grandchildren that keep the pipes open cannot hang the call.
 */
import { constants as bufferConstants } from "node:buffer";
import { spawn } from "node:child_process";
import { constants } from "node:os";
import { StringDecoder } from "node:string_decoder";

const EXIT_STDIO_GRACE_MS = 100;
const FORCE_KILL_DELAY_MS = 5000;
export const DEFAULT_EXEC_MAX_BUFFER = Math.min(256 * 1024 * 1024, bufferConstants.MAX_STRING_LENGTH);

export async function execCommand(command, args, cwd, options) {
	const maxBuffer = options?.maxBuffer ?? DEFAULT_EXEC_MAX_BUFFER;
	if (!Number.isInteger(maxBuffer) || maxBuffer < 0 || maxBuffer > bufferConstants.MAX_STRING_LENGTH) {
		throw new RangeError(`maxBuffer must be an integer between 0 and ${bufferConstants.MAX_STRING_LENGTH} bytes`);
	}
	const proc = spawn(command, args ?? [], { cwd, shell: false, stdio: ["ignore", "pipe", "pipe"] });
	const output = { stdout: "", stderr: "" };
	const decoders = { stdout: new StringDecoder("utf8"), stderr: new StringDecoder("utf8") };
	let outputBytes = 0;
	let truncated = false;
	let killed = false;
	let timeoutId;
	let forceKillId;
	const kill = () => {
		if (killed) return;
		killed = true;
		proc.kill("SIGTERM");
		forceKillId = setTimeout(() => {
			// `proc.killed` only says a signal was sent: check whether the child exited.
			if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
		}, FORCE_KILL_DELAY_MS);
	};
	const signal = options?.signal;
	if (signal) {
		if (signal.aborted) kill();
		else signal.addEventListener("abort", kill, { once: true });
	}
	if (options?.timeout && options.timeout > 0) timeoutId = setTimeout(kill, options.timeout);
	/** The part of `data` within the combined cap; on overflow both pipes close and the child is killed. */
	const takeWithinCap = (data) => {
		if (truncated) return undefined;
		const remaining = maxBuffer - outputBytes;
		if (data.length <= remaining) {
			outputBytes += data.length;
			return data;
		}
		truncated = true;
		proc.stdout?.destroy();
		proc.stderr?.destroy();
		kill();
		return remaining > 0 ? data.subarray(0, remaining) : undefined;
	};
	for (const stream of ["stdout", "stderr"]) {
		proc[stream].on("data", (data) => {
			const chunk = takeWithinCap(data);
			if (chunk) output[stream] += decoders[stream].write(chunk);
		});
	}
	let code;
	try {
		code = await waitForExit(proc);
	} catch (error) {
		if (!(error instanceof Error)) throw error;
		// A child that could not start (ENOENT, EACCES) is a failed run, not a host failure.
		code = 1;
		if (!output.stderr) output.stderr = error.message;
	} finally {
		clearTimeout(timeoutId);
		clearTimeout(forceKillId);
		signal?.removeEventListener("abort", kill);
	}
	// A truncated output drops an incomplete UTF-8 tail instead of ending in U+FFFD.
	if (!truncated) {
		output.stdout += decoders.stdout.end();
		output.stderr += decoders.stderr.end();
	}
	const exitCode = code ?? signalCode(proc.signalCode) ?? 1;
	return {
		stdout: output.stdout,
		stderr: output.stderr,
		// A truncated result never reads as success.
		code: truncated && exitCode === 0 ? 1 : exitCode,
		killed,
		truncated,
	};
}

/**
 * Resolve with the exit code once the child exited and its stdio ended, or once the pipes
 * stayed quiet for 100 ms after the exit (the wait restarts with each chunk, so output a
 * descendant still writes is not lost); reject on a spawn error.
 */
function waitForExit(child) {
	return new Promise((resolve, reject) => {
		let settled = false;
		let exited = false;
		let exitCode = null;
		let stdoutEnded = false;
		let stderrEnded = false;
		let graceTimer;
		const settle = (fn, value) => {
			if (settled) return;
			settled = true;
			clearTimeout(graceTimer);
			child.stdout.off("data", onData);
			child.stderr.off("data", onData);
			child.stdout.destroy();
			child.stderr.destroy();
			fn(value);
		};
		const armGrace = () => {
			clearTimeout(graceTimer);
			graceTimer = setTimeout(() => settle(resolve, exitCode), EXIT_STDIO_GRACE_MS);
		};
		const maybeDone = () => {
			if (exited && stdoutEnded && stderrEnded) settle(resolve, exitCode);
		};
		const onData = () => {
			if (exited && !settled) armGrace();
		};
		child.stdout.on("data", onData);
		child.stderr.on("data", onData);
		child.stdout.once("end", () => {
			stdoutEnded = true;
			maybeDone();
		});
		child.stderr.once("end", () => {
			stderrEnded = true;
			maybeDone();
		});
		child.once("error", (err) => settle(reject, err));
		child.once("exit", (code, signal) => {
			exited = true;
			exitCode = code ?? signalCode(signal);
			maybeDone();
			if (!settled) armGrace();
		});
		child.once("close", (code, signal) => settle(resolve, code ?? signalCode(signal)));
	});
}

/** A shell's exit status for a child ended by `signal`: 128 + its number (143 for SIGTERM). */
function signalCode(signal) {
	const number = signal ? constants.signals[signal] : undefined;
	return number === undefined ? null : 128 + number;
}
