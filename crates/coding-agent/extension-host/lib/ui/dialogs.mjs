/**
 * Dialogs and fire-and-forget UI calls over the channel, shared by the rpc and interactive
 * UI contexts.
 *
 * A dialog is a `ui.<method>` request answered when the user answers. Its AbortSignal or
 * timeout settles it locally with the default answer and sends `{"type":"ui_cancel","id"}`
 * so pi drops the dialog (pi still answers the request; the host ignores that answer).
 * Fire-and-forget calls are `{"type":"ui","method","params"}` notifications.
 */

export function createDialogs(channel) {
	function dialog(method, params, opts, defaultValue, parse) {
		if (opts?.signal?.aborted) return Promise.resolve(defaultValue);
		return new Promise((resolve) => {
			let settled = false;
			let timer;
			const finish = (value) => {
				if (settled) return;
				settled = true;
				if (timer) clearTimeout(timer);
				opts?.signal?.removeEventListener("abort", cancel);
				resolve(value);
			};
			const id = channel.peekNextId();
			const cancel = () => {
				if (settled) return;
				channel.forget(id);
				channel.notify("ui_cancel", { id });
				finish(defaultValue);
			};
			opts?.signal?.addEventListener("abort", cancel, { once: true });
			if (opts?.timeout) timer = setTimeout(cancel, opts.timeout);
			channel.request(`ui.${method}`, params).then(
				(result) => finish(parse(result)),
				() => finish(defaultValue),
			);
		});
	}
	const orUndefined = (value) => (typeof value === "string" ? value : undefined);
	return {
		select: (title, options, opts) =>
			dialog("select", { title, options, ...timeoutOf(opts) }, opts, undefined, orUndefined),
		confirm: (title, message, opts) =>
			dialog("confirm", { title, message, ...timeoutOf(opts) }, opts, false, (value) => value === true),
		input: (title, placeholder, opts) =>
			dialog("input", { title, ...(placeholder !== undefined ? { placeholder } : {}), ...timeoutOf(opts) }, opts, undefined, orUndefined),
		editor: (title, prefill) =>
			dialog("editor", { title, ...(prefill !== undefined ? { prefill } : {}) }, undefined, undefined, orUndefined),
		/** Send a fire-and-forget UI notification. */
		send(method, params) {
			channel.notify("ui", { method, params });
		},
	};
}

function timeoutOf(opts) {
	return opts?.timeout ? { timeout: opts.timeout } : {};
}
