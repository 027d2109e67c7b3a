import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { extractTag, stripTags } from "./extract-tag.ts";

describe("extractTag", () => {
  it("returns the trimmed content of a closed block and its span", () => {
    const text = "x <teaching> hint </teaching> y";
    assert.deepEqual(extractTag(text, "teaching"), { state: "closed", content: "hint", start: 2, end: 29 });
  });

  it("accepts upper-case tags and spaces inside the brackets", () => {
    assert.equal(extractTag("<Solution >42</ SOLUTION>", "solution").content, "42");
  });

  it("runs an unclosed block to the end of the text", () => {
    assert.deepEqual(extractTag("<solution> 41 and then", "solution"), {
      state: "unclosed",
      content: "41 and then",
      start: 0,
      end: 22,
    });
  });

  it("reads a self-closing tag as a closed empty block", () => {
    assert.deepEqual(extractTag("a <teaching/> b", "teaching"), {
      state: "closed",
      content: "",
      start: 2,
      end: 13,
    });
  });

  it("reports a missing tag with empty content", () => {
    assert.equal(extractTag("no tags", "thinking").state, "missing");
  });

  it("picks the last block when asked, so a revised answer wins", () => {
    const text = "<solution>41</solution> wait, <solution>42</solution>";
    assert.equal(extractTag(text, "solution", "first").content, "41");
    assert.equal(extractTag(text, "solution", "last").content, "42");
  });
});

describe("stripTags", () => {
  it("removes protocol tags but keeps their text and other markup", () => {
    assert.equal(stripTags("<teaching>use <b>x</b></teaching>"), "use <b>x</b>");
  });
});
