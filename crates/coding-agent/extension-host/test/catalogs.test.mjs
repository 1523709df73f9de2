/**
 * Dynamic catalogs of extension providers (lib/catalogs.mjs): the two refresh phases, the
 * stored snapshot, generation-checked publication and the refresh result.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterEach, beforeEach, describe, it } from "node:test";
import { writeEntry } from "../lib/catalog-store.mjs";
import { Catalogs } from "../lib/catalogs.mjs";

let dir;
let savedDir;
let savedOffline;
beforeEach(() => {
	dir = fs.mkdtempSync(path.join(os.tmpdir(), "pi-catalogs-test-"));
	savedDir = process.env.PI_CODING_AGENT_DIR;
	savedOffline = process.env.PI_OFFLINE;
	process.env.PI_CODING_AGENT_DIR = dir;
	delete process.env.PI_OFFLINE;
});
afterEach(() => {
	if (savedDir === undefined) delete process.env.PI_CODING_AGENT_DIR;
	else process.env.PI_CODING_AGENT_DIR = savedDir;
	if (savedOffline !== undefined) process.env.PI_OFFLINE = savedOffline;
	fs.rmSync(dir, { recursive: true, force: true });
});

const model = (id) => ({ id, name: id, reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 });
const storeFile = () => JSON.parse(fs.readFileSync(path.join(dir, "models-store.json"), "utf8"));

function setup(config) {
	const published = [];
	const registry = { providers: new Map([["dyn", { config, extensionPath: "/x.ts" }]]) };
	const catalogs = new Catalogs({ registry, publishModels: (name, cfg) => published.push({ name, ids: cfg.models.map((m) => m.id) }) });
	return { catalogs, published };
}

describe("extension provider catalogs", () => {
	it("run offline with the stored snapshot, then online with the key, persisting what they publish", async () => {
		fs.writeFileSync(path.join(dir, "models-store.json"), JSON.stringify({ dyn: { models: [model("old")] }, other: { models: [] } }));
		const calls = [];
		const { catalogs, published } = setup({
			apiKey: "k-1",
			baseUrl: "http://h/v1",
			async refreshModels(context) {
				calls.push({ allowNetwork: context.allowNetwork, stored: context.stored?.models.map((m) => m.id), key: context.credential?.key, force: context.force, baseUrl: context.baseUrl, signal: context.signal instanceof AbortSignal });
				if (!context.allowNetwork) return context.stored?.models ?? [];
				assert.equal(await context.publish({ persist: { models: [model("new")] } }), true);
				return [model("new")];
			},
		});
		const result = await catalogs.refresh({ force: true });
		assert.deepEqual(result, { aborted: false, errors: new Map() });
		assert.deepEqual(calls, [
			{ allowNetwork: false, stored: ["old"], key: undefined, force: undefined, baseUrl: "http://h/v1", signal: true },
			{ allowNetwork: true, stored: ["old"], key: "k-1", force: true, baseUrl: "http://h/v1", signal: true },
		]);
		assert.deepEqual(published, [{ name: "dyn", ids: ["old"] }, { name: "dyn", ids: ["new"] }]);
		assert.deepEqual(storeFile().dyn.models.map((m) => m.id), ["new"]);
		assert.deepEqual(storeFile().other, { models: [] });
	});

	it("skip the network without a key or when it is not allowed, and delete the snapshot on persist null", async () => {
		fs.writeFileSync(path.join(dir, "models-store.json"), JSON.stringify({ dyn: { models: [model("old")] } }));
		const phases = [];
		const { catalogs } = setup({
			apiKey: "$PI_CATALOG_TEST_UNSET_KEY",
			async refreshModels(context) {
				phases.push(context.allowNetwork);
				await context.publish({ persist: null });
			},
		});
		await catalogs.refresh();
		process.env.PI_CATALOG_TEST_UNSET_KEY = "set";
		try {
			await catalogs.refresh({ allowNetwork: false });
		} finally {
			delete process.env.PI_CATALOG_TEST_UNSET_KEY;
		}
		assert.deepEqual(phases, [false, false]);
		assert.equal(storeFile().dyn, undefined);
	});

	it("let only the newest refresh publish", async () => {
		let first = true;
		const outcomes = [];
		const { catalogs } = setup({
			apiKey: "k",
			async refreshModels(context) {
				if (context.allowNetwork) return;
				if (first) {
					first = false;
					// Wait until the newer refresh supersedes this one, then try to publish.
					await new Promise((resolve) => context.signal.addEventListener("abort", resolve, { once: true }));
					await context.publish({ persist: { models: [model("stale")] } }).then(
						(ok) => outcomes.push(["stale", ok]),
						(err) => outcomes.push(["stale", err.name]),
					);
					return;
				}
				outcomes.push(["fresh", await context.publish({ persist: { models: [model("fresh")] } })]);
			},
		});
		const older = catalogs.refresh({ allowNetwork: false });
		const newer = catalogs.refresh({ allowNetwork: false });
		const [a, b] = await Promise.all([older, newer]);
		assert.deepEqual([a.errors.size, b.errors.size], [0, 0]);
		assert.deepEqual(outcomes, [["stale", "AbortError"], ["fresh", true]]);
		assert.deepEqual(storeFile().dyn.models.map((m) => m.id), ["fresh"]);
	});

	it("report a provider's failure (a thrown non-Error wrapped with its detail), and an aborted caller", async () => {
		let thrown = new Error("catalog server said 503");
		const { catalogs } = setup({
			async refreshModels() {
				throw thrown;
			},
		});
		const result = await catalogs.refresh({ allowNetwork: false });
		assert.equal(result.aborted, false);
		assert.equal(result.errors.get("dyn"), thrown);
		thrown = "catalog server said 503";
		const error = (await catalogs.refresh({ allowNetwork: false })).errors.get("dyn");
		assert.equal(error.message, "Model refresh failed for dyn: catalog server said 503");
		assert.equal(error.cause, "catalog server said 503");
		const controller = new AbortController();
		controller.abort();
		assert.deepEqual(await catalogs.refresh({ signal: controller.signal }), { aborted: true, errors: new Map() });
	});

	it("write the store under pi's lock: wait for a live holder, take over a stale one, write through a symlink", async () => {
		const real = path.join(dir, "real-store.json");
		fs.writeFileSync(real, JSON.stringify({ other: { models: [] } }));
		fs.symlinkSync(real, path.join(dir, "models-store.json"));
		const lock = `${real}.lock`;
		fs.mkdirSync(lock);
		let written = false;
		const pending = writeEntry("dyn", { models: [model("a")] }).then(() => {
			written = true;
		});
		await new Promise((resolve) => setTimeout(resolve, 50));
		assert.equal(written, false);
		fs.rmdirSync(lock);
		await pending;
		fs.mkdirSync(lock);
		const old = new Date(Date.now() - 20_000);
		fs.utimesSync(lock, old, old);
		await writeEntry("dyn", null);
		assert.equal(fs.existsSync(lock), false);
		assert.equal(fs.lstatSync(path.join(dir, "models-store.json")).isSymbolicLink(), true);
		assert.deepEqual(JSON.parse(fs.readFileSync(real, "utf8")), { other: { models: [] } });
	});
});
