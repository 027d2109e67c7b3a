import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { documentationFiles } from "./documentation-files.ts";

/** The source files Arc runs: every `.ts` under packages/*\/src but tests, fixtures and test doubles. */
function runtimeSources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory())
      return name.startsWith("__") || name === "test-doubles" ? [] : runtimeSources(path);
    return name.endsWith(".ts") && !name.endsWith(".test.ts") ? [path] : [];
  });
}

/** The `ARC_*` environment variables a source reads: `process.env.ARC_X`, or the name as a string literal. */
function variablesRead(source: string): string[] {
  return [...source.matchAll(/process\.env\.(ARC_[A-Z0-9_]+)\b|["'`](ARC_[A-Z0-9_]+)["'`]/g)].map(
    (m) => m[1] ?? m[2],
  );
}

describe("the docs name every environment variable Arc reads", () => {
  it("has each ARC_* variable of packages/*/src in a README or guide", () => {
    const read = new Set(
      readdirSync("packages").flatMap((pkg) =>
        runtimeSources(join("packages", pkg, "src")).flatMap((file) =>
          variablesRead(readFileSync(file, "utf8")),
        ),
      ),
    );
    assert.ok(read.size > 20, `Arc reads ARC_* variables, found ${read.size}`);
    const docs = documentationFiles()
      .map((file) => readFileSync(file, "utf8"))
      .join("\n");
    assert.deepEqual(
      [...read].filter((name) => !new RegExp(`\\b${name}\\b`).test(docs)).sort(),
      [],
      "a variable Arc reads that no README or guide names: say what it sets",
    );
  });

  it("reads a variable from process.env and from a string literal", () => {
    assert.deepEqual(
      variablesRead('const a = process.env.ARC_ONE; number("ARC_TWO", "x"); `ARC_THREE`; ARC_NOT_READ'),
      ["ARC_ONE", "ARC_TWO", "ARC_THREE"],
    );
  });
});
