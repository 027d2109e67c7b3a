import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, it } from "node:test";

/** Which of our packages each package may import (DESIGN.md: sdk, core → nothing; engine, rl → core; server → all). */
const allowedImports: Record<string, string[]> = {
  sdk: [],
  core: [],
  engine: ["core"],
  rl: ["core", "engine"],
  server: ["core", "engine", "rl", "sdk"],
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === "node_modules" ? [] : sourceFiles(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

function importedArcPackages(file: string): string[] {
  const text = readFileSync(file, "utf8");
  const found = new Set<string>();
  for (const match of text.matchAll(/(?:from|import)\s*\(?\s*["']@arc\/([a-z]+)/g)) found.add(match[1]);
  for (const match of text.matchAll(/["'](?:\.\.\/)+(?:\.\.\/)?(sdk|core|engine|rl|server)\/src\//g))
    found.add(match[1]);
  return [...found];
}

describe("import direction between packages", () => {
  for (const [pkg, allowed] of Object.entries(allowedImports)) {
    it(`keeps @arc/${pkg} to importing only ${allowed.length ? allowed.join(", ") : "none of our packages"}`, () => {
      const violations = sourceFiles(join("packages", pkg, "src")).flatMap((file) =>
        importedArcPackages(file)
          .filter((imported) => imported !== pkg && !allowed.includes(imported))
          .map((imported) => `${file} imports @arc/${imported}`),
      );
      assert.deepEqual(violations, []);
    });
  }

  it("lets rl import @arc/engine only from worker-thread entry points (and tests and their fixtures)", () => {
    const offenders = sourceFiles(join("packages", "rl", "src"))
      .filter((file) => importedArcPackages(file).includes("engine"))
      .filter((file) => !/worker/.test(file) && !file.endsWith(".test.ts") && !file.includes("__fixtures__"));
    assert.deepEqual(offenders, []);
  });
});

/** The server's stage folders: each builds its services; only serve/ composes them with the HTTP routes. */
const STAGE_FOLDERS = ["deploy", "failures", "orchestrator", "validate", "teaching", "gateway"];

/** The server folders a stage may not import: the HTTP layer, the CLI and the composition root. */
const WIRING_FOLDERS = ["http", "cli", "serve"];
const serverSrc = resolve("packages", "server", "src");

describe("wiring in one place inside the server", () => {
  for (const stage of STAGE_FOLDERS) {
    it(`keeps ${stage}/ from importing ${WIRING_FOLDERS.join(", ")}/ (tests and fixtures aside)`, () => {
      const offenders = sourceFiles(join("packages", "server", "src", stage))
        .filter((file) => !file.endsWith(".test.ts") && !file.includes("__fixtures__"))
        .flatMap((file) =>
          [...readFileSync(file, "utf8").matchAll(/(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)]
            .map((match) => relative(serverSrc, resolve(dirname(file), match[1])).split(sep)[0])
            .filter((folder) => WIRING_FOLDERS.includes(folder))
            .map((folder) => `${file} imports ${folder}/`),
        );
      assert.deepEqual(offenders, []);
    });
  }
});
