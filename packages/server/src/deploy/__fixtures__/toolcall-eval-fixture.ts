import { buildEvalSet, type Dataset, type FailureItem, type Task } from "@arc/core";
import { toolcallFamily } from "@arc/core/families";

/** A toolcall EvalSet (one booking pattern, a general slice) and the tasks behind it, with their right answers. */
export interface ToolcallEvalFixture {
  evalSet: Dataset<"eval">;
  /** Every task, production and eval, by question. */
  tasks: Task[];
  /** The reference (correct) output of a question. */
  right(question: string): string;
  /** A wrong tool call for a question: the right tool with a corrupted first argument. */
  wrong(question: string): string;
  /** Questions of the pattern slice (what the production model got wrong). */
  patternQuestions: string[];
  generalQuestions: string[];
}

/** Builds the fixture with core's `buildEvalSet`, as the failure pipeline will. */
export function toolcallEvalFixture(tenantId: string): ToolcallEvalFixture {
  const production = toolcallFamily.generate({ split: "production", seed: 7, count: 120 });
  const general = toolcallFamily.generate({ split: "eval", seed: 8, count: 40 });
  const failures: FailureItem[] = production
    .filter((t) => t.meta?.tool === "book_table")
    .map((t, i) => ({
      traceId: `trace-${i}`,
      patternId: "pat-booking",
      env: t.env,
      question: t.question,
      context: { messages: [{ role: "user", content: t.question }] },
      solution: t.solution,
      output: '{"tool":"add_event","args":{}}',
    }));
  const evalSet = buildEvalSet({
    tenantId,
    seed: 1,
    failures,
    general: general.map((t) => ({
      question: t.question,
      solution: t.solution,
      env: t.env,
      meta: { id: t.id },
    })),
    trainingQuestions: [],
    perPattern: 20,
    generalSize: 30,
  });
  const tasks = [...production, ...general];
  const byQuestion = new Map(tasks.map((t) => [t.question, t]));
  const right = (q: string) => {
    const task = byQuestion.get(q);
    if (!task) throw new Error(`no task for ${q}`);
    return toolcallFamily.reference(task)[0];
  };
  const wrong = (q: string) => {
    const call = JSON.parse(right(q)) as { tool: string; args: Record<string, unknown> };
    const [first] = Object.keys(call.args);
    return JSON.stringify({ tool: call.tool, args: { ...call.args, [first]: "corrupted" } });
  };
  return {
    evalSet,
    tasks,
    right,
    wrong,
    patternQuestions: evalSet.rows.filter((r) => r.meta.slice !== "general").map((r) => r.question),
    generalQuestions: evalSet.rows.filter((r) => r.meta.slice === "general").map((r) => r.question),
  };
}
