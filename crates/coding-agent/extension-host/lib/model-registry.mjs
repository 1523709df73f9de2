/**
 * `ctx.modelRegistry`: pi's ModelRegistry as seen from the host.
 *
 * The model lists come from the state mirror (`models.all`, `models.available`); a model
 * has configured auth when it is in `available`. Resolving credentials needs pi:
 * `getApiKeyAndHeaders` and `getApiKeyForProvider` are requests. Provider registration
 * goes through the shared runtime like `pi.registerProvider`.
 *
 * Model calls (`stream`, `streamSimple`, `complete`, `completeSimple`, pi 1.6.0) resolve the
 * model's credentials through pi and run pi-ai's functions with them; a model of a provider
 * an extension registered with its own `streamSimple` streams through that function.
 */
import { loadModule } from "./native.mjs";
import { callRoute } from "./virtual-models.mjs";

export function createModelRegistry({ state, channel, runtime, registry, catalogs }) {
	/** The request options with the credentials pi resolved for `model`. */
	const withAuth = async (self, model, options) => {
		const auth = await self.getApiKeyAndHeaders(model);
		if (!auth.ok) return { ...(options ?? {}) };
		const headers = { ...(auth.headers ?? {}), ...(options?.headers ?? {}) };
		return { ...(options ?? {}), apiKey: options?.apiKey ?? auth.apiKey, headers };
	};
	/** The registered provider's own `streamSimple`, when it has one. */
	const customStream = (model) => {
		const fn = registry?.providers.get(model?.provider)?.config?.streamSimple;
		return typeof fn === "function" ? fn : undefined;
	};
	/** A stream from a promise of one, so setup failures still come out as its events. */
	const deferred = (piAi, model, make) => {
		const out = piAi.createAssistantMessageEventStream();
		(async () => {
			try {
				for await (const event of await make()) out.push(event);
			} catch (err) {
				const message = err instanceof Error ? err.message : String(err);
				const error = {
					role: "assistant",
					content: [],
					api: model?.api,
					provider: model?.provider,
					model: model?.id,
					usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
					stopReason: "error",
					errorMessage: message,
					timestamp: Date.now(),
				};
				out.push({ type: "error", reason: "error", error });
			}
		})();
		return out;
	};
	/** The physical model and options of a direct request with `model`. */
	const routeDirect = async (self, model, context, options) => {
		if (model?.api !== "pi-virtual") return { model, options };
		const name = `Virtual model ${model.provider}/${model.id}`;
		const request = {
			model,
			thinkingLevel: options?.reasoning ?? "off",
			reason: "direct",
			messages: context?.messages ?? [],
			signal: options?.signal,
		};
		const route = await callRoute(runtime, model.provider, model.id, request, runtime.createContext());
		const { provider, id } = route.model;
		const target = self.find(provider, id);
		const routed = `${name} routed to ${provider}/${id}`;
		if (!target || target.api === "pi-virtual") throw new Error(`${routed}, which is not a physical model.`);
		if (!self.hasConfiguredAuth(target)) throw new Error(`${routed}, which has no credentials.`);
		const level = route.thinkingLevel;
		const { maxTokens: limit } = target;
		const maxTokens = options?.maxTokens && limit > 0 ? Math.min(options.maxTokens, limit) : options?.maxTokens;
		const reasoning = level === "off" ? undefined : level;
		return { model: target, options: { ...(options ?? {}), maxTokens, reasoning } };
	};
	return {
		/** pi 1.6.0's `refresh(options)`: a Promise of `{aborted, errors}` (ModelsRefreshResult). */
		async refresh(options) {
			return catalogs ? catalogs.refresh(options ?? {}) : { aborted: false, errors: new Map() };
		},
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
		stream(model, context, options) {
			const piAi = loadModule("@mariozechner/pi-ai");
			const custom = customStream(model);
			return deferred(piAi, model, async () => {
				const resolved = await withAuth(this, model, options);
				return custom ? custom(model, context, resolved) : piAi.stream(model, context, resolved);
			});
		},
		streamSimple(model, context, options) {
			const piAi = loadModule("@mariozechner/pi-ai");
			return deferred(piAi, model, async () => {
				// A virtual model is routed first (reason `direct`, no state), as pi 1.6.0 does.
				const { model: target, options: routed } = await routeDirect(this, model, context, options);
				const custom = customStream(target);
				const resolved = await withAuth(this, target, routed);
				return custom ? custom(target, context, resolved) : piAi.streamSimple(target, context, resolved);
			});
		},
		async complete(model, context, options) {
			return this.stream(model, context, options).result();
		},
		async completeSimple(model, context, options) {
			return this.streamSimple(model, context, options).result();
		},
		registerProvider(name, config) {
			runtime.registerProvider(name, config);
		},
		unregisterProvider(name) {
			runtime.unregisterProvider(name);
		},
		registerVirtualModel(definition) {
			runtime.registerVirtualModel(definition);
		},
		unregisterVirtualModel(provider, id) {
			runtime.unregisterVirtualModel(provider, id);
		},
		/** Models of one type (`chat`, `image`, `classifier`); a model without `type` is chat. */
		getModelsOfType(type, provider) {
			return state.models.all.filter(
				(m) => (m.type ?? "chat") === type && (provider === undefined || m.provider === provider),
			);
		},
		findOfType(type, provider, modelId) {
			return state.models.all.find((m) => (m.type ?? "chat") === type && m.provider === provider && m.id === modelId);
		},
		/** pi 1.6.0's classifier call; our providers have no classifier API, so it ends as an error result. */
		async classify(model) {
			return {
				stopReason: "error",
				errorMessage: `Provider ${model?.provider} does not support classification`,
				answers: {},
			};
		},
	};
}
