import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { BENCH_COMMANDS, benchmarksReport, REPORT_PATH } from "../bench/report.ts";
import {
  GPU_BENCH_SCRIPTS,
  invokingCommand,
  RESULTS_DIR,
  thisMachine,
  writeBenchResults,
} from "../bench/results-file.ts";
import { documentationFiles } from "./documentation-files.ts";

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

/** Each README and guide but docs/benchmarks.md itself, with its text. */
function docsBesideBenchmarks(): [file: string, text: string][] {
  return documentationFiles()
    .filter((file) => file !== join("docs", "benchmarks.md"))
    .map((file) => [file, readFileSync(file, "utf8")]);
}

/**
 * Whether a command cell names a command that exists: an npm script of the root package, a bench file, or the
 * PyTorch worker's own bench (`python -m arc_tools.bench`, run on a GPU machine; a record's command names the module
 * its version of the script ran as, one of `GPU_BENCH_SCRIPTS`).
 */
function commandExists(command: string): boolean {
  const npm = /^npm run ([\w:-]+)(?: -- .*)?$/.exec(command);
  if (npm) return npm[1] in scripts;
  const node = /^node --import tsx (\S+\.ts)(?: .*)?$/.exec(command);
  if (node) return existsSync(node[1]);
  const python = /(?:^|[\s/])python[\d.]* -m (arc_\w+\.bench)\b/.exec(command);
  return (
    GPU_BENCH_SCRIPTS.some((script) => script.module === python?.[1]) && existsSync(GPU_BENCH_SCRIPTS[0].path)
  );
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
      // a figures file of bench/results/ names the machine's cores and CPU; one of bench/gpu/, the GPU torch named
      assert.match(
        machine,
        /^\d+ cores, \S.*, [\d.]+ GiB, |^\S.*, \d+ CPUs, \S/,
        `${where} names its machine's cores and CPU model, or its GPU`,
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

  it("has a figures file for every bench a README or guide cites beside a figure", () => {
    const figure = /\b\d+\.\d+\b|\b\d{1,3}(?:,\d{3})+\b|\b\d+%/;
    const cited = docsBesideBenchmarks().flatMap(([file, text]) =>
      text
        .split(/\n(?=- |\s*\n)/)
        .filter((chunk) => figure.test(chunk))
        .flatMap((chunk) =>
          [...chunk.matchAll(/`(npm run bench(?::[\w-]+)?)(?: -- [^`]*)?`/g)].map((m) => `${file}: ${m[1]}`),
        ),
    );
    assert.ok(
      cited.some((c) => c.startsWith("README.md: ")),
      "the README cites benches beside its figures",
    );
    const unmeasured = [...new Set(cited)].flatMap((citation) => {
      const command = citation.slice(citation.indexOf(": ") + 2);
      return Object.entries(BENCH_COMMANDS)
        .filter(([, c]) => c === command)
        .filter(([name]) => !existsSync(join(RESULTS_DIR, `${name}.json`)))
        .map(([name]) => `${citation}: no bench/results/${name}.json`);
    });
    assert.deepEqual(unmeasured, []);
  });

  it("dates a bench's figures in the READMEs and guides with the date of its figures file", () => {
    const cited: string[] = [];
    const wrong: string[] = [];
    for (const [file, text] of docsBesideBenchmarks()) {
      for (const paragraph of text.split(/\n\s*\n/)) {
        // each date of a paragraph belongs to the bench cited last before it in the paragraph
        let command: string | undefined;
        for (const [, cites, date] of paragraph.matchAll(
          /`(npm run bench(?::[\w-]+)?)(?: -- [^`]*)?`|\b(\d{4}-\d{2}-\d{2})\b/g,
        )) {
          if (cites) command = cites;
          if (!date || !command) continue;
          cited.push(`${file}: ${command} ${date}`);
          const dates = Object.entries(BENCH_COMMANDS)
            .filter(([, c]) => c === command)
            .map(([name]) => join(RESULTS_DIR, `${name}.json`))
            .filter((path) => existsSync(path))
            .map((path) => String(JSON.parse(readFileSync(path, "utf8")).date).slice(0, 10));
          if (!dates.includes(date))
            wrong.push(
              `${file}: \`${command}\` dated ${date}, its figures file ${dates.join(" / ") || "missing"}`,
            );
        }
      }
    }
    assert.ok(cited.length >= 4, `the guides date the bench runs they quote, found ${cited.length}`);
    assert.deepEqual(
      wrong,
      [],
      "quote the bench's latest figures with their date, or link to docs/benchmarks.md",
    );
  });

  it("shows a GPU figures file with the GPU's machine and date, and its command as the bench read it", () => {
    const results = mkdtempSync(join(tmpdir(), "arc-bench-report-"));
    const gpu = mkdtempSync(join(tmpdir(), "arc-bench-gpu-"));
    try {
      const record = {
        bench: "torch-gpu",
        command: "/usr/bin/python3 -m arc_tools.bench --out /data/torch-gpu.json",
        cwd: "/repo/packages/engine/python",
        script_sha256: "0".repeat(64),
        worker_sha256: "1".repeat(64),
        date: "2027-01-02T03:04:05+00:00",
        machine: { device: "NVIDIA H100 80GB HBM3", cpus: 16, platform: "Linux-6.8.0-x86_64-with-glibc2.35" },
        device: "NVIDIA H100 80GB HBM3",
        train_tokens_per_s: 61234,
        train_step_seconds: [0.27, 0.26, 0.27, 0.28, 0.27],
        generate_repeats: 5,
        generate_tokens_per_s: 2600,
        hf_generate_tokens_per_s: 2900,
      };
      writeFileSync(join(gpu, "torch-gpu.json"), JSON.stringify(record));
      const report = benchmarksReport(results, gpu);
      assertRowsComplete(report);
      const rows = tableRows(report).filter((r) => r[0].startsWith("PyTorch engine on a GPU"));
      assert.deepEqual(
        rows.map((r) => r.slice(1)),
        [
          [
            "61,234 tokens/s on NVIDIA H100 80GB HBM3 (median of 5 steps)",
            "—",
            `\`${record.command}\``,
            "NVIDIA H100 80GB HBM3, 16 CPUs, Linux-6.8.0-x86_64-with-glibc2.35",
            "2027-01-02",
          ],
          [
            "2,600 tokens/s (2,900) on NVIDIA H100 80GB HBM3 (median of 5 runs, interleaved)",
            "—",
            `\`${record.command}\``,
            "NVIDIA H100 80GB HBM3, 16 CPUs, Linux-6.8.0-x86_64-with-glibc2.35",
            "2027-01-02",
          ],
        ],
      );
      // a record of the script at each path it has names that path's module; another module is no GPU bench
      for (const { module } of GPU_BENCH_SCRIPTS) {
        writeFileSync(
          join(gpu, "torch-gpu.json"),
          JSON.stringify({ ...record, command: `python3 -m ${module}` }),
        );
        assertRowsComplete(benchmarksReport(results, gpu));
      }
      writeFileSync(
        join(gpu, "torch-gpu.json"),
        JSON.stringify({ ...record, command: "python3 -m arc_torch.worker" }),
      );
      assert.throws(
        () => assertRowsComplete(benchmarksReport(results, gpu)),
        /is not a script in package\.json/,
      );
      const absent = tableRows(benchmarksReport(results, join(gpu, "none")));
      assert.deepEqual(
        absent.filter((r) => r[0].startsWith("PyTorch engine on a GPU")).map((r) => [r[1], r[4], r[5]]),
        [
          [NOT_MEASURED, NOT_MEASURED, NOT_MEASURED],
          [NOT_MEASURED, NOT_MEASURED, NOT_MEASURED],
        ],
      );
    } finally {
      rmSync(results, { recursive: true, force: true });
      rmSync(gpu, { recursive: true, force: true });
    }
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
        rows.some((r) => r[0].startsWith("brand-new:") && r[0].includes("label")),
        false,
        "only numbers of an unknown bench are shown",
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("shows the gateway's ratios to the bare proxy of the same run, as bench:gateway writes them", () => {
    const dir = mkdtempSync(join(tmpdir(), "arc-bench-report-"));
    try {
      const ratios = {
        overhead_p50_vs_bare: 2.1,
        overhead_p99_vs_bare: 3.05,
        overhead_p50_c16_vs_bare: 1.4,
        overhead_p99_c16_vs_bare: 1.25,
        throughput_vs_bare: 0.912,
      };
      writeBenchResults(
        "gateway",
        { ...ratios, rounds: 5, postgres: { ...ratios, throughput_vs_bare: 0.9 } },
        { command: "npm run bench:gateway", dir },
      );
      const row = tableRows(benchmarksReport(dir)).find((r) => r[0].startsWith("Gateway over the bare"));
      assert.equal(
        row?.[1],
        "c = 1 ×2.10 / ×3.05, c = 16 ×1.40 / ×1.25, throughput 0.912 / c = 1 ×2.10 / ×3.05, c = 16 ×1.40 / ×1.25, throughput 0.900 (median of 5 rounds)",
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
