import assert from "node:assert/strict";
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, it } from "node:test";
import {
  circles,
  describeCircle,
  filesUnder,
  folderGraph,
  pythonGraph,
  typescriptGraph,
} from "./import-graph.js";

/**
 * Which of our packages each package may import (the README's "Packages" table: sdk, core → nothing; engine → core;
 * rl → core, engines injected; server → all).
 */
const allowedImports: Record<string, string[]> = {
  sdk: [],
  core: [],
  engine: ["core"],
  rl: ["core", "engine"],
  server: ["core", "engine", "rl", "sdk"],
};

/** The TypeScript files under `dir`. */
const sourceFiles = (dir: string): string[] => filesUnder(dir, [".ts"]);

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
const STAGE_FOLDERS = ["deploy", "failures", "orchestrator", "validate", "teach", "gateway"];

/** The server folders a stage may not import: the HTTP layer, the CLI and the composition root. */
const WIRING_FOLDERS = ["http", "cli", "serve"];
const serverSrc = resolve("packages", "server", "src");

describe("wiring in one place inside the server", () => {
  for (const stage of STAGE_FOLDERS) {
    it(`keeps ${stage}/ from importing ${WIRING_FOLDERS.join(", ")}/ (tests and fixtures aside)`, () => {
      const stageDir = join("packages", "server", "src", stage);
      assert.ok(statSync(stageDir).isDirectory(), `${stageDir} is a folder`);
      const offenders = sourceFiles(stageDir)
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

const PACKAGES = readdirSync("packages").filter((name) => statSync(join("packages", name)).isDirectory());

describe("no import circles", () => {
  for (const pkg of PACKAGES) {
    it(`keeps the TypeScript files of packages/${pkg}/src free of import circles (type-only imports count)`, () => {
      const graph = typescriptGraph(filesUnder(join("packages", pkg, "src"), [".ts"]));
      assert.deepEqual(
        circles(graph).map((circle) => describeCircle(graph, circle)),
        [],
      );
    });
  }

  for (const pkg of PACKAGES.filter(
    (name) => filesUnder(join("packages", name, "python"), [".py"]).length > 0,
  )) {
    it(`keeps the Python modules of packages/${pkg}/python free of import circles (imports inside functions count)`, () => {
      const graph = pythonGraph(join("packages", pkg, "python"));
      assert.deepEqual(
        circles(graph).map((circle) => describeCircle(graph, circle)),
        [],
      );
    });
  }

  it("keeps the PyTorch worker's package free of its tools: no module of arc_torch imports arc_tools", () => {
    const root = resolve("packages/engine/python");
    const graph = pythonGraph(root);
    const inPackage = (file: string, pkg: string) => file.startsWith(join(root, pkg) + sep);
    assert.ok(
      graph.get(join(root, "arc_tools", "gpu_check.py"))?.has(join(root, "arc_torch", "engine.py")),
      "the graph sees the tools import the worker's modules (gpu_check.py imports arc_torch.engine)",
    );
    const wrong = [...graph]
      .filter(([file]) => inPackage(file, "arc_torch"))
      .flatMap(([file, targets]) =>
        [...targets]
          .filter((t) => inPackage(t, "arc_tools"))
          .map((t) => `${relative(root, file)} → ${relative(root, t)}`),
      );
    assert.deepEqual(wrong, []);
  });

  it("keeps the folders of packages/server/src free of cycles (tests aside: a test may compose any folders)", () => {
    const files = filesUnder(serverSrc, [".ts"]).filter((file) => !file.endsWith(".test.ts"));
    const graph = folderGraph(typescriptGraph(files), serverSrc);
    assert.deepEqual(
      circles(graph).map((circle) => describeCircle(graph, circle)),
      [],
    );
  });

  it("sees type-only imports, Python imports inside functions, and circles and folder cycles in a graph", () => {
    const rl = typescriptGraph(["packages/rl/src/verl/verl-overrides.ts"]);
    assert.ok(
      rl
        .get(resolve("packages/rl/src/verl/verl-overrides.ts"))
        ?.has(resolve("packages/rl/src/recipe/recipe-schema.ts")),
      "verl-overrides.ts imports the recipe schema's type",
    );
    const python = pythonGraph("packages/engine/python");
    assert.ok(
      python
        .get(resolve("packages/engine/python/arc_torch/ray_engine.py"))
        ?.has(resolve("packages/engine/python/arc_torch/distributed.py")),
      "ray_engine.py imports distributed inside a method",
    );
    const loop = new Map([
      ["/r/a/x.ts", new Set(["/r/b/y.ts"])],
      ["/r/b/y.ts", new Set(["/r/c/z.ts"])],
      ["/r/c/z.ts", new Set(["/r/a/w.ts"])],
      ["/r/a/w.ts", new Set<string>()],
    ]);
    assert.deepEqual(circles(loop), [], "files a → b → c → a' form no file circle");
    assert.deepEqual(circles(folderGraph(loop, "/r")), [["a", "b", "c"]], "but their folders form a cycle");
  });
});
