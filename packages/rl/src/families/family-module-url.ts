import { register } from "node:module";
import { dirname } from "node:path";
import { pathToFileURL } from "node:url";

/** The query a TypeScript family module (and the modules of its folder it imports) is imported with. */
const FAMILY_MODULE_MARK = "arc-family-module";

/**
 * A loader hook that makes TypeScript files of a family's folder ES modules. A `.ts` file outside any package with
 * `"type": "module"` (a family in the user's own folder) would otherwise load as CommonJS, and its `import` of
 * `@arc/core` would then `require()` an ES module that is still loading ("Cannot require() ES Module ... in a cycle").
 * A file imported with the mark is a module, and so is each `.ts`/`.tsx` file it imports from its own folder (they get
 * the mark too); packages it imports (`@arc/core`) are left as they resolve.
 */
const HOOK = `
const MARK = ${JSON.stringify(FAMILY_MODULE_MARK)};
const withoutQuery = (url) => url.replace(/[?#].*$/, "");
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  const parent = context.parentURL ?? "";
  const folder = parent.includes(MARK) ? withoutQuery(parent).replace(/[^/]*$/, "") : null;
  const marked = specifier.includes(MARK) || (folder !== null && resolved.url.startsWith(folder));
  if (!marked || !/\\.tsx?$/.test(withoutQuery(resolved.url)) || resolved.url.includes("/node_modules/")) return resolved;
  const url = resolved.url.includes(MARK) ? resolved.url : resolved.url + (resolved.url.includes("?") ? "&" : "?") + MARK;
  // tsx says commonjs for such a file, Node's own type stripping commonjs-typescript
  const format = resolved.format === "commonjs" ? "module" : resolved.format === "commonjs-typescript" ? "module-typescript" : resolved.format;
  return { ...resolved, url, format };
}`;

let registered = false;

/**
 * The URL to import a family module from, with the mark (the hook registered in this thread the first time), so a
 * TypeScript family loads as an ES module wherever it lies; the mark changes nothing for a JavaScript file.
 */
export function familyModuleUrl(file: string): string {
  if (!registered) {
    register(`data:text/javascript,${encodeURIComponent(HOOK)}`, pathToFileURL(dirname(file)).href);
    registered = true;
  }
  return `${pathToFileURL(file).href}?${FAMILY_MODULE_MARK}`;
}
