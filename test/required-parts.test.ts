/**
 * Required means required: where ARC_REQUIRE names a part of the machine (as .ci/run names them all), a missing part
 * fails the run and says which; elsewhere the tests that need it skip, say why, and the runner counts them.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import {
  MissingPartError,
  postgresLacks,
  pythonLacks,
  requiredParts,
  skipWithout,
} from "../scripts/required-parts.mjs";
import { skipSummary, slowestFilesLine, totalsLine } from "../scripts/skip-summary.mjs";
import { BATCH_S, QUICK_FILE_S, startOrder, startUnits } from "../scripts/test-order.mjs";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/**
 * This process's environment without ARC_REQUIRE (nor the test runner's mark of a child it runs), with `extra` over it
 * (an undefined value removes the name).
 */
function envWith(extra: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const { ARC_REQUIRE: _required, NODE_TEST_CONTEXT: _child, ...env } = process.env;
  const merged: NodeJS.ProcessEnv = { ...env, ...extra };
  for (const [name, value] of Object.entries(extra)) if (value === undefined) delete merged[name];
  return merged;
}

/** Runs a script of the repository with plain Node; its exit status and what it printed. */
function node(script: string, args: string[], env: NodeJS.ProcessEnv) {
  const run = spawnSync(process.execPath, [join(ROOT, script), ...args], {
    cwd: ROOT,
    env,
    encoding: "utf8",
  });
  return { status: run.status, out: `${run.stdout}${run.stderr}` };
}

/** A PATH with node on it and no python3. */
function pathWithoutPython(): string {
  const bin = mkdtempSync(join(tmpdir(), "arc-no-python-"));
  symlinkSync(process.execPath, join(bin, "node"));
  assert.equal(
    spawnSync("python3", ["--version"], { env: { PATH: bin } }).error?.message.includes("ENOENT"),
    true,
  );
  return bin;
}

