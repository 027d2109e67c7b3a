import { mock } from "node:test";
import { main } from "../main.ts";

/** Runs `arc <argv>` in-process against a server and returns the exit code and what it printed (stdout and stderr). */
export async function runArcCli(
  server: { url: string; key: string },
  argv: string[],
): Promise<{ code: number; out: string }> {
  const log = mock.method(console, "log", () => {});
  const err = mock.method(console, "error", () => {});
  try {
    const code = await main([...argv, "--url", server.url, "--key", server.key]);
    const out = [...log.mock.calls, ...err.mock.calls].map((c) => c.arguments.join(" ")).join("\n");
    return { code, out };
  } finally {
    log.mock.restore();
    err.mock.restore();
  }
}
