/**
 * `user_bash` handlers may return `{operations}`: a BashOperations object whose `exec` runs
 * the user's `!command` (ssh, sandbox, ...). It cannot travel, so the host keeps it under a
 * handle and answers `{"operations":{"handle":H}}`; pi then sends `bash_exec {handle,
 * command, cwd, timeout?, env?}`, the host streams output as `bash_data {id, data}`
 * notifications (UTF-8 text) and answers `{exitCode}`.
 */

export class BashOperations {
	constructor() {
		this.handles = new Map();
		this.nextHandle = 1;
	}

	/** The JSON form of a user_bash handler result. */
	describe(result) {
		if (!result?.operations) return result;
		const handle = this.nextHandle++;
		this.handles.set(handle, result.operations);
		const { operations: _ops, ...rest } = result;
		return { ...rest, operations: { handle } };
	}

	async exec(core, frame, signal) {
		const operations = this.handles.get(frame.handle);
		if (!operations) throw new Error(`Unknown bash operations handle ${frame.handle}`);
		this.handles.delete(frame.handle);
		const decoder = new TextDecoder();
		const onData = (data) => {
			const text = typeof data === "string" ? data : decoder.decode(data, { stream: true });
			if (text) core.channel.notify("bash_data", { id: frame.id, data: text });
		};
		const result = await operations.exec(frame.command, frame.cwd ?? core.state.cwd, {
			onData,
			signal,
			...(frame.timeout !== undefined ? { timeout: frame.timeout } : {}),
			...(frame.env !== undefined ? { env: { ...process.env, ...frame.env } } : {}),
		});
		return { exitCode: result?.exitCode ?? null };
	}
}
