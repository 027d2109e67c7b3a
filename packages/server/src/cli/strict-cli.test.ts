import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it, mock } from "node:test";
import type { Command } from "./command.ts";
import { commands } from "./commands/index.ts";
import { main } from "./main.ts";

const arc = join(import.meta.dirname, "../../../../bin/arc.mjs");

/** Runs `arc <argv>` as its own process in `cwd`; resolves with its exit code and what it printed. */
function runArc(argv: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [arc, ...argv], { cwd, timeout: 60_000 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== "number")
        reject(new Error(`arc ${argv.join(" ")} did not exit by itself: ${error.message}\n${stderr}`));
      else resolve({ code: error ? Number(error.code) : 0, stdout, stderr });
    });
  });
}

/**
 * The flags a command's --help documents for itself: every --flag in it but those that follow a mention of
 * another `arc <command>` on their line.
 */
function documentedFlags(command: Command): string[] {
  const flags = new Set<string>();
  for (const line of command.help.split("\n")) {
    let owner = command.name;
    for (const [, word, flag] of line.matchAll(/\barc ([a-z]+)|--([a-z][a-z0-9-]*)/g)) {
      if (word) owner = word;
      else if (owner === command.name && flag !== "help") flags.add(flag);
    }
  }
  return [...flags];
}

describe("arc is strict about its command line", () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), "arc-strict-cli-"));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  it("refuses `arc demo --minute 5` with exit code 2, naming --minutes, without starting the demo", async () => {
    const home = join(dir, "demo");
    const done = await runArc(["demo", "--home", home, "--minute", "5"], dir);
    assert.deepEqual(done, {
      code: 2,
      stdout: "",
      stderr: "arc demo: unknown flag --minute (did you mean --minutes?)\n",
    });
    assert.equal(existsSync(home), false, "the demo must not have created its home");
    assert.equal(existsSync(join(dir, ".arc")), false);
  });
});

/**
 * Runs `main(argv)` in this process, as bin/arc.mjs does (the spawned run above covers its exit code and output
 * plumbing); resolves with its exit code and what it printed.
 */
async function runMain(argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const log = mock.method(console, "log", (...parts: unknown[]) => {
    stdout += `${parts.join(" ")}\n`;
  });
  const error = mock.method(console, "error", (...parts: unknown[]) => {
    stderr += `${parts.join(" ")}\n`;
  });
  try {
    return { code: await main(argv), stdout, stderr };
  } finally {
    log.mock.restore();
    error.mock.restore();
  }
}

describe("arc's command line, parsed as bin/arc.mjs parses it", () => {
  const refused: [argv: string[], stderr: string][] = [
    [["demo", "--minutes"], "arc demo: flag --minutes needs a value: --minutes <value>\n"],
    [["traces", "ls", "--limit", "--json"], "arc traces: flag --limit needs a value: --limit <value>\n"],
    [["runs", "ls", "--json=yes"], 'arc runs: flag --json takes no value, got "yes"\n'],
    [
      ["tenants", "list", "--xyz"],
      "arc tenants: unknown flag --xyz (known flags: --url, --key, --home, --json, --help)\n",
    ],
    [["dmeo"], 'arc: unknown command "dmeo" (did you mean demo?)\n'],
    [["frobnicate"], 'arc: unknown command "frobnicate" (arc --help lists the commands)\n'],
  ];
  for (const [argv, stderr] of refused) {
    it(`refuses \`arc ${argv.join(" ")}\` with exit code 2 and says why`, async () => {
      assert.deepEqual(await runMain(argv), { code: 2, stdout: "", stderr });
    });
  }

  for (const command of commands) {
    it(`accepts every flag arc ${command.name} --help documents, and declares no other`, async () => {
      const documented = documentedFlags(command);
      const argv = documented.flatMap((name) =>
        command.flags[name] === "boolean" ? [`--${name}`] : [`--${name}`, "x"],
      );
      const done = await runMain([command.name, "some-positional", "key=value", ...argv, "-h"]);
      assert.deepEqual(done, { code: 0, stdout: `${command.help}\n`, stderr: "" });
      assert.deepEqual(documented.sort(), Object.keys(command.flags).sort());
    });
  }
});
