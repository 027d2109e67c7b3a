// Adaptive teaching benchmark on the `toolcall` environment: the frozen base student
// (models/toolcall-base) alone, with an untrained teacher (the checkpoint teacher training starts from),
// with the SFT warm-up teacher and with the trained (SFT + GRPO) teacher, on held-out production tasks that the teacher
// never trained on, and with the reference rule the teacher is trained to imitate (it reads the solution,
// so it is the most a learned teacher could reach with this student), silent to strong students, telling them their
// request's conversions, and telling those of the kinds the SFT labels were measured to tell (then once more with
// every month stated as July's). Teachers run under the protocol's claim guard for toolcall
// (`ungroundedClaims: ungroundedToolcallConversions`: a conversion the request does not support is cut out before the
// student reads it), and the trained teacher once more without it. Accuracy, NDR, teaching tokens, TES, teachings
// whose claim the guard cut and teachings that still state a false conversion, split by how the probe judged the student.
// Trains the teacher first (scripts/make-teacher.ts recipes) when models/teacher-toolcall is missing.
// Usage: node --import tsx bench/teaching.bench.ts [--count 600] [--seed 2024] [--student dir] [--teacher dir] [--sft-teacher dir]
// Writes bench/results/teaching.json (the figures file) and bench/results/teaching.md.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { parseArgs } from "node:util";
import {
  type ChatModel,
  formatToolCall,
  parseToolCall,
  type Task,
  type TeachingMetrics,
  type TeachingTemplatesInput,
  verifyTask,
} from "@arc/core";
import { type ToolcallSolution, toolcallFamily } from "@arc/core/families";
import {
  byteTokenCounter,
  configForSize,
  EmbeddedInferenceEngine,
  EngineChatModel,
  initWeights,
} from "@arc/engine";
import {
  type ConversionsTold,
  diagnoseToolcallProbe,
  evaluateTeaching,
  falseConversions,
  loadRecipe,
  ReferenceToolcallTeacher,
  type StrongStudentTeaching,
  type TeachingEvaluation,
  TOOLCALL_TEACHING_TEMPLATES,
  toolcallAnswers,
  verifyToolcallAttempt,
} from "@arc/rl";
import { writeBenchResults } from "./results-file.ts";

const { values } = parseArgs({
  options: {
    count: { type: "string", default: "600" },
    seed: { type: "string", default: "2024" },
    student: { type: "string", default: "models/toolcall-base" },
    teacher: { type: "string" },
    "sft-teacher": { type: "string" },
  },
});
const started = performance.now();
const secs = () => ((performance.now() - started) / 1000).toFixed(0);
const log = (line: string) => console.error(`[bench:teaching] ${line} (${secs()}s)`);

const sftRecipe = await loadRecipe("recipes/teacher-sft.yaml");
const grpoRecipe = await loadRecipe("recipes/teacher-grpo.yaml");
const sftTeaching = sftRecipe.teaching as NonNullable<typeof sftRecipe.teaching>;
const grpoTeaching = grpoRecipe.teaching as NonNullable<typeof grpoRecipe.teaching>;
const trainedDir = values.teacher ?? "models/teacher-toolcall";
const sftDir = values["sft-teacher"] ?? grpoRecipe.model.path;
if (!existsSync(trainedDir)) {
  log(`${trainedDir} is missing: training it with scripts/make-teacher.ts`);
  execFileSync("node", ["--import", "tsx", "scripts/make-teacher.ts"], { stdio: "inherit" });
}

const templates: TeachingTemplatesInput = {
  ...TOOLCALL_TEACHING_TEMPLATES,
  maxProbeTokens: grpoTeaching.maxProbeTokens,
};
// Held out: production traffic of another seed, minus every question the teacher was trained on.
const family = toolcallFamily;
const seen = new Set(
  [sftRecipe, grpoRecipe].flatMap((r) =>
    family.generate({ split: r.data.split, seed: r.data.seed, count: r.data.count }).map((t) => t.question),
  ),
);
const tasks: Task[] = family
  .generate({ split: "production", seed: Number(values.seed), count: Number(values.count) * 2 })
  .filter((t) => !seen.has(t.question))
  .slice(0, Number(values.count));

