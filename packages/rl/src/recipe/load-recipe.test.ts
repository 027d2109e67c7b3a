import assert from "node:assert/strict";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { InvalidInputError } from "@arc/core";
import { z } from "zod";
import {
  applyOverrides,
  checkTunableOverrides,
  loadRecipe,
  parseOverride,
  parseRecipe,
  readRecipeYaml,
} from "./load-recipe.ts";
import {
  overridesForAlgorithm,
  RecipeBlocks,
  TEACHING_BY_MODE,
  TRAINER_BY_ALGORITHM,
  TUNABLE_RECIPE_KEYS,
} from "./recipe-schema.ts";

async function recipeFile(text: string): Promise<string> {
  const path = join(await mkdtemp(join(tmpdir(), "arc-recipe-")), "r.yaml");
  await writeFile(path, text);
  return path;
}

/** The recipe blocks a tunable key may name. */
type RecipeBlock = "model" | "data" | "trainer" | "reward" | "sftWarmUp";

/** Every trainer key of any algorithm, with the schema of the first algorithm that takes it. */
const TRAINER_FIELDS: Record<string, z.ZodTypeAny> = Object.assign(
  {},
  ...Object.values(TRAINER_BY_ALGORITHM)
    .reverse()
    .map((schema) => schema.shape),
);

/** The fields of a recipe block, its default or optional wrapper taken off (the trainer's: of every algorithm). */
function blockShape(block: RecipeBlock): Record<string, z.ZodTypeAny> {
  if (block === "trainer") return TRAINER_FIELDS;
  const schema = RecipeBlocks.shape[block];
  return (schema instanceof z.ZodOptional ? schema.unwrap() : schema.removeDefault()).shape;
}

/** A value `schema` accepts, drawn from a few of each kind, so a test can set a key validly. */
function validValue(schema: z.ZodTypeAny): unknown {
  const candidates = [1, 2, 0.5, true, "multi-turn", "sigmoid", "grpo", "arc", "inf"];
  const value = candidates.find((candidate) => schema.safeParse(candidate).success);
  assert.notEqual(value, undefined, "no candidate value fits the key");
  return value;
}

/** A value a teaching key accepts: the student's checkpoint, the default reward, an enum's first option, or validValue's. */
function teachingValue(key: string, schema: z.ZodTypeAny): unknown {
  if (key === "student") return "models/toolcall-base";
  if (key === "reward") return {};
  const inner = schema instanceof z.ZodDefault ? schema.removeDefault() : schema;
  return inner instanceof z.ZodEnum ? inner.options[0] : validValue(schema);
}

/** The trainer block of a parsed recipe, asserted to be of `algorithm`. */
function trainerOf<A extends keyof typeof TRAINER_BY_ALGORITHM>(
  recipe: ReturnType<typeof parseRecipe>,
  algorithm: A,
): z.infer<(typeof TRAINER_BY_ALGORITHM)[A]> {
  assert.equal(recipe.trainer.algorithm, algorithm);
  return recipe.trainer as z.infer<(typeof TRAINER_BY_ALGORITHM)[A]>;
}

