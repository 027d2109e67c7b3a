import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { approximateTokenCounter as counter } from "./token-counter.ts";

describe("approximateTokenCounter", () => {
  it("counts short words and punctuation as one token each", () => {
    assert.equal(counter.count("Add the two terms, then carry."), 8);
  });

  it("counts long words and long digit runs as several tokens", () => {
    assert.equal(counter.count("internationalization"), 4);
    assert.equal(counter.count("1234567"), 3);
  });

  it("counts nothing in blank text", () => {
    assert.equal(counter.count("  \n "), 0);
  });

  it("truncates to the longest prefix within the budget, ending on a whole piece", () => {
    const cut = counter.truncate("one two three four five", 3);
    assert.equal(cut, "one two three");
    assert.ok(counter.count(cut) <= 3);
  });

  it("returns the whole text when it fits the budget", () => {
    assert.equal(counter.truncate("a b c", 10), "a b c");
  });
});
