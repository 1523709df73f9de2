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
	const key = `${frame.provider}/${frame.modelId}`;
	const entry = core.runtime.virtualModels.get(key);
	if (!entry) throw new Error(`Virtual model ${key} is not registered.`);
	const request = { ...(frame.request ?? {}), signal };
	const given = request.state;
	const route = await entry.definition.route(request, createContext(core));
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
