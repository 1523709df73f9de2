/**
 * Virtual models (pi 1.6.0's `pi.registerVirtualModel`): the definitions with their
 * `route` functions stay here; pi gets the catalog entry and asks `route_model` before
 * every request made with one.
 */
import { createContext } from "./context.mjs";

/** The catalog entry pi lists: the definition without its functions. */
export function describeVirtualModel(definition, extensionPath) {
	const { route: _route, ...rest } = definition ?? {};
	const model = {};
	for (const [key, value] of Object.entries(rest)) {
		if (typeof value !== "function") model[key] = value;
	}
	return { ...model, extensionPath };
}

/** Checks what pi 1.6.0 checks when a virtual model is registered. */
export function checkVirtualModel(definition) {
	const provider = definition?.provider;
	const id = definition?.id;
	if (typeof provider !== "string" || typeof id !== "string" || !provider.trim() || !id.trim()) {
		throw new Error("Virtual model provider and id must not be empty.");
	}
	if (typeof definition.route !== "function") {
		throw new Error(`Virtual model ${provider}/${id} must define route().`);
	}
}

/**
 * `route_model {provider, modelId, request}` → `{provider, id, thinkingLevel, stateChanged, state}`.
 * `request` is pi's ModelRouteRequest without its signal (added here); returning
 * `undefined` or the state it was given keeps the stored state.
 */
export async function routeVirtualModel(core, frame, signal) {
	const request = { ...(frame.request ?? {}), signal };
	const given = request.state;
	const route = await callRoute(core.runtime, frame.provider, frame.modelId, request, createContext(core));
	const { provider, id } = route.model;
	const stateChanged = route.state !== undefined && route.state !== given;
	return {
		provider,
		id,
		thinkingLevel: route.thinkingLevel,
		stateChanged,
		...(stateChanged ? { state: route.state } : {}),
	};
}

/** Calls the `route()` of the virtual model `provider/id` (pi 1.6.0's resolveModel start). */
export async function callRoute(runtime, provider, id, request, ctx) {
	const entry = runtime.virtualModels?.get(`${provider}/${id}`);
	if (!entry) throw new Error(`Virtual model ${provider}/${id} is not registered.`);
	return entry.definition.route(request, ctx);
}
