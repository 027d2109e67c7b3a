import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, it } from "node:test";
import { documentationFiles } from "./documentation-files.ts";

/** What a bench, a run or the engine writes when it runs: named in the docs, not in the repository. */
const WRITTEN_WHEN_RUN = [
  /^bench\/results\/[\w-]+\.md$/,
  /^bench\/results\/demo-real\.json$/, // bench:demo --base-model's, a 45-minute run on the imported model
  /^bench\/gpu\/[\w-]+\.json$/,
  /^native\/build\/$/, // the engine's native kernels, compiled on first use
];

/**
 * The repository paths a page names in code (`src/serve/`, `packages/engine/python/arc_torch/grammar.py`,
 * `src/http/routes/{pattern,dataset}-routes.ts`), each brace alternative apart.
 */
function namedPaths(text: string): string[] {
  return [...text.matchAll(/`((?:src|python|native|packages|scripts|bench|test|recipes|models)\/[^`\s]+)`/g)]
    .map((m) => m[1].split(":")[0])
    .filter((path) => !/[*<]/.test(path))
    .flatMap((path) => {
      const braces = /\{([^}]+)\}/.exec(path);
      return braces
        ? braces[1]
            .split(",")
            .map((part) => path.slice(0, braces.index) + part + path.slice(braces.index + braces[0].length))
        : [path];
    });
}

/** Whether `path`, as `page` names it, is in the repository: from the page's folder or from the root. */
function exists(page: string, path: string): boolean {
  const plain = path.replace(/\/$/, "");
  return existsSync(join(dirname(page), plain)) || existsSync(plain);
}

/** A heading's anchor as GitHub makes it: lower case, punctuation but hyphens dropped, spaces as hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors of a markdown page's headings. */
function anchors(page: string): Set<string> {
  return new Set([...readFileSync(page, "utf8").matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1])));
}

describe("the docs name files that exist", () => {
  it("links only to files that exist, and to headings those pages have", () => {
    const broken: string[] = [];
    let links = 0;
    for (const page of documentationFiles()) {
      const text = readFileSync(page, "utf8").replace(/```[\s\S]*?```/g, "");
      for (const [, target, anchor] of text.matchAll(/\]\(((?!https?:|mailto:)[^)#\s]*)(?:#([^)\s]+))?\)/g)) {
        links++;
        const path = target ? normalize(join(dirname(page), target)) : page;
        if (!existsSync(path)) broken.push(`${page}: ${target} does not exist`);
        else if (anchor && path.endsWith(".md") && !anchors(path).has(anchor))
          broken.push(`${page}: ${target || page} has no heading #${anchor}`);
      }
    }
    assert.ok(links > 50, `the docs link to each other, found ${links} links`);
    assert.deepEqual(broken, []);
  });

  it("names in code only paths of the repository (or files a bench writes when it runs)", () => {
    let named = 0;
    const missing = documentationFiles().flatMap((page) =>
      namedPaths(readFileSync(page, "utf8"))
        .filter((path) => {
          named++;
          return !WRITTEN_WHEN_RUN.some((written) => written.test(path)) && !exists(page, path);
        })
        .map((path) => `${page}: ${path}`),
    );
    assert.ok(named > 50, `the docs name files, found ${named}`);
    assert.deepEqual(missing, [], "a file the docs name that is not there: moved, renamed or removed?");
  });

  it("makes a heading's anchor as GitHub does", () => {
    assert.equal(anchorOf("Verify, judge, validate, eval, reward"), "verify-judge-validate-eval-reward");
    assert.equal(anchorOf("The main job on fresh clones"), "the-main-job-on-fresh-clones");
    assert.equal(anchorOf("`toolcall-base`"), "toolcall-base");
  });

  it("reads the paths a page names, brace alternatives apart", () => {
    assert.deepEqual(
      namedPaths(
        "Code: `src/failures/`, `src/http/routes/{pattern,dataset}-routes.ts`, `arc serve`, `<dir>/x`",
      ),
      ["src/failures/", "src/http/routes/pattern-routes.ts", "src/http/routes/dataset-routes.ts"],
    );
    assert.equal(exists(join("packages", "server", "README.md"), "src/serve/"), true);
    assert.equal(exists(join("packages", "server", "README.md"), "src/deploy/release-service.ts"), false);
  });
});