describe("the parts a run requires", () => {
  it("names the Python modules that are not installed, finding the others without importing them", () => {
    const dir = mkdtempSync(join(tmpdir(), "arc-python-modules-"));
    // installed, and raises when imported: found all the same (its own test would fail on it, not skip)
    writeFileSync(join(dir, "arc_probe_raises.py"), "raise RuntimeError('imported')\n");
    const python = join(dir, "python");
    writeFileSync(python, `#!/bin/sh\nPYTHONPATH=${dir} exec python3 "$@"\n`, { mode: 0o755 });
    assert.equal(pythonLacks(python, ["json", "arc_probe_raises"]), undefined);
    assert.equal(
      pythonLacks(python, ["json", "arc_no_such_module", "arc_nor_this"]),
      `${python} has no arc_no_such_module, arc_nor_this`,
    );
    assert.match(
      pythonLacks(join(dir, "absent"), ["json"]) ?? "",
      /^no .*absent \(node scripts\/python-env\.mjs/,
    );
  });

  it("skips with the part and the reason where ARC_REQUIRE does not name the part, and throws where it does", () => {
    assert.equal(skipWithout("chromium", undefined, {}), false);
    assert.equal(
      skipWithout("chromium", "/usr/bin/chromium is absent", {}),
      "chromium: /usr/bin/chromium is absent",
    );
    assert.equal(
      skipWithout("chromium", "/usr/bin/chromium is absent", { ARC_REQUIRE: "python, postgres" }),
      "chromium: /usr/bin/chromium is absent",
    );
    assert.throws(
      () => skipWithout("chromium", "/usr/bin/chromium is absent", { ARC_REQUIRE: "python,chromium" }),
      (error) =>
        MissingPartError.isInstance(error) &&
        error.part === "chromium" &&
        /ARC_REQUIRE names chromium .*, but \/usr\/bin\/chromium is absent/.test(error.message),
    );
    assert.equal(skipWithout("chromium", undefined, { ARC_REQUIRE: "chromium" }), false);
  });

  it("refuses a name in ARC_REQUIRE that is not a part, listing the parts", () => {
    assert.deepEqual([...requiredParts({ ARC_REQUIRE: "python,ray" })], ["python", "ray"]);
    assert.throws(
      () => requiredParts({ ARC_REQUIRE: "python,pyton" }),
      /ARC_REQUIRE: expected parts among python, ray, postgres, chromium, cc, npm, got pyton/,
    );
  });

  it("fails the venv step without python3 where python is required, and says the tests will skip elsewhere", () => {
    const PATH = pathWithoutPython();
    const required = node("scripts/python-env.mjs", [], envWith({ PATH, ARC_REQUIRE: "python" }));
    assert.equal(required.status, 1, required.out);
    assert.match(required.out, /ARC_REQUIRE names python .*, but no python3 on PATH/);
    const optional = node("scripts/python-env.mjs", [], envWith({ PATH }));
    assert.equal(optional.status, 0, optional.out);
    assert.match(optional.out, /no python3 on PATH .*; the tests that need the project's Python will skip/);
  });

  it("fails the check of required parts without Chromium, naming it, and passes with it", () => {
    const absent = join(mkdtempSync(join(tmpdir(), "arc-no-chromium-")), "chromium");
    const missing = node(
      "scripts/required-parts.mjs",
      [],
      envWith({ ARC_REQUIRE: "chromium", ARC_CHROMIUM: absent }),
    );
    assert.equal(missing.status, 1, missing.out);
    assert.match(missing.out, new RegExp(`chromium: ${absent} is absent or not executable`));
    const present = node(
      "scripts/required-parts.mjs",
      [],
      envWith({ ARC_REQUIRE: "chromium", ARC_CHROMIUM: process.execPath }),
    );
    assert.equal(present.status, 0, present.out);
    assert.match(present.out, /required parts present: chromium/);
  });

  it("fails the check of required parts without a PostgreSQL server, naming it and why", () => {
    const unset = node(
      "scripts/required-parts.mjs",
      [],
      envWith({ ARC_REQUIRE: "postgres", ARC_TEST_DATABASE_URL: undefined }),
    );
    assert.equal(unset.status, 1, unset.out);
    assert.match(unset.out, /postgres: ARC_TEST_DATABASE_URL is not set/);
    const closed = node(
      "scripts/required-parts.mjs",
      [],
      envWith({
        ARC_REQUIRE: "postgres",
        ARC_TEST_DATABASE_URL: "postgres://postgres:secret@127.0.0.1:1/test",
      }),
    );
    assert.equal(closed.status, 1, closed.out);
    assert.match(
      closed.out,
      /postgres: the server at ARC_TEST_DATABASE_URL \(postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:1\/test\) does not answer/,
    );
  });

  it("finds the PostgreSQL test server answering where one is named", {
    skip: skipWithout("postgres", !process.env.ARC_TEST_DATABASE_URL && "ARC_TEST_DATABASE_URL is not set"),
  }, async () => {
    assert.equal(await postgresLacks(process.env), undefined);
  });

  it("runs in CI with every part required, Chromium checked right after its install and before anything else", () => {
    const ci = readFileSync(join(ROOT, ".ci", "run"), "utf8");
    const required = /^export ARC_REQUIRE=(\S+)$/m.exec(ci)?.[1].split(",") ?? [];
    for (const part of ["python", "ray", "postgres", "chromium"]) assert.ok(required.includes(part), part);
    const check = ci.indexOf("ARC_REQUIRE=chromium node scripts/required-parts.mjs");
    assert.ok(check > ci.indexOf("apt-get install"), "Chromium is checked after its install");
    assert.ok(check < ci.indexOf("npm ci"), "and before the install of the packages");
    assert.match(ci, /^set -euo pipefail$/m, "a failed check stops the script");
  });
});

describe("the test runner's order", () => {
  it("starts the files longest first by a full run's times, then the files it does not name, by path", () => {
    assert.deepEqual(
      startOrder(["a.test.ts", "d.test.ts", "b.test.ts", "c.test.ts", "e.test.ts"], {
        "a.test.ts": 3,
        "b.test.ts": 40,
        "c.test.ts": 3,
        "z.test.ts": 99,
      }),
      ["b.test.ts", "a.test.ts", "c.test.ts", "d.test.ts", "e.test.ts"],
    );
  });

  it("runs the quick files in batches of about BATCH_S seconds, started after every file run alone", () => {
    const quick = QUICK_FILE_S / 2;
    const times: Record<string, number> = {
      "long.test.ts": QUICK_FILE_S * 4,
      "edge.test.ts": QUICK_FILE_S,
      "q1.test.ts": quick,
      "q2.test.ts": quick,
      "q3.test.ts": quick,
      "q4.test.ts": quick,
      "q5.test.ts": quick,
      "z0.test.ts": 0,
    };
    const perBatch = Math.ceil(BATCH_S / quick);
    const quickFiles = ["q1.test.ts", "q2.test.ts", "q3.test.ts", "q4.test.ts", "q5.test.ts", "z0.test.ts"];
    const batches = [];
    for (let i = 0; i < quickFiles.length; i += perBatch) batches.push(quickFiles.slice(i, i + perBatch));
    assert.deepEqual(startUnits([...Object.keys(times), "new.test.ts"].reverse(), times), [
      ["long.test.ts"],
      ["edge.test.ts"],
      ["new.test.ts"],
      ...batches,
    ]);
    assert.ok(batches.length > 1, "the quick files fill more than one batch");
  });
});

describe("the test runner's skips", () => {
  it("names the slowest files by the time of their top-level tests", () => {
    const at = (file: string) => `${process.cwd()}/${file}`;
    assert.equal(
      slowestFilesLine(
        [
          { outcome: "time", file: at("a.test.ts"), ms: 1_000 },
          { outcome: "time", file: at("b.test.ts"), ms: 30_000 },
          { outcome: "pass", file: at("a.test.ts") },
          { outcome: "time", file: at("a.test.ts"), ms: 40_000 },
          { outcome: "time", file: at("c.test.ts"), ms: 2_000 },
        ],
        2,
      ),
      "slowest files: a.test.ts 41 s, b.test.ts 30 s",
    );
  });

  it("counts the skipped tests by reason in one line", () => {
    assert.equal(skipSummary([]), "skipped 0");
    assert.equal(
      totalsLine([{ outcome: "pass" }, { outcome: "pass" }, { outcome: "fail" }, { outcome: "skip" }]),
      "tests: 2 passed, 1 failed, 1 skipped",
    );
    assert.equal(
      skipSummary([
        { reason: "python: no venv" },
        { reason: "chromium: absent" },
        { reason: "python: no venv" },
      ]),
      "skipped 3 (a skipped suite counts once): 2 × python: no venv; 1 × chromium: absent",
    );
  });

  it("ends with that line and the totals after the spec output, and fails before running anything where a required part is missing", () => {
    const env = envWith({ CC: "/nonexistent/cc" });
    const skipped = node("scripts/test.mjs", ["backend/native-kernels.test"], env);
    assert.equal(skipped.status, 0, skipped.out);
    assert.match(skipped.out, /﹣ native kernels .*# cc: cannot run \/nonexistent\/cc/);
    const [skipLine, totals] = skipped.out.trim().split("\n").slice(-2);
    assert.match(
      skipLine,
      /^skipped 1 \(a skipped suite counts once\): 1 × cc: cannot run \/nonexistent\/cc/,
    );
    assert.match(totals, /^tests: 0 passed, 0 failed, 1 skipped$/);
    const required = node("scripts/test.mjs", ["backend/native-kernels.test"], { ...env, ARC_REQUIRE: "cc" });
    assert.equal(required.status, 1, required.out);
    assert.match(
      required.out,
      /required parts missing \(ARC_REQUIRE=cc\):\n {2}cc: cannot run \/nonexistent\/cc/,
    );
    assert.doesNotMatch(required.out, /native kernels/);
  });
});
