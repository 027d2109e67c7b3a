import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";

/** A file and the files of this tree that it imports (type-only and lazy imports included). */
export type ImportGraph = Map<string, Set<string>>;

/** Every file under `dir` whose name ends with one of `extensions`, node_modules and caches aside. */
export function filesUnder(dir: string, extensions: string[]): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory())
      return name === "node_modules" || name === "__pycache__" || name.startsWith(".")
        ? []
        : filesUnder(path, extensions);
    return extensions.some((extension) => name.endsWith(extension)) ? [path] : [];
  });
}

const TS_RELATIVE_IMPORT = /(?:\bfrom|\bimport)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g;

/** The file a relative TypeScript specifier names: `./x.js` is `./x.ts`, a folder is its `index.ts`. */
function resolveTsSpecifier(from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier);
  const candidates = [base.replace(/\.js$/, ".ts"), `${base}.ts`, base, join(base, "index.ts")];
  return candidates.find((path) => path.endsWith(".ts") && existsSync(path) && statSync(path).isFile());
}

/** The import graph of TypeScript files, from their relative imports and re-exports. */
export function typescriptGraph(files: string[]): ImportGraph {
  const graph: ImportGraph = new Map();
  for (const file of files.map((f) => resolve(f))) {
    const targets = new Set<string>();
    for (const match of readFileSync(file, "utf8").matchAll(TS_RELATIVE_IMPORT)) {
      const target = resolveTsSpecifier(file, match[1]);
      if (target && target !== file) targets.add(target);
    }
    graph.set(file, targets);
  }
  return graph;
}

/** The module of `pythonRoot` that a dotted name names (`pkg/mod.py` or `pkg/mod/__init__.py`), if it is there. */
function pythonModuleFile(pythonRoot: string, dotted: string): string | undefined {
  const base = join(pythonRoot, ...dotted.split("."));
  return [`${base}.py`, join(base, "__init__.py")].find((path) => existsSync(path));
}

/**
 * The import graph of the Python packages under `pythonRoot`: `import a.b`, `from a.b import c` (c a module or a
 * name), `from .b import c` and `from . import b`, at any indentation (imports inside functions count).
 */
export function pythonGraph(pythonRoot: string): ImportGraph {
  const root = resolve(pythonRoot);
  const graph: ImportGraph = new Map();
  for (const file of filesUnder(root, [".py"])) {
    const own = relative(root, file).replace(/\.py$/, "").split(sep);
    const packageParts = own.at(-1) === "__init__" ? own.slice(0, -1) : own.slice(0, -1);
    const targets = new Set<string>();
    const add = (dotted: string) => {
      const target = pythonModuleFile(root, dotted);
      if (target && target !== file) targets.add(target);
    };
    for (const line of readFileSync(file, "utf8").split("\n")) {
      const fromImport = /^\s*from\s+(\.*)([\w.]*)\s+import\s+\(?([^#]+)/.exec(line);
      if (fromImport) {
        const [, dots, name, imported] = fromImport;
        const anchor = dots.length > 0 ? packageParts.slice(0, packageParts.length - (dots.length - 1)) : [];
        const module = [...anchor, ...(name ? name.split(".") : [])].join(".");
        if (name) add(module);
        for (const item of imported.split(",")) {
          const word = item.trim().split(/\s+/)[0]?.replace(/[()]/g, "");
          if (word && word !== "*") add(module ? `${module}.${word}` : word);
        }
        continue;
      }
      const plainImport = /^\s*import\s+([^#]+)/.exec(line);
      if (plainImport) for (const item of plainImport[1].split(",")) add(item.trim().split(/\s+/)[0] ?? "");
    }
    graph.set(file, targets);
  }
  return graph;
}

/** The strongly connected parts of more than one node (Tarjan), each sorted, in a stable order. */
export function circles(graph: ImportGraph): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(target) ?? 0));
      } else if (onStack.has(target)) low.set(node, Math.min(low.get(node) ?? 0, index.get(target) ?? 0));
    }
    if (low.get(node) !== index.get(node)) return;
    const part: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop();
      if (member === undefined) break;
      onStack.delete(member);
      part.push(member);
    } while (member !== node);
    if (part.length > 1) found.push(part.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return found.sort((a, b) => a[0].localeCompare(b[0]));
}

/** The graph between the folders right under `root`: folder A → B where a file of A imports a file of B. */
export function folderGraph(graph: ImportGraph, root: string): ImportGraph {
  const top = (file: string) => {
    const parts = relative(resolve(root), file).split(sep);
    return parts.length > 1 && parts[0] !== ".." ? parts[0] : undefined;
  };
  const folders: ImportGraph = new Map();
  for (const [file, targets] of graph) {
    const from = top(file);
    if (!from) continue;
    const edges = folders.get(from) ?? new Set<string>();
    folders.set(from, edges);
    for (const target of targets) {
      const to = top(target);
      if (to && to !== from) edges.add(to);
    }
  }
  return folders;
}

/** Each file of a circle with the circle's files it imports, relative to the working directory. */
export function describeCircle(graph: ImportGraph, circle: string[]): string {
  const members = new Set(circle);
  return circle
    .map((file) => {
      const targets = [...(graph.get(file) ?? [])].filter((target) => members.has(target));
      return `${relative(".", file)} -> ${targets.map((target) => relative(".", target)).join(", ")}`;
    })
    .join("\n");
}
