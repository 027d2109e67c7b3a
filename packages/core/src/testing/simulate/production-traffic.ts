import { InvalidInputError } from "../../errors/index.ts";
import { generateTasks } from "../../families/registry.ts";
import { taskFamilies } from "../../families/task-families.ts";
import type { Task } from "../../rollout/index.ts";
import { parseToolCall } from "../../tasks/parse-tool-call.ts";
import { createRng, deriveSeed, type Rng } from "../../tasks/rng.ts";
import { pickWeighted, type TaskFamily } from "../../tasks/task-family.ts";
import { toOpenAiTools } from "../../tasks/tool-spec.ts";
import type { Feedback, TraceInput } from "../../trace/index.ts";
import { INJECTED_MODES, type InjectedMode, type SimulatedTurn } from "./injected-modes.ts";

/** How many turns a simulated multi-turn episode may take: room for the looping failures to show. */
const SIMULATED_MAX_TURNS = 8;

/** One simulated production episode: the trace as an SDK would send it, and the truth about it. */
export interface SimulatedTrace {
  trace: TraceInput;
  /** The injected failure mode's id, or null for a correct episode. */
  injected: string | null;
  /** Feedback the user left (for `user_feedback` modes). */
  feedback: Feedback[];
  task: Task;
}

/** Options of the production traffic simulator. */
export interface TrafficOptions {
  seed: number;
  count: number;
  /** Share of episodes that get a failure mode injected (default 0.35). */
  failureRate?: number;
  /** Which mode ids to inject (default: all of INJECTED_MODES). */
  modes?: readonly string[];
  /** Mix of env ids (default toolcall 0.6, arith 0.2, orderdesk 0.2). */
  envMix?: Record<string, number>;
  /** Time of the first trace; one trace a minute after it (default 2026-01-05T00:00:00Z). */
  startTime?: string;
  /** Model versions answering, in consecutive equal time slices (default ["base-v1"]). */
  modelVersions?: readonly string[];
}

/**
 * Simulates production traffic of an agent on the `production` splits, with KNOWN injected failure modes, so that
 * detection and clustering can be measured (purity, completeness) against the truth. Deterministic for a seed.
 * Traces carry `metadata.solution` (the simulator knows the task), as a simulated agent with ground truth would.
 */
export function simulateProductionTraffic(options: TrafficOptions): SimulatedTrace[] {
  const rng = createRng(deriveSeed(options.seed, "traffic"));
  const failureRate = options.failureRate ?? 0.35;
  if (!(failureRate >= 0 && failureRate <= 1)) {
    throw new InvalidInputError(`failureRate: expected a number in [0, 1], got ${failureRate}`, {
      field: "failureRate",
    });
  }
  const unknownModes = (options.modes ?? []).filter((id) => !INJECTED_MODES.some((m) => m.id === id));
  if (unknownModes.length) {
    throw new InvalidInputError(
      `modes: unknown mode ${JSON.stringify(unknownModes[0])}; known: ${INJECTED_MODES.map((m) => m.id).join(", ")}`,
      {
        field: "modes",
      },
    );
  }
  const modes = INJECTED_MODES.filter((m) => !options.modes || options.modes.includes(m.id));
  const mix = options.envMix ?? { toolcall: 0.6, arith: 0.2, orderdesk: 0.2 };
  const versions = options.modelVersions ?? ["base-v1"];
  const start = Date.parse(options.startTime ?? "2026-01-05T00:00:00Z");
  const families = Object.fromEntries(Object.keys(mix).map((env) => [env, taskFamilies.get(env, "envMix")]));
  const pools = Object.fromEntries(
    Object.entries(families).map(([env, family]) => [
      env,
      generateTasks(family, { split: "production", seed: options.seed, count: options.count }),
    ]),
  );
  const out: SimulatedTrace[] = [];
  for (let i = 0; i < options.count; i++) {
    const env = pickWeighted(mix, rng.next());
    const task = pools[env][i];
    const correct = families[env].reference(task);
    const candidates = modes.filter((m) => m.envs.includes(env) && m.applies(task));
    const mode: InjectedMode | undefined =
      candidates.length && rng.chance(failureRate) ? rng.pick(candidates) : undefined;
    const turns = mode ? mode.turns(task, correct, rng) : correct.map((text) => ({ text }));
    const version =
      versions[Math.min(versions.length - 1, Math.floor((i * versions.length) / options.count))];
    const trace = buildTrace(families[env], task, turns, {
      id: `tr-${options.seed}-${i}`,
      at: start + i * 60_000,
      version,
      rng,
    });
    const feedback: Feedback[] = mode?.feedbackLabel
      ? [{ id: `fb-${options.seed}-${i}`, traceId: trace.id, label: mode.feedbackLabel }]
      : [];
    out.push({ trace, injected: mode?.id ?? null, feedback, task });
  }
  return out;
}

function buildTrace(
  family: TaskFamily,
  task: Task,
  turns: SimulatedTurn[],
  at: { id: string; at: number; version: string; rng: Rng },
): TraceInput & { id: string } {
  const messages: { role: "user" | "assistant" | "tool"; content: string }[] = [
    { role: "user", content: task.question },
  ];
  const steps: NonNullable<TraceInput["steps"]> = [];
  const session = family.session?.(task, { maxTurns: SIMULATED_MAX_TURNS });
  const tools = family.tools ? toOpenAiTools(family.tools) : undefined;
  let clock = at.at;
  const iso = (ms: number) => new Date(ms).toISOString();
  for (const [n, turn] of turns.entries()) {
    const latencyMs = turn.latencyMs ?? at.rng.int(150, 900);
    const parsed = parseToolCall(turn.text);
    const asToolCall = parsed.ok && tools !== undefined && !session && at.rng.chance(0.5);
    steps.push({
      id: `${at.id}-llm${n}`,
      kind: "llm",
      startedAt: iso(clock),
      latencyMs,
      llm: {
        modelVersion: at.version,
        messages: messages.map((m) => ({ ...m })),
        ...(tools ? { tools } : {}),
        params: { max_tokens: 48, temperature: 0 },
        ...(turn.error
          ? {}
          : {
              output: asToolCall
                ? {
                    content: null,
                    toolCalls: [
                      {
                        id: `call_${n}`,
                        type: "function",
                        function: { name: parsed.call.tool, arguments: JSON.stringify(parsed.call.args) },
                      },
                    ],
                  }
                : { content: turn.text },
              finishReason: turn.finishReason ?? "stop",
            }),
      },
      ...(turn.error ? { error: turn.error } : {}),
    });
    clock += latencyMs;
    if (turn.error) break;
    messages.push({ role: "assistant", content: turn.text });
    if (session && !session.done) {
      const step = session.act(turn.text);
      if (step.toolCall) {
        steps.push({
          id: `${at.id}-tool${n}`,
          kind: "tool",
          name: step.toolCall.tool,
          startedAt: iso(clock),
          latencyMs: 5,
          input: step.toolCall.args,
          output: JSON.parse(step.observation),
        });
        clock += 5;
      }
      messages.push({ role: "tool", content: step.observation });
      if (step.done) break;
    }
  }
  return {
    id: at.id,
    name: `${task.env} agent`,
    startedAt: iso(at.at),
    endedAt: iso(clock),
    env: task.env,
    userId: `user-${at.rng.int(1, 400)}`,
    input: { question: task.question },
    metadata: { solution: task.solution, taskId: task.id },
    steps,
  };
}
