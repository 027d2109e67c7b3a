// The project's documentation as the docs tests read it: every README (any folder) and every markdown page under docs/.
import { readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";

/** Folders that hold no documentation of ours (dependencies, dot folders, what the benches and the demo write). */
const SKIPPED = new Set(["node_modules", join("bench", "results")]);

/** Every README (any folder), and every markdown file under docs/, relative to the repository root. */
export function documentationFiles(dir = "."): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name.startsWith(".") || SKIPPED.has(name) || SKIPPED.has(relative(".", path))) return [];
    if (statSync(path).isDirectory()) return documentationFiles(path);
    const isReadme = /^readme(\.[a-z]+)?\.md$/i.test(name);
    const isDoc = relative(".", path).split(/[\\/]/)[0] === "docs" && name.endsWith(".md");
    return isReadme || isDoc ? [relative(".", path)] : [];
  });
}
