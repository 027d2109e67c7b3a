import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { type Task, TaskFamilyRegistry } from "@arc/core";
import { loadTaskFamilies } from "@arc/rl";
import { REPOSITORY_ROOT } from "../orchestrator/train-process.ts";
import { FACTORS_TS, STEPCONV_JSON, STEPCONV_TS } from "./__fixtures__/stepconv-family.ts";

const run = promisify(execFile);

describe("task families in a folder outside the repository", () => {
  let project: string;

  before(async () => {
    // a user's project: its own folder (no package.json), with @arc/core installed in its node_modules
    project = await mkdtemp(join(tmpdir(), "arc-user-family-"));
    assert.ok(!resolve(project).startsWith(REPOSITORY_ROOT), "the project must lie outside the repository");
    await mkdir(join(project, "node_modules", "@arc"), { recursive: true });
    await symlink(join(REPOSITORY_ROOT, "packages", "core"), join(project, "node_modules", "@arc", "core"));
    await writeFile(join(project, "factors.ts"), FACTORS_TS);
    await writeFile(join(project, "stepconv.ts"), STEPCONV_TS);
    await writeFile(
      join(project, "stepconv.mts"),
      STEPCONV_TS.replace('env: "stepconv"', 'env: "stepconv-mts"'),
    );
    await writeFile(
      join(project, "plain.js"),
      // a plain object: importing @arc/core from JavaScript needs the built package, which `npm pack` makes
      // (test/packages-install.test.ts installs the packed packages); a TypeScript family imports its source
      `export default {
  env: "stepconv-js",
  tools: [{ name: "answer", description: "Give the value.", parameters: { type: "object" } }],
  prompt: (task) => [{ role: "user", content: task.question }],
  reference: () => ['{"tool":"answer","args":{"value":1}}'],
};
`,
    );
    await writeFile(join(project, "stepconv.json"), JSON.stringify(STEPCONV_JSON));
  });
  after(() => rm(project, { recursive: true, force: true }));

  it("registers a .ts, .mts, .js and .json family by path through `arc --family`", async () => {
    const flags = ["stepconv.ts", "stepconv.mts", "plain.js", "stepconv.json"].flatMap((f) => [
      "--family",
      f,
    ]);
    const { stdout } = await run(
      process.execPath,
      [join(REPOSITORY_ROOT, "bin/arc.mjs"), ...flags, "families", "--json"],
      {
        cwd: project,
        timeout: 60_000,
      },
    );
    const listed = JSON.parse(stdout) as { env: string; multiTurn: boolean; verifier: boolean }[];
    const byEnv = new Map(listed.map((f) => [f.env, f]));
    for (const env of ["stepconv", "stepconv-mts", "stepconv-js", "stepconv-json"])
      assert.ok(byEnv.has(env), `${env} is not registered: ${[...byEnv.keys()].join(", ")}`);
    assert.deepEqual([byEnv.get("stepconv")?.multiTurn, byEnv.get("stepconv")?.verifier], [true, true]);
  });

  it("loads the .ts family in this process and plays its session contract: lookup, then answer", async () => {
    const registry = new TaskFamilyRegistry();
    const [family] = await loadTaskFamilies([join(project, "stepconv.ts")], { registry });
    const task: Task = {
      id: "t1",
      env: "stepconv",
      question: "Convert 3 miles to km.",
      solution: { value: 3, from: "mi", to: "km" },
    };
    const reference = family.reference(task);
    const session = family.session?.(task);
    assert.ok(session, "the family has no session");
    const first = session.act(reference[0]);
    assert.deepEqual([JSON.parse(first.observation), first.done], [{ factor: 1.609344 }, false]);
    assert.equal(session.act(reference[1]).done, true);
    assert.equal(family.verify?.({ outputs: reference, solution: task.solution }).status, "pass");
    assert.equal(
      family.verify?.({ outputs: [reference[1]], solution: task.solution }).failure?.class,
      "wrong_tool",
    );
  });
});
