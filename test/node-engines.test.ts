/**
 * The README's Node.js is enough: every package the lock file installs accepts the Node these tests run on, as npm
 * itself judges it (`npm install --engine-strict` refuses where `npm install` would warn EBADENGINE).
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { commandLacks, skipWithout } from "../scripts/required-parts.mjs";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

describe("the Node.js the README asks for", () => {
  it("is the root package's engines and the README's, Node 20", () => {
    const root = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as {
      engines: { node: string };
    };
    assert.equal(root.engines.node, ">=20");
    assert.match(readFileSync(join(ROOT, "README.md"), "utf8"), /On a machine with Node\.js ≥ 20:/);
  });

  it("runs every package package-lock.json installs, as npm judges it", {
    skip: skipWithout("npm", commandLacks("npm")),
    timeout: 180_000,
  }, async () => {
    // the manifests and the lock alone, in a folder of their own: npm plans the install without touching this one
    const dir = mkdtempSync(join(tmpdir(), "arc-engines-"));
    try {
      const workspaces = readdirSync(join(ROOT, "packages")).map((name) =>
        join("packages", name, "package.json"),
      );
      for (const file of ["package.json", "package-lock.json", ...workspaces]) {
        mkdirSync(dirname(join(dir, file)), { recursive: true });
        copyFileSync(join(ROOT, file), join(dir, file));
      }
      const args = ["install", "--dry-run", "--engine-strict", "--prefer-offline", "--no-audit", "--no-fund"];
      const run = await promisify(execFile)("npm", args, { cwd: dir, timeout: 170_000 }).catch(
        (error: { code: number; stdout: string; stderr: string }) => error,
      );
      const said = `${run.stdout}\n${run.stderr}`;
      assert.doesNotMatch(said, /EBADENGINE|notsup|Not compatible with your version of node/, said);
      assert.equal("code" in run ? run.code : 0, 0, said);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
