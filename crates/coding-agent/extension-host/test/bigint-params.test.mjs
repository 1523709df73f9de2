/**
 * TypeBox `bigint` parameters reach `execute` as BigInt values, as pi 1.6 gives them.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { withBigInts } from "../lib/bigint-params.mjs";

describe("bigint parameters", () => {
	it("turns integers at bigint places into BigInt values and leaves the rest", () => {
		const schema = {
			type: "object",
			properties: {
				n: { type: "bigint" },
				plain: { type: "number" },
				list: { type: "array", items: { type: "bigint" } },
				nested: { type: "object", properties: { id: { $ref: "#/$defs/id" } } },
			},
			$defs: { id: { type: "bigint" } },
		};
		const out = withBigInts(schema, { n: 42, plain: 7, list: [1, "2"], nested: { id: 9 }, other: 3 });
		assert.deepEqual(out, { n: 42n, plain: 7, list: [1n, 2n], nested: { id: 9n }, other: 3 });
	});

	it("keeps a number where a union also takes numbers", () => {
		const schema = { type: "object", properties: { v: { anyOf: [{ type: "number" }, { type: "bigint" }] } } };
		assert.deepEqual(withBigInts(schema, { v: 5 }), { v: 5 });
		const only = { type: "object", properties: { v: { anyOf: [{ type: "string" }, { type: "bigint" }] } } };
		assert.deepEqual(withBigInts(only, { v: 5 }), { v: 5n });
	});

	it("leaves values that are not integers alone", () => {
		const schema = { type: "object", properties: { n: { type: "bigint" } } };
		assert.deepEqual(withBigInts(schema, { n: 1.5 }), { n: 1.5 });
		assert.deepEqual(withBigInts(undefined, { n: 1 }), { n: 1 });
	});
});
