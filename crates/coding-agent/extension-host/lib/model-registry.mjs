/**
 * `ctx.modelRegistry`: pi's ModelRegistry as seen from the host.
 *
 * The model lists come from the state mirror (`models.all`, `models.available`); a model
 * has configured auth when it is in `available`. Resolving credentials needs pi:
 * `getApiKeyAndHeaders` and `getApiKeyForProvider` are requests. Provider registration
 * goes through the shared runtime like `pi.registerProvider`.
 */

export function createModelRegistry({ state, channel, runtime }) {
	return {
		refresh() {},
		getError() {
			return undefined;
		},
		getAll() {
			return [...state.models.all];
		},
		getAvailable() {
			return [...state.models.available];
		},
		find(provider, modelId) {
			return state.findModel(provider, modelId);
		},
		hasConfiguredAuth(model) {
			return state.hasConfiguredAuth(model);
		},
		/** pi's ResolvedRequestAuth: `{ok:true, apiKey?, headers?}` or `{ok:false, error}`. */
		async getApiKeyAndHeaders(model) {
			try {
				const result = await channel.request("getApiKeyAndHeaders", { provider: model?.provider, id: model?.id });
				if (!result) return { ok: false, error: `No API key found for ${model?.provider}` };
				if (typeof result.ok === "boolean") return result;
				return { ok: true, ...result };
			} catch (err) {
				return { ok: false, error: err instanceof Error ? err.message : String(err) };
			}
		},
		async getApiKeyForProvider(provider) {
			const result = await channel.request("getApiKeyForProvider", { provider });
			return result ?? undefined;
		},
		getProviderAuthStatus(provider) {
			const configured = state.models.available.some((m) => m.provider === provider);
			return { configured };
		},
		getProviderDisplayName(provider) {
			return provider;
		},
		isUsingOAuth() {
			return false;
		},
		registerProvider(name, config) {
			runtime.registerProvider(name, config);
		},
		unregisterProvider(name) {
			runtime.unregisterProvider(name);
		},
	};
}
