import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { tableFromIPC } from "apache-arrow";
import { readParquet } from "parquet-wasm";
import { projectPython, pythonLacks, skipWithout } from "../../../../scripts/required-parts.mjs";
import { simulatedFailureItems } from "../__fixtures__/failure-items.ts";
import { InvalidInputError } from "../errors/arc-error.ts";
import { generateArithTasks, generateOrderdeskTasks, generateToolcallTasks } from "../families/index.ts";
import { getTaskFamily } from "../families/task-families.ts";
import { buildEvalSet, buildPromptPool, type EvalRow, IMAGE_REF_PREFIX } from "../synth/index.ts";
import { taskToRow } from "../tasks/index.ts";
import { toOpenAiTools } from "../tasks/tool-spec.ts";
import { toolsSystemText, toVerlParquet } from "./verl-parquet.ts";

/** Reads parquet bytes with an independent reader: parquet-wasm (Rust arrow-rs) → Arrow IPC → apache-arrow. */
function readBack(bytes: Uint8Array) {
  const table = tableFromIPC(readParquet(bytes).intoIPCStream());
  return {
    fields: table.schema.fields.map((f) => `${f.name}: ${f.type}`),
    rows: table.toArray().map((r) => JSON.parse(JSON.stringify(r.toJSON()))),
  };
}

const general = [
  ...generateToolcallTasks({ split: "eval", seed: 2, count: 30 }),
  ...generateArithTasks({ split: "eval", seed: 2, count: 10 }),
  ...generateOrderdeskTasks({ split: "eval", seed: 2, count: 10 }),
].map(taskToRow);
const evalSet = buildEvalSet({
  tenantId: "acme",
  seed: 1,
  failures: await simulatedFailureItems(33, 600),
  general,
  trainingQuestions: [],
  perPattern: 3,
  generalSize: 20,
});

/** The project's Python (the venv `npm test` makes, or ARC_PYTHON), for pyarrow, VERL's own parquet reader. */
const python = projectPython();
const noPyarrow = skipWithout("python", pythonLacks(python, ["pyarrow"]));

/** Reads parquet bytes with pyarrow, as VERL does: the schema as pyarrow prints it, and the rows as JSON. */
function readWithPyarrow(bytes: Uint8Array) {
  const path = join(mkdtempSync(join(tmpdir(), "arc-verl-")), "rows.parquet");
  writeFileSync(path, bytes);
  const script = [
    "import base64, json, sys",
    "import pyarrow.parquet as pq",
    "table = pq.read_table(sys.argv[1])",
    "bytes_as_text = lambda x: base64.b64encode(x).decode() if isinstance(x, bytes) else x",
    "def plain(x):",
    "    if isinstance(x, dict): return {k: plain(v) for k, v in x.items()}",
    "    if isinstance(x, list): return [plain(v) for v in x]",
    "    return bytes_as_text(x)",
    "print(json.dumps({'fields': [f'{f.name}: {f.type}' for f in table.schema], 'rows': plain(table.to_pylist())}))",
  ].join("\n");
  const run = spawnSync(python, ["-c", script, path], { encoding: "utf8" });
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout) as { fields: string[]; rows: Record<string, unknown>[] };
}

/** A 1x1 PNG's bytes, base64, and another image's. */
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
const OTHER = Buffer.from("another image's bytes").toString("base64");
const storedRef = `${IMAGE_REF_PREFIX}${"ab".repeat(32)}`;

/** Eval rows whose recorded prompts hold images: one inline and one stored, one with none. */
function rowsWithImages(): EvalRow[] {
  const lineage = { slice: "p1", patternId: "p1", sourceTraceIds: ["t1"] };
  const image = (url: string) => ({ type: "image_url", image_url: { url } });
  return [
    {
      id: "r0",
      question: "what is on the receipt?",
      meta: lineage,
      context: {
        messages: [
          { role: "system", content: "You read receipts." },
          {
            role: "user",
            content: [
              image(`data:image/png;base64,${PNG}`),
              { type: "text", text: " and " },
              image(storedRef),
            ],
          },
        ],
      },
    },
    { id: "r1", question: "no picture here", meta: lineage },
  ] as EvalRow[];
}
const storedImages = new Map([[storedRef, { ref: storedRef, mediaType: "image/jpeg", data: OTHER }]]);