describe("recipes", () => {
  it("fills every block with defaults", () => {
    const recipe = parseRecipe({});
    assert.equal(trainerOf(recipe, "dpo").syncInterval, 1);
    assert.equal(recipe.data.env, "toolcall");
    assert.equal(recipe.reward.kind, "partial");
  });

  it("reads YAML and applies key=value overrides over it", async () => {
    const path = await recipeFile("trainer:\n  algorithm: dpo\n  syncInterval: 1\n  beta: 0.2\n");
    const recipe = await loadRecipe(path, [
      "trainer.syncInterval=10",
      "trainer.syncReference=true",
      "data.env=arith",
    ]);
    const trainer = trainerOf(recipe, "dpo");
    assert.equal(trainer.syncInterval, 10);
    assert.equal(trainer.syncReference, true);
    assert.equal(trainer.beta, 0.2);
    assert.equal(recipe.data.env, "arith");
  });

  it("accepts inf as an offline sync interval", async () => {
    const recipe = await loadRecipe(await recipeFile("{}"), ["trainer.syncInterval=inf"]);
    assert.equal(trainerOf(recipe, "dpo").syncInterval, "inf");
  });

  it("names the key and the expected type of a bad value", async () => {
    const path = await recipeFile("trainer:\n  steps: many\n");
    await assert.rejects(loadRecipe(path), (error: unknown) => {
      assert.ok(InvalidInputError.isInstance(error));
      assert.match((error as Error).message, /trainer\.steps: expected number, got string/);
      return true;
    });
  });

  it("rejects an unknown key and a malformed override", async () => {
    assert.throws(
      () => parseRecipe({ trainer: { sync_interval: 3 } }),
      /trainer: unknown key\(s\) sync_interval/,
    );
    assert.throws(() => applyOverrides({}, ["trainer.steps"]), /expected key=value/);
  });

  it("does not change the object it overrides", () => {
    const raw = { trainer: { steps: 5 } };
    applyOverrides(raw, ["trainer.steps=9"]);
    assert.equal(raw.trainer.steps, 5);
  });

  it("rejects the decoupled objective with a sampling temperature other than 1", () => {
    assert.throws(
      () => parseRecipe({ trainer: { algorithm: "grpo", decoupled: true, temperature: 0.7 } }),
      /trainer\.decoupled: needs trainer\.temperature 1/,
    );
  });

  it("takes several updates per rollout batch for GRPO only", () => {
    const recipe = parseRecipe({ trainer: { algorithm: "grpo", ppoEpochs: 2 } });
    assert.equal(trainerOf(recipe, "grpo").ppoEpochs, 2);
    assert.throws(
      () => parseRecipe({ trainer: { algorithm: "dpo", ppoEpochs: 2 } }),
      /trainer\.ppoEpochs: not a key of algorithm dpo \(only grpo take it\)/,
    );
    assert.throws(() => parseRecipe({ trainer: { algorithm: "grpo", ppoEpochs: 0 } }), /trainer\.ppoEpochs/);
  });

  it("refuses, for each algorithm, every trainer key of another algorithm by name", () => {
    const algorithms = Object.keys(TRAINER_BY_ALGORITHM) as (keyof typeof TRAINER_BY_ALGORITHM)[];
    let refused = 0;
    for (const algorithm of algorithms) {
      const own = TRAINER_BY_ALGORITHM[algorithm].shape;
      for (const [key, schema] of Object.entries(TRAINER_FIELDS)) {
        if (key in own) continue;
        const owners = algorithms.filter((a) => key in TRAINER_BY_ALGORITHM[a].shape);
        assert.throws(
          () => parseRecipe({ trainer: { algorithm, [key]: validValue(schema) } }),
          (error: unknown) => {
            assert.ok(InvalidInputError.isInstance(error), String(error));
            assert.equal(
              (error as Error).message,
              `recipe: trainer.${key}: not a key of algorithm ${algorithm} (only ${owners.join(" and ")} take it)`,
            );
            assert.equal((error as InvalidInputError).field, `trainer.${key}`);
            return true;
          },
          `${algorithm} took ${key}`,
        );
        refused++;
      }
    }
    // the keys the issue names: clipEpsilon in a DPO recipe, syncInterval in a GRPO recipe
    assert.throws(
      () => parseRecipe({ trainer: { algorithm: "dpo", clipEpsilon: 0.2 } }),
      /trainer\.clipEpsilon/,
    );
    assert.throws(
      () => parseRecipe({ trainer: { algorithm: "grpo", syncInterval: 4 } }),
      /trainer\.syncInterval/,
    );
    assert.ok(refused >= 20, `${refused} foreign keys refused`);
  });

  it("takes every key of each algorithm's own trainer block", () => {
    for (const [algorithm, schema] of Object.entries(TRAINER_BY_ALGORITHM)) {
      const trainer = Object.fromEntries(
        Object.entries(schema.shape)
          .filter(([key]) => key !== "algorithm" && key !== "backend" && key !== "workflow")
          .map(([key, field]) => [key, validValue(field)]),
      );
      // decoupled GRPO needs temperature 1, which validValue picks
      assert.doesNotThrow(() => parseRecipe({ trainer: { algorithm, ...trainer } }), algorithm);
    }
  });

  it("keeps of a list of overrides those a recipe of one algorithm takes", () => {
    const overrides = [
      "data.evalCount=4",
      "trainer.promptsPerStep=2",
      "trainer.samplesPerPrompt=2",
      "trainer.beta=0.2",
    ];
    const sft = overridesForAlgorithm("sft", overrides);
    assert.deepEqual(sft, ["data.evalCount=4", "trainer.promptsPerStep=2"]);
    const sftRecipe = (list: string[]) =>
      parseRecipe(applyOverrides({ trainer: { algorithm: "sft" } }, list));
    assert.doesNotThrow(() => sftRecipe(sft));
    assert.throws(() => sftRecipe(overrides), /samplesPerPrompt/);
    assert.deepEqual(overridesForAlgorithm("dpo", overrides), overrides);
  });

  it("refuses an SFT warm-up in an SFT recipe", () => {
    assert.throws(
      () => parseRecipe({ trainer: { algorithm: "sft" }, sftWarmUp: { steps: 3 } }),
      /sftWarmUp: an SFT run has no SFT warm-up/,
    );
  });

  it("takes a teacher run's settings and refuses what a teacher run cannot do, naming the key", () => {
    const teaching = { student: "models/toolcall-base" };
    const sft = { algorithm: "sft" };
    const grpo = parseRecipe({ teaching, trainer: { algorithm: "grpo" } });
    assert.equal(grpo.teaching?.studentScore, "verdict");
    assert.equal(grpo.teaching?.strongStudentTeaching, "none");
    const refusals: [Record<string, unknown>, RegExp][] = [
      [
        { teaching, trainer: sft, data: { env: "arith" } },
        /data\.env: teacher runs label and judge teachings of toolcall/,
      ],
      [{ teaching, trainer: { algorithm: "dpo" } }, /trainer\.algorithm: a teacher trains by sft/],
      [
        {
          teaching: { ...teaching, studentScore: "reference-likelihood", reward: { form: "outcome" } },
          trainer: { algorithm: "grpo" },
        },
        /teaching\.reward\.form: studentScore 'reference-likelihood' needs form 'delta'/,
      ],
      [{ teaching: { ...teaching, studentScore: "likelihood" } }, /teaching\.studentScore/],
      [{ teaching: { ...teaching, strongStudentTeaching: "hints" } }, /teaching\.strongStudentTeaching/],
      [
        { teaching: { ...teaching, reward: { degradationPenalty: 2 } } },
        /teaching\.reward\.degradationPenalty/,
      ],
      [
        { teaching, trainer: { algorithm: "grpo", asyncRollouts: true } },
        /trainer\.asyncRollouts: teacher GRPO samples on-policy/,
      ],
      [
        { teaching, trainer: { algorithm: "grpo" }, generator: { url: "http://127.0.0.1:1/v1" } },
        /generator\.url: a teacher run samples with its own engine/,
      ],
      [{ teaching: {} }, /teaching\.student/],
    ];
    for (const [raw, message] of refusals) assert.throws(() => parseRecipe(raw), message);
  });

  it("refuses, for each teaching mode, every teaching key of the other mode by name", () => {
    const modes = Object.keys(TEACHING_BY_MODE) as (keyof typeof TEACHING_BY_MODE)[];
    const student = "models/toolcall-base";
    let refused = 0;
    for (const mode of modes) {
      for (const other of modes) {
        for (const [key, schema] of Object.entries(TEACHING_BY_MODE[other].shape)) {
          if (key in TEACHING_BY_MODE[mode].shape) continue;
          assert.throws(
            () =>
              parseRecipe({
                trainer: { algorithm: mode },
                teaching: { student, [key]: teachingValue(key, schema) },
              }),
            (error: unknown) => {
              assert.ok(InvalidInputError.isInstance(error), String(error));
              assert.equal(
                (error as Error).message,
                `recipe: teaching.${key}: not a key of teaching mode ${mode} (only ${other} take it)`,
              );
              assert.equal((error as InvalidInputError).field, `teaching.${key}`);
              return true;
            },
            `${mode} took ${key}`,
          );
          refused++;
        }
      }
    }
    assert.ok(refused >= 5, `${refused} foreign teaching keys refused`);
    assert.throws(
      () => parseRecipe({ trainer: { algorithm: "sft" }, teaching: { student, shots: 2 } }),
      /recipe: teaching: unknown key\(s\) shots/,
    );
  });

  it("takes every key of each teaching mode's own block", () => {
    for (const [mode, schema] of Object.entries(TEACHING_BY_MODE)) {
      const teaching = Object.fromEntries(
        Object.entries(schema.shape).map(([key, field]) => [key, teachingValue(key, field)]),
      );
      assert.doesNotThrow(() => parseRecipe({ trainer: { algorithm: mode }, teaching }), mode);
    }
  });

  it("refuses __proto__, constructor and prototype anywhere in an override key, and no prototype is written", () => {
    try {
      for (const override of [
        "__proto__.polluted=1",
        "trainer.__proto__.polluted=1",
        "constructor.prototype.polluted=1",
        "trainer.constructor=1",
        "data.prototype.polluted=1",
      ]) {
        assert.throws(
          () => applyOverrides({ trainer: { steps: 5 } }, [override]),
          (error: unknown) => {
            assert.ok(InvalidInputError.isInstance(error), String(error));
            assert.match(
              (error as Error).message,
              /"(__proto__|constructor|prototype)" is never a recipe key/,
            );
            return true;
          },
          override,
        );
      }
      assert.equal(({} as Record<string, unknown>).polluted, undefined);
    } finally {
      delete (Object.prototype as Record<string, unknown>).polluted;
    }
  });

  it("refuses a prototype key written in a recipe file, naming where it is", async () => {
    const path = await recipeFile("trainer:\n  steps: 3\n  __proto__:\n    polluted: 1\n");
    await assert.rejects(loadRecipe(path), /trainer\.__proto__: "__proto__" is never a recipe key/);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it("refuses an override key with an empty part", () => {
    assert.throws(() => parseOverride("trainer..steps=3"), /trainer\.\.steps: empty key part/);
    assert.throws(() => parseOverride(".steps=3"), /empty key part/);
  });

  it("builds the raw recipe from objects with no prototype", async () => {
    const raw = await readRecipeYaml(await recipeFile("trainer:\n  steps: 3\n"), ["data.seed=4"]);
    assert.equal(Object.getPrototypeOf(raw), null);
    assert.equal(Object.getPrototypeOf(raw.trainer), null);
    assert.equal(Object.getPrototypeOf(raw.data), null);
    assert.equal(Object.getPrototypeOf(applyOverrides({ trainer: {} }, []).trainer), null);
    assert.equal(parseRecipe(raw).data.seed, 4);
  });

  it("names the recipe as the caller asks, so an error carries no server path", async () => {
    const path = await recipeFile("trainer:\n  steps: many\n");
    await assert.rejects(loadRecipe(path, [], "recipes/r.yaml"), (error: unknown) => {
      assert.match((error as Error).message, /^recipes\/r\.yaml: trainer\.steps: expected number/);
      assert.ok(!(error as Error).message.includes(tmpdir()));
      return true;
    });
    await assert.rejects(
      loadRecipe(join(tmpdir(), "arc-no-such-recipe.yaml"), [], "recipes/gone.yaml"),
      (error: unknown) => {
        assert.equal((error as Error).message, "recipes/gone.yaml: cannot read the recipe (no such file)");
        return true;
      },
    );
  });

  it("lets a tenant tune training knobs only: every tunable key is a recipe field, none a path or module", () => {
    const fields = (block: RecipeBlock) => Object.keys(blockShape(block)).map((field) => `${block}.${field}`);
    const all = new Set(
      (["model", "data", "trainer", "reward", "sftWarmUp"] as const).flatMap((block) => fields(block)),
    );
    for (const key of TUNABLE_RECIPE_KEYS.keys()) assert.ok(all.has(key), `${key} is not a recipe field`);
    for (const key of [
      "model.path",
      "data.prompts",
      "data.preferences",
      "data.examples",
      "reward.module",
      "reward.judge",
      "data.env",
    ]) {
      assert.ok(!TUNABLE_RECIPE_KEYS.has(key), key);
    }
  });

  it("caps every numeric tunable key: its cap passes, one more is refused naming the key, the value and the cap", () => {
    const field = (key: string) => {
      const [block, name] = key.split(".") as [RecipeBlock, string];
      return blockShape(block)[name];
    };
    for (const [key, max] of TUNABLE_RECIPE_KEYS) {
      assert.equal(
        field(key).safeParse(max ?? 1).success,
        max !== null,
        `${key}: a cap exactly when it is a number`,
      );
      if (max === null) continue;
      checkTunableOverrides([`${key}=${max}`]);
      assert.throws(
        () => checkTunableOverrides([`${key}=${max * 10 + 1}`]),
        (error: unknown) => {
          assert.ok(InvalidInputError.isInstance(error), String(error));
          assert.equal(
            (error as Error).message,
            `overrides: ${key}=${max * 10 + 1} is more than a run request may set; at most ${max}`,
          );
          return true;
        },
        key,
      );
    }
    for (const huge of [
      "trainer.steps=1000000000",
      "trainer.maxTokens=1e9",
      "trainer.promptsPerStep=100000",
      "trainer.samplesPerPrompt=100000",
      "data.count=100000000",
      "data.evalCount=100000000",
    ]) {
      assert.throws(
        () => checkTunableOverrides(["trainer.steps=2", huge]),
        /is more than a run request may set/,
      );
    }
    assert.throws(() => checkTunableOverrides(["reward.module=/x.mjs"]), /"reward\.module" is not a key/);
    checkTunableOverrides(["trainer.syncInterval=inf", "trainer.loss=ipo", "trainer.decoupled=true"]);
  });
});