const studentEngine = await EmbeddedInferenceEngine.load(values.student, { maxBatchSize: 64 });
const student = new EngineChatModel(studentEngine, { model: "toolcall-base" });
const teacherOf = async (label: string, dir: string | undefined): Promise<ChatModel> => {
  if (dir)
    return new EngineChatModel(await EmbeddedInferenceEngine.load(dir, { maxBatchSize: 64 }), {
      model: label,
    });
  const config = configForSize(sftRecipe.model.init?.size ?? "small");
  return new EngineChatModel(await EmbeddedInferenceEngine.create(config, initWeights(config, 12345)), {
    model: label,
  });
};
const completed = (text: string) => parseToolCall(text).ok;

/** Evaluates `teacher` (none: the student alone); `guarded`: with the protocol's claim guard for toolcall. */
async function run(
  label: string,
  teacher: ChatModel | undefined,
  guarded = true,
): Promise<TeachingEvaluation> {
  const result = await evaluateTeaching({
    student,
    teacher,
    mode: teacher ? "adaptive" : "off",
    tasks,
    verify: verifyToolcallAttempt,
    templates,
    tokenCounter: byteTokenCounter,
    maxTeacherTokens: grpoRecipe.trainer.maxTokens,
    maxSolutionTokens: grpoTeaching.maxSolutionTokens,
    completed,
    answersOf: toolcallAnswers,
    ...(guarded ? { ungroundedClaims: family.ungroundedClaims } : {}),
    concurrency: 32,
  });
  log(
    `${label}: accuracy ${result.overall.taughtAccuracy?.toFixed(3)} ndr ${result.overall.ndr?.toFixed(3)}`,
  );
  return result;
}

const alone = await run("student alone", undefined);
// The untrained teacher is what teacher training starts from: the SFT recipe's checkpoint, or fresh weights.
const untrained = await run(
  "untrained teacher",
  await teacherOf("teacher-untrained", sftRecipe.model.init ? undefined : sftRecipe.model.path),
);
const sftOnly = await run("SFT teacher", await teacherOf("teacher-toolcall-sft", sftDir));
const trainedTeacher = await teacherOf("teacher-toolcall", trainedDir);
const trained = await run("trained teacher", trainedTeacher);
const trainedUnguarded = await run("trained teacher, no claim guard", trainedTeacher, false);
// The reference rule three ways for strong students: silent, told every request's conversions, and told those of
// the kinds the SFT teacher's labels were measured to tell (its teacher.json); the recipe's way is the headline.
const sftRecord = JSON.parse(await readFile(`${sftDir}/teacher.json`, "utf8").catch(() => "{}")) as {
  figures?: { conversionsTold?: ConversionsTold };
};
const measuredKinds = sftRecord.figures?.conversionsTold;
const strongTeaching = sftTeaching.strongStudentTeaching;
if (strongTeaching === "measured" && !Array.isArray(measuredKinds))
  throw new Error(
    `${sftDir}/teacher.json: no figures.conversionsTold list; retrain the SFT teacher with scripts/make-teacher.ts`,
  );
const rules: { setting: StrongStudentTeaching; label: string; told: ConversionsTold }[] = [
  { setting: "none", label: "silent to strong students", told: [] },
  { setting: "conversions", label: "strong students told their conversions", told: "all" },
  ...(strongTeaching === "measured" && Array.isArray(measuredKinds)
    ? [
        {
          setting: "measured" as const,
          label: `strong students told the conversions of ${measuredKinds.join(", ") || "no kind"} (measured)`,
          told: measuredKinds,
        },
      ]
    : []),
];
const referenceRuns: { label: string; evaluation: TeachingEvaluation }[] = [];
for (const rule of rules)
  referenceRuns.push({
    label: `reference rule, ${rule.label}`,
    evaluation: await run(`reference rule, ${rule.label}`, new ReferenceToolcallTeacher(tasks, rule.told)),
  });