describe("VERL parquet export", () => {
  it("writes VERL's columns with the types VERL reads: prompt a list of {role, content}, reward_model a struct", () => {
    const { fields } = readBack(toVerlParquet(evalSet.rows, { split: "test" }));
    assert.deepEqual(fields, [
      "data_source: Utf8",
      "prompt: List<Struct<{role:Utf8, content:Utf8}>>",
      "ability: Utf8",
      "reward_model: Struct<{style:Utf8, ground_truth:Utf8}>",
      "extra_info: Struct<{split:Utf8, index:Int32, id:Utf8, question:Utf8, env:Utf8, context:Utf8, pattern_id:Utf8, source_trace_ids:List<Utf8>}>",
    ]);
  });

  it("reads back every row as written, with the solution as ground truth and lineage in extra_info", () => {
    const { rows } = readBack(toVerlParquet(evalSet.rows, { split: "test" }));
    assert.equal(rows.length, evalSet.rows.length);
    for (const [i, row] of evalSet.rows.entries()) {
      const got = rows[i];
      assert.equal(got.data_source, `arc/${row.env}`);
      const prompt = row.context?.messages ?? [{ role: "user", content: row.question }];
      const tools = row.context ? row.context.tools : toOpenAiTools(getTaskFamily(row.env!).tools ?? []);
      assert.deepEqual(got.prompt, [
        ...(tools?.length ? [{ role: "system", content: toolsSystemText(tools) }] : []),
        ...prompt.map((m) => ({ role: m.role, content: m.content ?? "" })),
      ]);
      assert.equal(got.ability, row.env === "arith" ? "math" : "tool_use");
      assert.equal(got.reward_model.style, "rule");
      assert.deepEqual(JSON.parse(got.reward_model.ground_truth), row.solution);
      assert.deepEqual(got.extra_info, {
        split: "test",
        index: i,
        id: row.id,
        question: row.question,
        env: row.env,
        context: row.context ? JSON.stringify(row.context) : null,
        pattern_id: row.meta.patternId ?? null,
        source_trace_ids: row.meta.sourceTraceIds,
      });
    }
  });

  it("writes the agent's tools into its system message and an assistant's tool calls as <tool_call> text", () => {
    const tools = toOpenAiTools(getTaskFamily("toolcall").tools ?? []);
    const call = {
      id: "c1",
      type: "function",
      function: { name: "get_weather", arguments: '{"city":"Oslo"}' },
    };
    const row: EvalRow = {
      id: "r1",
      question: "And in Lima?",
      env: "toolcall",
      solution: { tool: "get_weather", args: { city: "Lima", unit: "c" } },
      context: {
        messages: [
          { role: "system", content: "You book things." },
          { role: "user", content: "Weather in Oslo?" },
          { role: "assistant", content: null, tool_calls: [call] },
          { role: "tool", content: "4 C", tool_call_id: "c1" },
          { role: "user", content: "And in Lima?" },
        ],
        tools,
      },
      meta: { sourceTraceIds: ["t1"], slice: "general" },
    };
    const [got] = readBack(toVerlParquet([row], { split: "test" })).rows;
    assert.deepEqual(got.prompt, [
      { role: "system", content: `You book things.\n\n${toolsSystemText(tools)}` },
      { role: "user", content: "Weather in Oslo?" },
      {
        role: "assistant",
        content: '<tool_call>\n{"name": "get_weather", "arguments": {"city":"Oslo"}}\n</tool_call>',
      },
      { role: "tool", content: "4 C" },
      { role: "user", content: "And in Lima?" },
    ]);
    assert.deepEqual(JSON.parse(got.extra_info.context), row.context);
  });

  it("exports a PromptPool with the caller's data_source and ability", () => {
    const pool = buildPromptPool({
      tenantId: "acme",
      seed: 1,
      failures: [],
      replay: general,
      size: 12,
      evalSets: [],
    });
    const { rows } = readBack(
      toVerlParquet(pool.rows, { split: "train", dataSource: "acme/agent", ability: "agent" }),
    );
    assert.equal(rows.length, 12);
    assert.ok(
      rows.every(
        (r) => r.data_source === "acme/agent" && r.ability === "agent" && r.extra_info.split === "train",
      ),
    );
  });

  it("is byte-for-byte the same for the same rows", () => {
    assert.deepEqual(
      toVerlParquet(evalSet.rows, { split: "test" }),
      toVerlParquet(evalSet.rows, { split: "test" }),
    );
  });

  it("adds an images column of {bytes, path} in the order of each prompt's <image>s", () => {
    const bytes = toVerlParquet(rowsWithImages(), { split: "test", images: storedImages });
    const { fields, rows } = readBack(bytes);
    assert.equal(fields.at(-1), "images: List<Struct<{bytes:Binary, path:Utf8}>>");
    assert.equal(rows[0].prompt[1].content, "<image> and <image>");
    const table = tableFromIPC(readParquet(bytes).intoIPCStream());
    const images = table.getChild("images");
    const first = images?.get(0)?.toArray() as { bytes: Uint8Array; path: string | null }[];
    assert.deepEqual(
      first.map((image) => [Buffer.from(image.bytes).toString("base64"), image.path]),
      [
        [PNG, null],
        [OTHER, null],
      ],
    );
    assert.equal(images?.get(1)?.length, 0);
  });

  it("refuses a prompt image it cannot carry, naming the row and the image", () => {
    assert.throws(
      () => toVerlParquet(rowsWithImages(), { split: "test" }),
      (error: unknown) =>
        error instanceof InvalidInputError &&
        error.message.includes("rows[0] (r0)") &&
        error.message.includes(storedRef) &&
        error.message.includes("not among the images given"),
    );
  });

  it("is read by pyarrow as by parquet-wasm, text and images alike", { skip: noPyarrow }, () => {
    for (const [rows, options] of [
      [evalSet.rows, { split: "test" }],
      [rowsWithImages(), { split: "test", images: storedImages }],
    ] as const) {
      const bytes = toVerlParquet(rows, options);
      const viaPyarrow = readWithPyarrow(bytes);
      const viaWasm = readBack(bytes);
      assert.deepEqual(viaPyarrow.fields.slice(0, 2), [
        "data_source: string",
        "prompt: list<element: struct<role: string not null, content: string not null> not null>",
      ]);
      assert.equal(viaPyarrow.rows.length, rows.length);
      viaPyarrow.rows.forEach((row, i) => {
        const { images, ...text } = row as { images?: { bytes: string; path: null }[] };
        const { images: wasmImages, ...wasmText } = viaWasm.rows[i];
        assert.deepEqual(text, wasmText, `row ${i}`);
        if (images) {
          assert.deepEqual(
            images,
            (wasmImages as { bytes: Record<string, number> }[]).map((image) => ({
              bytes: Buffer.from(Object.values(image.bytes)).toString("base64"),
              path: null,
            })),
          );
        }
      });
    }
  });
});
