import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { benchmarksReport, REPORT_PATH } from "../bench/report.ts";
import { invokingCommand, RESULTS_DIR, thisMachine, writeBenchResults } from "../bench/results-file.ts";

const NOT_MEASURED = "not measured yet";

/** The table rows of a report, split into cells (a `\|` inside a cell is not a separator). */
function tableRows(report: string): string[][] {
  const lines = report.split("\n");
  const header = lines.indexOf("| figure | value | target | command | machine | date |");
  assert.ok(header >= 0, "the report has the one table");
  const rows: string[][] = [];
  for (const line of lines.slice(header + 2)) {
    if (!line.startsWith("|")) break;
    rows.push(
      line
        .split(/(?<!\\)\|/)
        .slice(1, -1)
        .map((c) => c.trim()),
    );
  }
  return rows;
}

const scripts = JSON.parse(readFileSync("package.json", "utf8")).scripts as Record<string, string>;

/** Whether a command cell names a command that exists: an npm script of the root package, or a bench file. */
function commandExists(command: string): boolean {
  const npm = /^npm run ([\w:-]+)(?: -- .*)?$/.exec(command);
  if (npm) return npm[1] in scripts;
  const node = /^node --import tsx (\S+\.ts)(?: .*)?$/.exec(command);
  return node !== null && existsSync(node[1]);
}

/** Checks every row names a command that exists, and a machine (cores, CPU model) and date, or says it is unmeasured. */
function assertRowsComplete(report: string): void {
  const rows = tableRows(report);
  assert.ok(rows.length > 0, "the table has rows");
  for (const [figure, value, target, command, machine, date] of rows) {
    const where = `row "${figure}"`;
    assert.equal(typeof date, "string", `${where} has six cells`);
    assert.ok(value.length > 0 && target.length > 0, `${where} has a value and a target cell`);
    const code = /^`([^`]+)`$/.exec(command);
    assert.ok(code, `${where} names its command in backticks, got ${command}`);
    assert.ok(
      commandExists(code[1]),
      `${where}: \`${code[1]}\` is not a script in package.json nor a bench file`,
    );
    if (value === NOT_MEASURED) {
      assert.equal(machine, NOT_MEASURED, `${where}: an unmeasured figure has no machine`);
      assert.equal(date, NOT_MEASURED, `${where}: an unmeasured figure has no date`);
    } else {
      assert.match(
        machine,
        /^\d+ cores, \S.*, [\d.]+ GiB, /,
        `${where} names its machine's cores and CPU model`,
      );
      assert.match(date, /^\d{4}-\d{2}-\d{2}$/, `${where} names the date it was measured on`);
    }
  }
}

describe("docs/benchmarks.md", () => {
  it("is what `npm run bench:report` makes of bench/results/ now (run it after a bench)", () => {
    assert.equal(readFileSync(REPORT_PATH, "utf8"), benchmarksReport(RESULTS_DIR));
  });

  it("names the command of every row, and the machine and date of every measured one", () => {
    assertRowsComplete(readFileSync(REPORT_PATH, "utf8"));
  });

  it("reports each figures file with its machine, date and command, and the missing ones as not measured", () => {
    const dir = mkdtempSync(join(tmpdir(), "arc-bench-report-"));
    try {
      writeBenchResults(
        "backbone",
        {
          sdk_overhead_p50_ms: 0.021,
          sdk_overhead_noise_p99_ms: 0.3,
          sdk_capture_p99_ms: 0.0412,
          ingest_pglite_steps_per_s: 8123,
          ingest_rounds: 3,
        },
        { command: "npm run bench", dir },
      );
      writeBenchResults(
        "brand-new",
        { widgets_per_s: 42, label: "text is left out" },
        { command: "npm run bench", dir },
      );
      writeFileSync(join(dir, "teaching.json"), JSON.stringify({ student_accuracy: 0.7 }));
      const report = benchmarksReport(dir);
      assertRowsComplete(report);
      const rows = tableRows(report);
      const row = (figure: string) => rows.find((r) => r[0] === figure) as string[];
      const machine = thisMachine();

      const p99 = row("SDK time in its own code per wrapped call, p99 (in process, the compiled SDK)");
      assert.equal(p99[1], "0.0412 ms");
      assert.equal(p99[2], "< 0.05 ms");
      assert.equal(p99[3], "`npm run bench`");
      assert.ok(p99[4].startsWith(`${machine.cpus} cores, ${machine.model}, `), p99[4]);
      assert.equal(p99[5], new Date().toISOString().slice(0, 10));
      // a paired p99 the bench left out (it was below the noise) is said so, not shown as a number
      assert.equal(
        row(
          "SDK overhead per wrapped call end to end, p50 / p99 (in process, paired per call; A/A noise p99 beside)",
        )[1],
        "+0.021 ms / below the noise (noise p99 0.300 ms)",
      );
      assert.equal(
        row("Ingest into PGlite, detection in the same process (batches of 100 steps)")[1].split(" (")[0],
        "8,123 steps/s",
      );
      assert.match(
        row("Ingest into a PostgreSQL server, detection in the same process")[1],
        /ARC_TEST_DATABASE_URL/,
      );

      assert.equal(row("Detection + clustering throughput (simulated production traffic)")[1], NOT_MEASURED);
      assert.equal(
        row("Detection + clustering throughput (simulated production traffic)")[3],
        "`npm run bench`",
      );
      assert.equal(row("Adaptive teaching (`toolcall`): the student alone, accuracy")[1], NOT_MEASURED);
      assert.match(report, /`bench\/results\/teaching\.json` names no command, date or machine/);

      assert.equal(row("brand-new: `widgets_per_s`")[1], "42");
      assert.equal(
        rows.some((r) => r[0].includes("label")),
        false,
        "only numbers of an unknown bench are shown",
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("keeps one measurement per bench: a new one replaces the old", () => {
    const dir = mkdtempSync(join(tmpdir(), "arc-bench-report-"));
    try {
      writeBenchResults(
        "failures",
        { detect_cluster_traces_per_s: 1000, runs: 5 },
        { command: "npm run bench", dir },
      );
      const path = writeBenchResults(
        "failures",
        { cluster_purity: 1, injected_modes: 18 },
        { command: "npm run bench", dir },
      );
      const written = JSON.parse(readFileSync(path, "utf8"));
      assert.deepEqual(Object.keys(written), [
        "bench",
        "command",
        "date",
        "machine",
        "cluster_purity",
        "injected_modes",
      ]);
      const rows = tableRows(benchmarksReport(dir));
      assert.equal(
        rows.find((r) => r[0].startsWith("Detection + clustering"))?.[1],
        "not in this measurement",
      );
      assert.equal(rows.find((r) => r[0].startsWith("Clustering purity"))?.[1], "1.000 (18 modes)");
      assert.throws(() => writeBenchResults("x", { machine: 1 }, { dir }), /may not be called "machine"/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("records the command a user typed", () => {
    assert.equal(
      invokingCommand(["node", "/repo/bench/rl.bench.ts", "--only", "sft"], {
        npm_lifecycle_event: "bench:rl",
      }),
      "npm run bench:rl -- --only sft",
    );
    assert.equal(
      invokingCommand(["node", "/repo/bench/backbone.bench.ts"], { npm_lifecycle_event: "bench" }),
      "npm run bench",
    );
    assert.equal(
      invokingCommand(["node", join(process.cwd(), "bench", "sdk-overhead.ts"), "--label", "a b"], {}),
      "node --import tsx bench/sdk-overhead.ts --label 'a b'",
    );
  });
});