// Does the student read the month it is told, or only the hint's form? To tell, the measured rule runs again with
// every month it states replaced by July's (true only for July dates), without the guard that would cut them.
if (strongTeaching === "measured" && Array.isArray(measuredKinds)) {
  const measuredRule = new ReferenceToolcallTeacher(tasks, measuredKinds);
  const julyEverywhere: ChatModel = {
    model: "reference-teacher-july",
    async complete(messages, options) {
      const reply = await measuredRule.complete(messages, options);
      return { ...reply, text: reply.text.replace(/[A-Z][a-z]+ is month \d\d/g, "July is month 07") };
    },
  };
  const label = "reference rule, measured kinds, every month stated as July's";
  referenceRuns.push({ label, evaluation: await run(label, julyEverywhere, false) });
}
const reference =
  referenceRuns[
    Math.max(
      0,
      rules.findIndex((r) => r.setting === strongTeaching),
    )
  ].evaluation;

// The probe's judgement read by the reference rule (right tool and argument names in the student's
// first bytes), the same for every condition, so the strong/weak split does not depend on the teacher.
const referenceJudgement = trained.runs.map(
  (r, i) => diagnoseToolcallProbe(tasks[i], r.approach ?? "").diagnosis,
);
const split = (evaluation: TeachingEvaluation, judgement: "strong" | "weak") => {
  const idx = referenceJudgement.flatMap((j, i) => (j === judgement ? [i] : []));
  const outcomes = idx.map((i) => evaluation.outcomes[i]);
  const mean = (xs: number[]) => (xs.length === 0 ? null : xs.reduce((a, b) => a + b, 0) / xs.length);
  return {
    students: idx.length,
    baselineAccuracy: mean(outcomes.map((o) => o.baselineScore ?? 0)),
    taughtAccuracy: mean(outcomes.map((o) => o.taughtScore)),
    teachingTokens: mean(outcomes.map((o) => o.teachingTokens)),
    degradations: outcomes.filter((o) => o.taughtScore < (o.baselineScore ?? 0)).length,
  };
};

/** Teachings that state a conversion which is not the request's (`July is month 07` for a March date). */
const falselyTaught = (evaluation: TeachingEvaluation) =>
  evaluation.runs.filter((r, i) => falseConversions(tasks[i], r.teaching).length > 0).length;

/** Teachings from which the claim guard cut a conversion the request does not support. */
const claimsCut = (evaluation: TeachingEvaluation) =>
  evaluation.runs.filter((r) => r.warnings.some((w) => w.kind === "ungrounded_claim")).length;

/** Tasks the teaching turned right / wrong, against the same student alone. */
const fixedAndBroken = (evaluation: TeachingEvaluation) => ({
  fixed: evaluation.outcomes.filter((o) => o.taughtScore > (o.baselineScore ?? 0)).length,
  broken: evaluation.outcomes.filter((o) => o.taughtScore < (o.baselineScore ?? 0)).length,
});

/** Two-sided exact sign test: how likely a split of the changed tasks at least this lopsided is by chance. */
function signTestP({ fixed, broken }: { fixed: number; broken: number }): number {
  const n = fixed + broken;
  let tail = 0;
  let choose = 1;
  for (let k = 0; k <= Math.min(fixed, broken); k++) {
    tail += choose;
    choose = (choose * (n - k)) / (k + 1);
  }
  return Math.min(1, (2 * tail) / 2 ** n);
}
const trainedChanges = fixedAndBroken(trained);

