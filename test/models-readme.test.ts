import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";

/**
 * models/README.md quotes what the scripts that made the shipped models measured and wrote into each model's record
 * (`base-model.json`, `teacher.json`, `judge.json`, beside the command and the commit they ran); every decimal it
 * quotes as such is one of the record's numbers, rounded as shown.
 */
const PAGE = readFileSync("models/README.md", "utf8");
const RECORDS = ["base-model.json", "teacher.json", "judge.json"];

/** Every number in a parsed JSON value. */
function numbersIn(value: unknown): number[] {
  if (typeof value === "number") return [value];
  if (Array.isArray(value)) return value.flatMap(numbersIn);
  if (value !== null && typeof value === "object") return Object.values(value).flatMap(numbersIn);
  return [];
}

/** The numbers of a model folder's records (the files of `RECORDS` it has). */
function recordNumbers(model: string, files = RECORDS): number[] {
  return files
    .map((file) => join("models", model, file))
    .filter((path) => existsSync(path))
    .flatMap((path) => numbersIn(JSON.parse(readFileSync(path, "utf8"))));
}

/** The decimals of `text` (`0.219`, `0.92`) that no record number rounds to. */
function unrecorded(text: string, numbers: number[]): string[] {
  return [...text.matchAll(/(?<![\w.])(\d+\.\d+)(?![\w.]*[eM])/g)]
    .map((m) => m[1])
    .filter((shown) => {
      const digits = shown.split(".")[1].length;
      return !numbers.some((x) => x.toFixed(digits) === shown);
    });
}

describe("models/README.md quotes the models' own records", () => {
  it("has in each model's table row only figures of that model's record", () => {
    const rows = PAGE.split("\n").filter((line) => /^\| \[`[\w-]+\/`\]/.test(line));
    assert.ok(rows.length >= 7, `the table lists the shipped models, found ${rows.length}`);
    const wrong = rows.flatMap((row) => {
      const model = (/^\| \[`([\w-]+)\/`\]/.exec(row) as RegExpExecArray)[1];
      const figures = row.split("|").at(-2) ?? "";
      return unrecorded(figures, recordNumbers(model)).map((x) => `${model}: ${x}`);
    });
    assert.deepEqual(wrong, [], "a figure in the table that the model's record does not hold");
  });

  it("has in each 'What <record> records' paragraph, and the table after it, only that record's figures", () => {
    const sections = PAGE.split(/\n(?=## )/).filter((s) => /^## `[\w-]+`/.test(s));
    let checked = 0;
    const wrong = sections.flatMap((section) => {
      const model = (/^## `([\w-]+)`/.exec(section) as RegExpExecArray)[1];
      const blocks = section.split(/\n\s*\n/);
      return blocks.flatMap((block, i) => {
        const record = /^\*\*What `([\w-]+\.json)` records:\*\*/.exec(block);
        if (!record) return [];
        checked++;
        const table = blocks[i + 1]?.startsWith("|") ? blocks[i + 1] : "";
        return unrecorded(`${block}\n${table}`, recordNumbers(model, [record[1]])).map(
          (x) => `${model} (${record[1]}): ${x}`,
        );
      });
    });
    assert.ok(checked >= 4, `the page quotes the base models' records, found ${checked}`);
    assert.deepEqual(wrong, [], "a figure said to be recorded that the record does not hold");
  });

  it("finds a figure the record does not hold", () => {
    assert.deepEqual(unrecorded("fails 0.219 of 512; 0.92 accuracy", [0.21875, 0.921875]), []);
    assert.deepEqual(unrecorded("fails 0.221 of 512; 0.9 accuracy", [0.21875, 0.921875]), ["0.221"]);
    assert.deepEqual(unrecorded("0.84M parameters, a rate of 8.8e-4", []), []);
  });
});
