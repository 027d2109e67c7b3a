import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";

/** The packages whose README keeps a list of their source folders, one `` `name/` `` entry each. */
const LISTED = ["core", "engine", "rl"];

/** The top-level folders of a package's `src/`, but fixtures and test doubles. */
function sourceFolders(pkg: string): string[] {
  const src = join("packages", pkg, "src");
  return readdirSync(src)
    .filter((name) => statSync(join(src, name)).isDirectory())
    .filter((name) => !name.startsWith("__") && name !== "test-doubles")
    .sort();
}

/** The folders a README's list names: lines that start with `` - `name/` `` or `` | `name/` ``. */
function listedFolders(readme: string): string[] {
  return [...readme.matchAll(/^(?:- |\| )`([a-z][\w-]*)\/`/gm)].map((m) => m[1]).sort();
}

describe("a package README lists the package's source folders as they are", () => {
  for (const pkg of LISTED) {
    it(`packages/${pkg}/README.md names each folder of src/ and no other`, () => {
      const listed = listedFolders(readFileSync(join("packages", pkg, "README.md"), "utf8"));
      const folders = sourceFolders(pkg);
      assert.deepEqual(
        folders.filter((f) => !listed.includes(f)),
        [],
        "a folder of src/ the README does not list: say what it holds",
      );
      assert.deepEqual(
        listed.filter((f) => !folders.includes(f)),
        [],
        "a folder the README lists that src/ does not have: moved or removed?",
      );
    });
  }

  it("reads a README's folder list", () => {
    assert.deepEqual(listedFolders("- `run/` runs\n| `torch/` | the engine |\nsee `other/` here\n"), [
      "run",
      "torch",
    ]);
  });
});