const figures = {
  student_accuracy: alone.overall.taughtAccuracy,
  untrained_teacher_accuracy: untrained.overall.taughtAccuracy,
  trained_teacher_accuracy: trained.overall.taughtAccuracy,
  ndr: trained.overall.ndr,
  teaching_tokens_strong: split(trained, "strong").teachingTokens,
  teaching_tokens_weak: split(trained, "weak").teachingTokens,
  tes: trained.overall.tes,
  reference_rule_accuracy: reference.overall.taughtAccuracy,
  reference_rule_ndr: reference.overall.ndr,
  trained_teacher_false_conversions: falselyTaught(trained),
  trained_teacher_claims_cut: claimsCut(trained),
  trained_teacher_unguarded_accuracy: trainedUnguarded.overall.taughtAccuracy,
  trained_teacher_unguarded_ndr: trainedUnguarded.overall.ndr,
  trained_teacher_unguarded_false_conversions: falselyTaught(trainedUnguarded),
  trained_teacher_fixed: trainedChanges.fixed,
  trained_teacher_broken: trainedChanges.broken,
  trained_teacher_sign_test_p: signTestP(trainedChanges),
};
writeBenchResults("teaching", figures);
await mkdir("bench/results", { recursive: true });

const f = (x: number | null | undefined, d = 3) => (x === null || x === undefined ? "n/a" : x.toFixed(d));
const row = (label: string, m: TeachingMetrics, e: TeachingEvaluation) =>
  `| ${label} | ${f(m.taughtAccuracy)} | ${f(m.ndr)} | ${fixedAndBroken(e).fixed} | ${m.degradations} | ${f(m.meanTeachingTokens, 1)} | ${f(m.tes)} | ${f(m.completionRate)} | ${f(split(e, "strong").teachingTokens, 1)} | ${f(split(e, "weak").teachingTokens, 1)} | ${claimsCut(e)} | ${falselyTaught(e)} |`;
const targets = [
  [
    `trained teacher raises accuracy over the student alone (it fixed ${trainedChanges.fixed} tasks and broke ${trainedChanges.broken}; sign test p = ${f(figures.trained_teacher_sign_test_p)}, and a second sample of tasks, \`--seed\`, is the better check)`,
    (figures.trained_teacher_accuracy ?? 0) > (figures.student_accuracy ?? 0),
  ],
  ["NDR >= 0.99", (figures.ndr ?? 0) >= 0.99],
  [
    "fewer teaching tokens for strong students than weak ones",
    (figures.teaching_tokens_strong ?? 0) < (figures.teaching_tokens_weak ?? 0),
  ],
] as const;
const studentRecord = JSON.parse(
  await readFile(`${values.student}/base-model.json`, "utf8").catch(() => "{}"),
) as { steps?: number; productionFailureRate?: number; evalAccuracy?: number };
const teacherRecord = JSON.parse(await readFile(`${trainedDir}/teacher.json`, "utf8").catch(() => "{}"));
const sample = (e: TeachingEvaluation, i: number) =>
  `probe ${JSON.stringify(e.runs[i].approach)} -> teaching ${JSON.stringify(e.runs[i].teaching)} -> ${e.outcomes[i].taughtScore ? "right" : "wrong"} (alone: ${e.outcomes[i].baselineScore ? "right" : "wrong"})`;
