/**
 * `pi.events`: the in-host event bus shared by all extensions (pi 0.73.1's event-bus.js).
 *
 * `emit(channel, data)` calls every handler of the channel; `on(channel, handler)` returns an
 * unsubscribe function. Handler errors (sync or async) never reach the emitter: each
 * extension's `pi.events.on` reports them as extension errors (lib/api.mjs); a handler
 * subscribed here directly that throws is printed, as pi's bus does.
 */
import { EventEmitter } from "node:events";

export function createEventBus() {
	const emitter = new EventEmitter();
	emitter.setMaxListeners(0);
	return {
		emit(channel, data) {
			emitter.emit(channel, data);
		},
		on(channel, handler) {
			const safeHandler = async (data) => {
				try {
					await handler(data);
				} catch (err) {
					console.error(`Event handler error (${channel}):`, err);
				}
			};
			emitter.on(channel, safeHandler);
			return () => emitter.off(channel, safeHandler);
		},
		clear() {
			emitter.removeAllListeners();
		},
	};
}
