/**
 * Custom providers' `streamSimple`, run on pi's request.
 *
 * `provider_stream {provider, model, context, options}` calls the registered provider's
 * `streamSimple(model, context, {...options, signal})` and forwards every
 * AssistantMessageEvent as a `provider_event {id, event}` notification; the request answers
 * with the final message (`{message}`) once the stream ends, or fails with its error.
 */

export async function streamProvider(core, frame, signal) {
	const entry = core.registry.providers.get(frame.provider);
	const streamSimple = entry?.config?.streamSimple;
	if (typeof streamSimple !== "function") throw new Error(`Provider ${frame.provider} has no streamSimple`);
	const stream = streamSimple(frame.model, frame.context, { ...(frame.options ?? {}), signal });
	let final;
	for await (const event of stream) {
		core.channel.notify("provider_event", { id: frame.id, event });
		if (event?.type === "done") final = event.message;
		else if (event?.type === "error") final = event.error;
	}
	if (final === undefined && typeof stream.result === "function") final = await stream.result();
	return { message: final ?? null };
}
