import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, it } from "node:test";
import { taskFamilies } from "@arc/core";

const ROOT = join(import.meta.dirname, "..");

/**
 * Family-specific code lives in families: a family's tasks, tools, verifier, hints and partial credit sit in its own
 * folder and reach the rest of Arc through the TaskFamily hooks. These folders may name families; so may the
 * production-traffic simulators, which play a family's users, and tests with their fixtures.
 */
const FAMILY_FOLDERS = [
  "packages/core/src/families/",
  "packages/rl/src/families/",
  "packages/core/src/testing/simulate/",
];

/** Built-in families' env ids, as the process registry holds them before anything else registers. */
const FAMILY_NAMES = taskFamilies.envs();

/** The ways code writes a family's name: `toolcall`, `toolcallFamily`, `verifyToolcall`, `TOOLCALL_TOOLS`, never `arithmetic`. */
function namePattern(env: string): RegExp {
  const words = env.split(/[-_]/);
  const lower = words.join("");
  const capital = words.map((w) => w[0].toUpperCase() + w.slice(1)).join("");
  const upper = words.join("_").toUpperCase();
  return new RegExp(`(?<![a-z])${lower}(?![a-z])|${capital}(?![a-z])|${upper}(?![A-Z])`);
}

/** Non-test TypeScript sources of the packages (tests and their fixtures may name families). */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory())
      return name === "__fixtures__" || name === "dist" ? [] : sourceFiles(path);
    return name.endsWith(".ts") && !name.endsWith(".test.ts") ? [path] : [];
  });
}

/** Each source file outside the family folders with the family names it holds. */
function familyNamesOutsideFamilies(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const pkg of readdirSync(join(ROOT, "packages"))) {
    const src = join(ROOT, "packages", pkg, "src");
    if (!statSync(join(ROOT, "packages", pkg)).isDirectory()) continue;
    for (const file of sourceFiles(src)) {
      const path = relative(ROOT, file);
      if (FAMILY_FOLDERS.some((folder) => path.startsWith(folder))) continue;
      const text = readFileSync(file, "utf8");
      const names = FAMILY_NAMES.filter((env) => namePattern(env).test(text));
      if (names.length > 0) found.set(path, names);
    }
  }
  return found;
}

describe("family names", () => {
  it("reads the built-in families' names from the registry", () => {
    assert.ok(FAMILY_NAMES.length >= 3, FAMILY_NAMES.join(", "));
    for (const env of FAMILY_NAMES) {
      const folder = join(ROOT, "packages/core/src/families", env);
      assert.ok(statSync(folder).isDirectory(), `${env}: its code lives in ${relative(ROOT, folder)}/`);
    }
  });

  it("matches a family's name as code writes it, and not the words that contain it", () => {
    const pattern = namePattern("toolcall");
    for (const text of [
      "toolcall",
      "toolcallFamily",
      "verifyToolcall",
      "TOOLCALL_TOOLS",
      "recipes/toolcall-dpo",
    ])
      assert.ok(pattern.test(text), text);
    for (const text of ["toolCall", "tool_call", "TOOL_CALL", "toolCalls"])
      assert.ok(!pattern.test(text), text);
    assert.ok(!namePattern("arith").test("arithmetic ARITHMETIC Arithmetic"));
  });

  it("finds no family name in packages/*/src outside the families' folders and the simulators", () => {
    assert.deepEqual(
      [...familyNamesOutsideFamilies()].map(([path, names]) => `${path}: ${names.join(", ")}`),
      [],
      "family-specific code belongs in its family's folder, reached through a TaskFamily hook",
    );
  });
});
