/**
 * Dynamic catalogs of extension providers (`pi.registerProvider(name, {refreshModels})`),
 * refreshed as pi 1.6.0's ModelRuntime does.
 *
 * A refresh runs each provider's `refreshModels(context)` once offline (`allowNetwork:
 * false`, the stored credential) and, when the network is allowed and the provider has a
 * key, once more with it. `context.stored` is the provider's `models-store.json` entry;
 * `context.publish({persist, update})` writes (`persist` an object) or deletes (`null`) that
 * entry and then applies `update`, unless a newer refresh of the provider began meanwhile
 * (then it answers `false`, or rejects once the refresh's signal aborted). The models a
 * refresh returns replace the provider's registered models. The result is pi's
 * `ModelsRefreshResult`: `{aborted, errors}` with one error per failed provider (what it
 * threw, or a "Model refresh failed for <provider>: <detail>" error wrapping a non-Error).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { readEntry, writeEntry } from "./catalog-store.mjs";

function abortReason(signal) {
	if (signal.reason !== undefined) return signal.reason;
	const error = new Error("The operation was aborted");
	error.name = "AbortError";
	return error;
}

/** Settles with `operation`, or rejects as soon as `signal` aborts. */
function raceWithAbortSignal(operation, signal) {
	if (signal.aborted) {
		void operation.catch(() => {});
		return Promise.reject(abortReason(signal));
	}
	return new Promise((resolve, reject) => {
		const onAbort = () => reject(abortReason(signal));
		signal.addEventListener("abort", onAbort, { once: true });
		operation.then(
			(value) => {
				signal.removeEventListener("abort", onAbort);
				resolve(value);
			},
			(error) => {
				signal.removeEventListener("abort", onAbort);
				reject(error);
			},
		);
	});
}

/** pi-ai's ModelsError wording: the message, then the cause's unless it already says it. */
function withCauseDetail(message, cause) {
	if (cause == null) return message;
	const detail = (cause instanceof Error ? cause.message || cause.name : typeof cause === "string" ? cause : String(cause)).trim();
	return !detail || message.includes(detail) ? message : `${message}: ${detail}`;
}

/** The provider's stored credential in `auth.json`, if any. */
function readStoredCredential(providerId) {
	const agentDir = process.env.PI_CODING_AGENT_DIR;
	if (!agentDir) return undefined;
	try {
		const entry = JSON.parse(fs.readFileSync(path.join(agentDir, "auth.json"), "utf8"))[providerId];
		return entry && typeof entry === "object" ? entry : undefined;
	} catch {
		return undefined;
	}
}

/** A config value with `$VAR` / `${VAR}` references filled in; undefined when one is unset. */
function interpolate(value) {
	if (typeof value !== "string" || value.startsWith("!")) return undefined;
	let missing = false;
	const out = value.replace(/\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)/g, (match, braced, bare) => {
		if (match === "$$") return "$";
		const found = process.env[braced ?? bare];
		if (!found) missing = true;
		return found ?? "";
	});
	return missing || !out ? undefined : out;
}

export class Catalogs {
	/** @param {{registry: any, publishModels: (name: string, config: object) => Promise<void>|void}} deps */
	constructor({ registry, publishModels }) {
		this.registry = registry;
		this.publishModels = publishModels;
		this.generations = new Map();
		this.controllers = new Map();
		this.chains = new Map();
	}

	/** Providers whose registration has a `refreshModels`. */
	refreshable(selected) {
		return [...this.registry.providers.entries()]
			.filter(([name, entry]) => typeof entry.config?.refreshModels === "function" && (!selected || selected.has(name)))
			.map(([name, entry]) => ({ name, config: entry.config }));
	}

	/** A new generation of the provider's refresh; the previous one is aborted. */
	begin(providerId) {
		const generation = (this.generations.get(providerId) ?? 0) + 1;
		this.generations.set(providerId, generation);
		this.controllers.get(providerId)?.abort();
		const controller = new AbortController();
		this.controllers.set(providerId, controller);
		return { generation, controller };
	}

