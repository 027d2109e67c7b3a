import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { renameModelInText, StreamModelRename } from "./model-rename.ts";

describe("model rename", () => {
  it("renames the top-level model of a body, leaving content that quotes one alone", () => {
    const body = JSON.stringify({
      id: "x",
      model: "Qwen/Qwen2.5-7B",
      choices: [{ message: { content: '{"model":"inner"}' } }],
    });
    const renamed = JSON.parse(renameModelInText(body, "arc"));
    assert.equal(renamed.model, "arc");
    assert.equal(renamed.choices[0].message.content, '{"model":"inner"}');
  });

  it("renames every event of a stream, whatever bytes a read cuts it into", () => {
    const events = [1, 2, 3]
      .map(
        (i) =>
          `data: ${JSON.stringify({ id: "c", model: "served-name", choices: [{ delta: { content: `é${i}` } }] })}\n\n`,
      )
      .join("");
    const bytes = new TextEncoder().encode(`${events}data: [DONE]\n\n`);
    for (const cut of [1, 7, 50, bytes.length]) {
      const rename = new StreamModelRename("arc");
      const out: Uint8Array[] = [];
      for (let at = 0; at < bytes.length; at += cut) out.push(rename.push(bytes.subarray(at, at + cut)));
      out.push(rename.end());
      const text = Buffer.concat(out).toString("utf8");
      assert.equal(
        text,
        new TextDecoder().decode(bytes).replaceAll('"model":"served-name"', '"model":"arc"'),
        `cut ${cut}`,
      );
    }
  });
});
