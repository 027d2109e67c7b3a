// `arc` as `npm pack` installs it: the compiled CLI (packages/*/dist, made by `npm run build`) on plain Node, with no
// TypeScript loader. The gateway benchmark runs `arc serve` this way, so it measures the server users deploy.
// Usage: node bench/arc-serve-compiled.mjs serve --port 0 --home <dir>
import { main } from "../packages/server/dist/cli/main.js";

process.exitCode = await main(process.argv.slice(2));