	/** `context.publish`: generation-checked, one publication of a provider at a time. */
	publish(providerId, generation, signal, publication) {
		const previous = this.chains.get(providerId) ?? Promise.resolve();
		const current = () => !signal.aborted && this.generations.get(providerId) === generation;
		const queued = (async () => {
			await previous.catch(() => {});
			if (!current()) return false;
			if (publication?.persist === null) await writeEntry(providerId, null, signal);
			else if (publication?.persist !== undefined) await writeEntry(providerId, publication.persist, signal);
			if (!current()) return false;
			await publication?.update?.();
			return true;
		})();
		const tail = queued.catch(() => {});
		this.chains.set(providerId, tail);
		void tail.then(() => {
			if (this.chains.get(providerId) === tail) this.chains.delete(providerId);
		});
		return raceWithAbortSignal(queued, signal);
	}

	/** One `refreshModels` call; its returned models replace the provider's. */
	async runPhase(name, config, credential, allowNetwork, force, generation, signal) {
		const stored = readEntry(name);
		const refreshed = await config.refreshModels({
			credential,
			stored,
			publish: (publication) => this.publish(name, generation, signal, publication),
			allowNetwork,
			force: allowNetwork ? force : undefined,
			signal,
			baseUrl: config.baseUrl,
		});
		if (signal.aborted) return;
		await this.publish(name, generation, signal, {
			update: Array.isArray(refreshed) ? () => this.publishModels(name, { ...config, models: refreshed }) : undefined,
		});
	}

	/**
	 * The key a network refresh uses: the stored API key, else the config's `apiKey`
	 * (`$VAR` references filled in; a `!command` key gives none). An expired stored login
	 * gives none either: unlike pi 1.6.0, which refreshes it first, the host does not run
	 * extension OAuth.
	 */
	networkCredential(config, stored) {
		if (stored?.type === "oauth") return Date.now() < stored.expires ? stored : undefined;
		if (stored?.type === "api_key" && stored.key) return { type: "api_key", key: stored.key, ...(stored.env ? { env: stored.env } : {}) };
		const key = interpolate(config.apiKey);
		return key ? { type: "api_key", key } : undefined;
	}

	/** `ModelRegistry.refresh(options)`: resolves to `{aborted, errors}`. */
	async refresh(options = {}) {
		const allowNetwork = options.allowNetwork ?? process.env.PI_OFFLINE === undefined;
		const callerSignal = options.signal ?? new AbortController().signal;
		const errors = new Map();
		if (callerSignal.aborted) return { aborted: true, errors };
		const selected = options.providers ? new Set(options.providers) : undefined;
		const all = this.refreshable(selected).map(async ({ name, config }) => {
			const { generation, controller } = this.begin(name);
			const signal = AbortSignal.any([callerSignal, controller.signal]);
			const operation = (async () => {
				const stored = readStoredCredential(name);
				await this.runPhase(name, config, stored, false, undefined, generation, signal);
				if (!allowNetwork || signal.aborted) return;
				const credential = this.networkCredential(config, stored);
				if (credential) await this.runPhase(name, config, credential, true, options.force, generation, signal);
			})();
			try {
				await raceWithAbortSignal(operation, signal);
			} catch (error) {
				// An Error is reported as thrown; anything else is wrapped as pi-ai's ModelsError.
				if (!signal.aborted && error instanceof Error) errors.set(name, error);
				else if (!signal.aborted) {
					const failure = new Error(withCauseDetail(`Model refresh failed for ${name}`, error), { cause: error });
					failure.name = "ModelsError";
					failure.code = "model_source";
					errors.set(name, failure);
				}
			} finally {
				if (this.controllers.get(name) === controller) this.controllers.delete(name);
			}
		});
		try {
			await raceWithAbortSignal(Promise.all(all), callerSignal);
		} catch (error) {
			if (!callerSignal.aborted) throw error;
		}
		return { aborted: callerSignal.aborted, errors: new Map(errors) };
	}
}
