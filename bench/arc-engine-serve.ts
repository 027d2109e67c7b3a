// `arc engine serve` in a child process, as a user starts it, for the benches that sample from a separate server.
import { type ChildProcess, spawn } from "node:child_process";

/** A running `arc engine serve`: the child and its OpenAI base URL. */
export interface ServingProcess {
  child: ChildProcess;
  url: string;
}

/** Starts `arc engine serve --port 0 <args>` and resolves once it listens. */
export async function arcEngineServe(args: string[]): Promise<ServingProcess> {
  const child = spawn(process.execPath, ["bin/arc.mjs", "engine", "serve", "--port", "0", ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  const url = await new Promise<string>((done, fail) => {
    let seen = "";
    child.stdout?.on("data", (d: Buffer) => {
      seen += d;
      const m = seen.match(/at (http:\/\/\S+\/v1)/);
      if (m) done(m[1]);
    });
    child.on("exit", (code) => fail(new Error(`arc engine serve exited with ${code}: ${seen}`)));
  });
  return { child, url };
}
