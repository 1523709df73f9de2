/**
 * `pi.exec(command, args, {signal, timeout, cwd})`, run by the host itself as pi 0.73.1 does:
 * no shell, stdin ignored, SIGTERM on abort or timeout (SIGKILL 5 s later if still alive),
 * resolves `{stdout, stderr, code, killed}` and never rejects (a spawn error gives code 1; a
 * child ended by a signal gives 128 + its number, as a shell and pi 1.6.0 report it).
 * Like pi, it stops waiting for stdio 100 ms after exit, so detached grandchildren that keep
 * the pipes open cannot hang the call.
 */
import { spawn } from "node:child_process";
import { constants } from "node:os";

const EXIT_STDIO_GRACE_MS = 100;

export function execCommand(command, args, cwd, options) {
	return new Promise((resolve) => {
		let proc;
		try {
			proc = spawn(command, args ?? [], { cwd, shell: false, stdio: ["ignore", "pipe", "pipe"] });
		} catch {
			resolve({ stdout: "", stderr: "", code: 1, killed: false });
			return;
		}
		let stdout = "";
		let stderr = "";
		let killed = false;
		let timeoutId;
		const kill = () => {
			if (killed) return;
			killed = true;
			proc.kill("SIGTERM");
			setTimeout(() => {
				if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGKILL");
			}, 5000).unref();
		};
		const signal = options?.signal;
		if (signal) {
			if (signal.aborted) kill();
			else signal.addEventListener("abort", kill, { once: true });
		}
		if (options?.timeout && options.timeout > 0) timeoutId = setTimeout(kill, options.timeout);
		proc.stdout.on("data", (data) => {
			stdout += data.toString();
		});
		proc.stderr.on("data", (data) => {
			stderr += data.toString();
		});
		const finish = (code) => {
			if (timeoutId) clearTimeout(timeoutId);
			signal?.removeEventListener("abort", kill);
			resolve({ stdout, stderr, code, killed });
		};
		waitForExit(proc).then(
			(code) => finish(code ?? 0),
			() => finish(1),
		);
	});
}

/** Resolve with the exit code once the child exited and its stdio ended (or 100 ms after exit). */
function waitForExit(child) {
	return new Promise((resolve, reject) => {
		let settled = false;
		let exitCode = null;
		let exited = false;
		let stdoutEnded = false;
		let stderrEnded = false;
		let graceTimer;
		const settle = (fn, value) => {
			if (settled) return;
			settled = true;
			if (graceTimer) clearTimeout(graceTimer);
			child.stdout?.destroy();
			child.stderr?.destroy();
			fn(value);
		};
		const maybeDone = () => {
			if (exited && stdoutEnded && stderrEnded) settle(resolve, exitCode);
		};
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
			if (!settled) graceTimer = setTimeout(() => settle(resolve, exitCode), EXIT_STDIO_GRACE_MS);
		});
		child.once("close", (code, signal) => settle(resolve, code ?? signalCode(signal)));
	});
}

/** A shell's exit status for a child ended by `signal`: 128 + its number (143 for SIGTERM). */
function signalCode(signal) {
	const number = signal ? constants.signals[signal] : undefined;
	return number === undefined ? null : 128 + number;
}
