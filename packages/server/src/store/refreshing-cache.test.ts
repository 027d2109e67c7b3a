import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RefreshingCache } from "./refreshing-cache.ts";

/** A read whose answers the test releases one at a time. */
function controlledReads() {
  const pending: { key: string; resolve: (v: string) => void; reject: (e: Error) => void }[] = [];
  const read = (key: string) =>
    new Promise<string>((resolve, reject) => {
      pending.push({ key, resolve, reject });
    });
  return { read, pending };
}

const settle = () => new Promise((r) => setImmediate(r));

describe("RefreshingCache", () => {
  it("shares one read among calls that miss together", async () => {
    const { read, pending } = controlledReads();
    const cache = new RefreshingCache(read, { ttlMs: 1000, refreshAfterMs: 500 });
    const calls = [cache.get("a"), cache.get("a"), cache.get("a")];
    assert.equal(pending.length, 1);
    pending[0].resolve("v1");
    assert.deepEqual(await Promise.all(calls), ["v1", "v1", "v1"]);
  });

  it("reads ahead of expiry in the background, answering from memory meanwhile", async () => {
    let now = 0;
    const { read, pending } = controlledReads();
    const cache = new RefreshingCache(read, { ttlMs: 1000, refreshAfterMs: 500, now: () => now });
    const first = cache.get("a");
    pending[0].resolve("v1");
    assert.equal(await first, "v1");
    now = 400;
    assert.equal(await cache.get("a"), "v1");
    assert.equal(pending.length, 1, "young: no read");
    now = 600;
    assert.equal(await cache.get("a"), "v1", "answered at once while the read runs");
    assert.equal(await cache.get("a"), "v1");
    assert.equal(pending.length, 2, "one read ahead, not one per call");
    pending[1].resolve("v2");
    await settle();
    assert.equal(await cache.get("a"), "v2");
    assert.equal(pending.length, 2, "fresh again: no read");
  });

  it("never answers a value past ttlMs: callers then wait for the read under way", async () => {
    let now = 0;
    const { read, pending } = controlledReads();
    const cache = new RefreshingCache(read, { ttlMs: 1000, refreshAfterMs: 500, now: () => now });
    const first = cache.get("a");
    pending[0].resolve("v1");
    await first;
    now = 600;
    await cache.get("a");
    now = 1100;
    let answered: string | null = null;
    const late = cache.get("a").then((v) => {
      answered = v;
    });
    await settle();
    assert.equal(answered, null, "expired: waits");
    assert.equal(pending.length, 2, "and shares the read under way");
    pending[1].resolve("revoked");
    await late;
    assert.equal(answered, "revoked");
  });

  it("after a failed read ahead, the next call reads and waits (and sees the error)", async () => {
    let now = 0;
    const { read, pending } = controlledReads();
    const cache = new RefreshingCache(read, { ttlMs: 1000, refreshAfterMs: 500, now: () => now });
    const first = cache.get("a");
    pending[0].resolve("v1");
    await first;
    now = 600;
    await cache.get("a");
    pending[1].reject(new Error("database down"));
    await settle();
    const next = cache.get("a");
    assert.equal(pending.length, 3);
    pending[2].reject(new Error("database down"));
    await assert.rejects(next, /database down/);
  });

  it("does not keep values `keep` refuses, and `delete` makes the next call wait", async () => {
    const { read, pending } = controlledReads();
    const cache = new RefreshingCache(read, { ttlMs: 1000, refreshAfterMs: 500, keep: (v) => v !== "none" });
    const first = cache.get("a");
    pending[0].resolve("none");
    assert.equal(await first, "none");
    await settle();
    const second = cache.get("a");
    assert.equal(pending.length, 2, "a refused value is read again");
    pending[1].resolve("v1");
    assert.equal(await second, "v1");
    cache.delete("a");
    const third = cache.get("a");
    assert.equal(pending.length, 3);
    pending[2].resolve("v2");
    assert.equal(await third, "v2");
  });
});