const failureClasses: Record<string, number> = {};
for (const [i, run] of alone.runs.entries()) {
  const failed = verifyTask(tasks[i], [run.solution.text]).failure?.class;
  if (failed) failureClasses[failed] = (failureClasses[failed] ?? 0) + 1;
}
const weakIndex = referenceJudgement.indexOf("weak");
const strongIndex = referenceJudgement.indexOf("strong");
const md = `# Adaptive teaching benchmark (toolcall)

\`npm run bench:teaching\` — ${tasks.length} held-out production tasks (seed ${values.seed}, questions the teacher never
trained on), frozen student \`${values.student}\` (greedy), teachers in adaptive mode, probe ${templates.maxProbeTokens}
byte tokens. Token counts are the byte-level models' own tokens. Wall time ${secs()} s.
Student: ${studentRecord.steps ?? "?"} SFT steps, production failure rate ${studentRecord.productionFailureRate ?? "?"}, eval accuracy ${studentRecord.evalAccuracy ?? "?"} (its base-model.json).

| condition | accuracy | NDR | fixed | degradations | teaching tokens / task | TES | completion | teaching tokens (strong) | teaching tokens (weak) | teachings whose claim the guard cut | teachings the student read with a false conversion |
|---|---|---|---|---|---|---|---|---|---|---|---|
${row("student alone", alone.overall, alone)}
${row(`student + untrained teacher (${sftRecipe.model.init ? "fresh weights" : sftRecipe.model.path})`, untrained.overall, untrained)}
${row("student + SFT warm-up teacher", sftOnly.overall, sftOnly)}
${row("student + trained teacher (SFT + GRPO)", trained.overall, trained)}
${row("student + trained teacher, no claim guard", trainedUnguarded.overall, trainedUnguarded)}
${referenceRuns.map(({ label, evaluation }) => row(`student + ${label}`, evaluation.overall, evaluation)).join("\n")}

The reference rule reads the solution, so it is the ceiling for a learned teacher; the recipe's
\`teaching.strongStudentTeaching\` is \`${strongTeaching}\`, and \`reference_rule_accuracy\` / \`reference_rule_ndr\` are that rule's.
Every teacher runs under the protocol's claim guard for toolcall (\`ungroundedToolcallConversions\`: a month or hour
conversion the request does not support is cut from the teaching before the student reads it), except the rows that
say otherwise; "teachings the student read with a false conversion" counts what got past it.

Strong/weak: the student's probe judged by the reference rule (it opens the right tool with the right
argument names, and every value it wrote out in full is the request's), the same split for every condition:
${split(trained, "strong").students} strong, ${split(trained, "weak").students} weak.

| teacher | probe | students | accuracy alone | accuracy taught | teaching tokens | degradations |
|---|---|---|---|---|---|---|
${(
  [
    ["SFT warm-up", sftOnly],
    ["trained", trained],
    ["trained, no claim guard", trainedUnguarded],
    ...referenceRuns.map(({ label, evaluation }) => [label, evaluation] as const),
  ] as const
)
  .flatMap(([label, e]) =>
    (["strong", "weak"] as const).map((j) => {
      const s = split(e, j);
      return `| ${label} | ${j} | ${s.students} | ${f(s.baselineAccuracy)} | ${f(s.taughtAccuracy)} | ${f(s.teachingTokens, 1)} | ${s.degradations} |`;
    }),
  )
  .join("\n")}

Student-alone failures by verifier class: ${Object.entries(failureClasses)
  .map(([k, n]) => `${k} ${n}`)
  .join(
    ", ",
  )} (teaching names the tool, the argument names and the request's conversions, never a whole argument value).

Trained teacher's own diagnosis: ${[...trained.byJudgement].map(([k, m]) => `${k} ${m.interactions} (teaching tokens ${f(m.meanTeachingTokens, 1)})`).join(", ")}.

## Targets

${targets.map(([name, ok]) => `- ${ok ? "met" : "NOT met"}: ${name}`).join("\n")}

## Examples (trained teacher)

${weakIndex >= 0 ? `- weak: ${sample(trained, weakIndex)}` : ""}
${strongIndex >= 0 ? `- strong: ${sample(trained, strongIndex)}` : ""}

## How the teacher was made

${teacherRecord.command ? `\`${teacherRecord.command}\` after \`node --import tsx scripts/make-teacher.ts sft\`; figures: \`${JSON.stringify(teacherRecord.figures)}\`, ${teacherRecord.trainSeconds} s.` : "(no teacher.json found)"}
Reference call of the first task, for scale: \`${formatToolCall(tasks[0].solution as ToolcallSolution)}\`.
`;
await writeFile("bench/results/teaching.md", md);
console.log(JSON.stringify(figures, null, 2));
log("wrote bench/results/teaching.json and bench/results/teaching.md");
