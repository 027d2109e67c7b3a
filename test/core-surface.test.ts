import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, it } from "node:test";
import { filesUnder, folderGraph, typescriptGraph } from "./import-graph.js";

/** The folders of @arc/core that are its spec: types, schemas and errors that other packages implement or produce. */
const SPEC_FOLDERS = ["engine-api", "errors", "rollout", "trace"];

const coreSrc = resolve("packages", "core", "src");
const coreIndex = readFileSync(resolve(coreSrc, "index.ts"), "utf8");

/** The `export * from` lines of a module's text. */
function starExports(text: string): string[] {
  return [...text.matchAll(/^export\s+\*(?:\s+as\s+\w+)?\s+from\s+["'][^"']+["'];?$/gm)].map(
    (match) => match[0],
  );
}

/** The folders an index re-exports from, in the order it names them, under the section comment `// ---- title ----`. */
function sectionFolders(text: string, title: string): string[] {
  const section = text.split(/^\/\/ ---- /m).find((part) => part.startsWith(`${title} ----`)) ?? "";
  return [...section.matchAll(/from\s+"\.\/([\w-]+)\/index\.ts"/g)].map((match) => match[1]);
}

describe("@arc/core's public surface", () => {
  it("names every export in core's index (no export * chains)", () => {
    assert.deepEqual(starExports(coreIndex), []);
  });

  it("groups the spec folders apart from the logic in core's index", () => {
    assert.deepEqual(sectionFolders(coreIndex, "Spec").sort(), SPEC_FOLDERS);
    const logic = sectionFolders(coreIndex, "Logic");
    assert.ok(logic.length > 0, "the index has a Logic section");
    assert.deepEqual(
      logic.filter((folder) => SPEC_FOLDERS.includes(folder)),
      [],
    );
  });

  it("keeps the test helpers and the traffic simulator off the main surface (they are @arc/core/testing)", () => {
    assert.doesNotMatch(coreIndex, /from\s+"\.\/testing\//);
  });

  it("keeps the built-in families off the main surface (they are @arc/core/families)", () => {
    assert.doesNotMatch(coreIndex, /from\s+"\.\/families\/(index|toolcall|arith|orderdesk)\b/);
  });

  it("keeps the spec folders to importing only spec folders (tests aside)", () => {
    const files = filesUnder(coreSrc, [".ts"]).filter((file) => !file.endsWith(".test.ts"));
    const folders = folderGraph(typescriptGraph(files), coreSrc);
    for (const spec of SPEC_FOLDERS)
      assert.ok(folders.has(spec), `packages/core/src/${spec}/ holds source files`);
    const offenders = SPEC_FOLDERS.flatMap((spec) =>
      [...(folders.get(spec) ?? [])]
        .filter((imported) => !SPEC_FOLDERS.includes(imported))
        .map((imported) => `${spec}/ imports ${imported}/`),
    );
    assert.deepEqual(offenders, []);
  });

  it("finds export * lines and reads an index's sections", () => {
    assert.deepEqual(starExports('export * from "./a/index.ts";\nexport { b } from "./b/index.ts";\n'), [
      'export * from "./a/index.ts";',
    ]);
    const text =
      '// ---- Spec ----\nexport { a } from "./a/index.ts";\n// ---- Logic ----\nexport { b } from "./b/index.ts";\n';
    assert.deepEqual(sectionFolders(text, "Spec"), ["a"]);
    assert.deepEqual(sectionFolders(text, "Logic"), ["b"]);
  });
});
