import { randomUUID } from "node:crypto";
import {
  type FailurePattern,
  type NdrDecision,
  NdrMonitor,
  NotFoundError,
  runTeaching,
  type TeachingRun,
  type Trace,
  taskFamilies,
  toTraceSteps,
} from "@arc/core";
import { existingPatternIds, listPatterns } from "../failures/pattern-store.ts";
import { gatewayTrace } from "../gateway/gateway-trace.ts";
import { jsonAnswer } from "../gateway/model-answer.ts";
import type { ModelPool } from "../gateway/model-pool.ts";
import type { RouteChoice } from "../gateway/routing-table.ts";
import type { RunTimeTeacher, TaughtAnswer, TeachCallContext } from "../gateway/run-time-teacher.ts";
import { appendAudit } from "../store/audit-log.ts";
import type { Database } from "../store/database.ts";
import { getModelVersion } from "../store/model-registry.ts";
import { RefreshingCache } from "../store/refreshing-cache.ts";
import { backendChatModel } from "./backend-chat-model.ts";
import { judgeLiveOutput } from "./judge-live-output.ts";
import { matchPattern } from "./match-pattern.ts";
import { parseTeachingConfig, type TeachingConfig, type TeachingConfigInput } from "./teaching-config.ts";
import { getTeachingState, putTeachingState, type TeachingState } from "./teaching-store.ts";

/** The NDR key of taught requests that belong to no listed pattern (a tenant-wide teaching). */
export const ALL_TRAFFIC = "*";

/**
 * The answering call's token budget: the client's `max_completion_tokens` (or `max_tokens`) when it gives one, capped
 * by the tenant's `maxSolutionTokens`, so a taught answer is never longer than the client allowed.
 */
function solutionBudget(
  request: Record<string, unknown>,
  configured: number | undefined,
): number | undefined {
  const asked = [request.max_completion_tokens, request.max_tokens].find(
    (v): v is number => typeof v === "number" && Number.isInteger(v) && v > 0,
  );
  if (asked === undefined) return configured;
  return configured === undefined ? asked : Math.min(asked, configured);
}

/** A pattern's teaching status, as the API and CLI show it. */
export interface PatternTeachingStatus {
  /** Pattern id (or `*` for tenant-wide teaching). */
  patternId: string;
  /** Whether requests of the pattern are taught now. */
  teaching: boolean;
  /** Live NDR figures of this process (null before any baseline ran). */
  decision: NdrDecision | null;
  /** When and why the NDR monitor switched it off, if it did. */
  switchedOff?: TeachingState["switchedOff"][string];
}

/** Options of the runtime. */
export interface TeachingRuntimeDeps {
  db: Database;
  /** The gateway's model pool: student and teacher run through the same backends as ordinary calls. */
  pool: ModelPool;
  /** Draws whether a taught request also runs the baseline (default Math.random). */
  random?: () => number;
  /** How long a tenant's stored state may be used (default 1 s); it is read again from half of it. */
  ttlMs?: number;
}

/**
 * Run-time adaptive teaching at the gateway: for a tenant with a teaching config, a non-streamed
 * request (of a listed pattern, when patterns are listed) is answered by the routed student under
 * the configured teacher (probe, teaching, solution), and a `baselineShare` of them also runs the
 * student alone so the NDR of each pattern is watched live. A pattern whose NDR falls below its gate
 * is switched off (stored and audit-logged) until an operator resets it. Teaching fails open: if
 * the teacher cannot be reached, the request goes to the student untaught.
 */
export class TeachingRuntime implements RunTimeTeacher {
  private readonly monitors = new Map<string, { monitor: NdrMonitor; configJson: string }>();
  /** Each tenant's stored state and patterns, read again in the background before they are `ttlMs` old. */
  private readonly cache: RefreshingCache<{ state: TeachingState; patterns: FailurePattern[] }>;
  private readonly random: () => number;

  constructor(private readonly deps: TeachingRuntimeDeps) {
    this.random = deps.random ?? Math.random;
    const ttlMs = deps.ttlMs ?? 1_000;
    this.cache = new RefreshingCache((tenantId) => this.load(tenantId), { ttlMs, refreshAfterMs: ttlMs / 2 });
  }

  /** Answers a request under teaching, or returns null when it is not to be taught (the gateway then forwards it). */
  async teach(
    tenantId: string,
    request: Record<string, unknown>,
    choice: RouteChoice,
    context: TeachCallContext = {},
  ): Promise<TaughtAnswer | null> {
    if (request.stream === true) return null;
    const { state, patterns } = await this.cache.get(tenantId);
    const config = state.config;
    if (!config || config.mode === "off") return null;
    const messages = Array.isArray(request.messages)
      ? (request.messages as { role?: unknown; content?: unknown }[])
      : [];
    const question = [...messages].reverse().find((m) => m.role === "user" && typeof m.content === "string")
      ?.content as string | undefined;
    if (!question) return null;
    const patternId = this.patternOf(config, patterns, question, context.pattern);
    if (patternId === null || state.switchedOff[patternId]) return null;

    const system = messages.find((m) => m.role === "system" && typeof m.content === "string")?.content as
      | string
      | undefined;
    let run: TeachingRun;
    const startedAt = new Date();
    try {
      const teacherVersion = await getModelVersion(this.deps.db, tenantId, config.teacher);
      const [studentBackend, teacherBackend] = await Promise.all([
        this.deps.pool.backend(choice.model),
        this.deps.pool.backend(teacherVersion),
      ]);
      run = await runTeaching({
        student: backendChatModel(studentBackend, choice.model.name),
        teacher: backendChatModel(teacherBackend, teacherVersion.name),
        task: { question },
        mode: config.mode,
        templates: { ...config.templates, ...(system ? { studentSystem: system } : {}) },
        baseline: this.random() < config.baselineShare,
        verify: (attempt) => judgeLiveOutput(attempt, context.env),
        ungroundedClaims: context.env ? taskFamilies.find(context.env)?.ungroundedClaims : undefined,
        maxTeacherTokens: config.maxTeacherTokens,
        maxSolutionTokens: solutionBudget(request, config.maxSolutionTokens),
        ...(request.logprobs === true
          ? { solutionLogprobs: { top: typeof request.top_logprobs === "number" ? request.top_logprobs : 0 } }
          : {}),
        studentTemperature: typeof request.temperature === "number" ? request.temperature : 0,
        signal: context.signal,
      });
    } catch (error) {
      if (context.signal?.aborted) throw error;
      console.error(`teaching for tenant ${tenantId} failed open: ${(error as Error).message}`);
      return null;
    }
    if (run.outcome?.baselineScore !== undefined)
      await this.observe(tenantId, config, patternId, run.outcome.taughtScore, run.outcome.baselineScore);
    return this.answer(request, choice, context, run, patternId, startedAt);
  }

  /** The tenant's config and each pattern's teaching status. */
  async status(
    tenantId: string,
  ): Promise<{ config: TeachingConfig | null; patterns: PatternTeachingStatus[] }> {
    const state = await getTeachingState(this.deps.db, tenantId);
    const monitor = this.monitors.get(tenantId)?.monitor;
    const ids = new Set([
      ...(state.config?.patterns ?? []),
      ...Object.keys(state.switchedOff),
      ...(monitor?.decisions().map((d) => d.patternId) ?? []),
    ]);
    if (state.config && !state.config.patterns) ids.add(ALL_TRAFFIC);
    return {
      config: state.config,
      patterns: [...ids].map((patternId) => ({
        patternId,
        teaching: state.config !== null && state.config.mode !== "off" && !state.switchedOff[patternId],
        decision: monitor?.decisions().find((d) => d.patternId === patternId) ?? null,
        ...(state.switchedOff[patternId] ? { switchedOff: state.switchedOff[patternId] } : {}),
      })),
    };
  }

  /** Sets (validated) or clears (null) the tenant's teaching config; audit-logged. */
  async configure(
    tenantId: string,
    input: TeachingConfigInput | null,
    actor: string,
  ): Promise<TeachingConfig | null> {
    const config = input === null ? null : parseTeachingConfig(input);
    if (config) await getModelVersion(this.deps.db, tenantId, config.teacher);
    const state = await getTeachingState(this.deps.db, tenantId);
    await putTeachingState(this.deps.db, tenantId, { ...state, config });
    await appendAudit(this.deps.db, {
      tenantId,
      actor,
      subjectKind: "teaching",
      subjectId: tenantId,
      action: config ? "configure" : "clear",
      fromState: state.config?.mode ?? null,
      toState: config?.mode ?? null,
      evidence: { config },
    });
    this.cache.delete(tenantId);
    return config;
  }

  /**
   * Switches a pattern's teaching back on and forgets its NDR history (after a new teacher or fix); audit-logged.
   * The id must be a failure pattern of the tenant or one its teaching status lists, else NotFoundError.
   */
  async reset(tenantId: string, patternId: string, actor: string): Promise<void> {
    const listed = (await this.status(tenantId)).patterns.some((p) => p.patternId === patternId);
    if (!listed && !(await existingPatternIds(this.deps.db, tenantId, [patternId])).has(patternId)) {
      throw new NotFoundError(
        `no pattern with id "${patternId}": it is neither a failure pattern of this tenant nor in its teaching status`,
      );
    }
    const state = await getTeachingState(this.deps.db, tenantId);
    const { [patternId]: was, ...rest } = state.switchedOff;
    await putTeachingState(this.deps.db, tenantId, { ...state, switchedOff: rest });
    this.monitors.get(tenantId)?.monitor.reset(patternId);
    await appendAudit(this.deps.db, {
      tenantId,
      actor,
      subjectKind: "pattern",
      subjectId: patternId,
      action: "teaching_reset",
      fromState: was ? "off" : "on",
      toState: "on",
      evidence: {},
    });
    this.cache.delete(tenantId);
  }

  private patternOf(
    config: TeachingConfig,
    patterns: readonly FailurePattern[],
    question: string,
    named: string | undefined,
  ): string | null {
    const allowed = config.patterns ? patterns.filter((p) => config.patterns?.includes(p.id)) : patterns;
    // A named pattern counts only if the tenant's config lists it or, with no list, if it exists: a client must
    // not mint monitor state with made-up ids.
    const known = config.patterns
      ? config.patterns.includes(named ?? "")
      : allowed.some((p) => p.id === named);
    if (named && known) return named;
    const matched = matchPattern(question, allowed);
    if (matched) return matched;
    return config.patterns ? null : ALL_TRAFFIC;
  }

  private async load(tenantId: string) {
    const state = await getTeachingState(this.deps.db, tenantId);
    const patterns =
      state.config && state.config.mode !== "off" ? await listPatterns(this.deps.db, tenantId) : [];
    return { state, patterns };
  }

  private monitorOf(tenantId: string, config: TeachingConfig): NdrMonitor {
    const configJson = JSON.stringify(config.ndr);
    const held = this.monitors.get(tenantId);
    if (held && held.configJson === configJson) return held.monitor;
    const monitor = new NdrMonitor(config.ndr);
    this.monitors.set(tenantId, { monitor, configJson });
    return monitor;
  }

  private async observe(
    tenantId: string,
    config: TeachingConfig,
    patternId: string,
    taughtScore: number,
    baselineScore: number,
  ): Promise<void> {
    const decision = this.monitorOf(tenantId, config).record(patternId, { taughtScore, baselineScore });
    if (decision.teaching) return;
    const state = await getTeachingState(this.deps.db, tenantId);
    if (state.switchedOff[patternId]) return;
    const switchedOff = { ...state.switchedOff, [patternId]: { at: new Date().toISOString(), decision } };
    await putTeachingState(this.deps.db, tenantId, { ...state, switchedOff });
    await appendAudit(this.deps.db, {
      tenantId,
      actor: "system:teaching-ndr-monitor",
      subjectKind: "pattern",
      subjectId: patternId,
      action: "teaching_switched_off",
      fromState: "on",
      toState: "off",
      evidence: { ...decision },
    });
    this.cache.delete(tenantId);
  }

  private answer(
    request: Record<string, unknown>,
    choice: RouteChoice,
    context: TeachCallContext,
    run: TeachingRun,
    patternId: string,
    startedAt: Date,
  ): TaughtAnswer {
    const solution = run.phases.find((p) => p.phase === "solution");
    const content = run.solution.text;
    const usage = {
      prompt_tokens: solution?.promptTokens ?? 0,
      completion_tokens: solution?.completionTokens ?? 0,
      total_tokens: (solution?.promptTokens ?? 0) + (solution?.completionTokens ?? 0),
    };
    const finishReason = solution?.finishReason === "length" ? "length" : "stop";
    const base = gatewayTrace({
      body: request,
      choice,
      startedAt,
      endedAt: new Date(),
      status: 200,
      summary: {
        content,
        toolCalls: [],
        finishReason,
        usage: { promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens },
      },
      userId: context.userId,
      sessionId: context.sessionId,
      env: context.env,
    });
    const steps = toTraceSteps(run, { idPrefix: `${base.id}-teach` }).map((step) =>
      step.kind === "llm" && step.llm && (step.metadata?.teaching as { role?: string })?.role === "student"
        ? { ...step, llm: { ...step.llm, modelServed: choice.model.name, modelVersion: choice.model.id } }
        : step,
    );
    const trace: Trace = {
      ...base,
      steps,
      metadata: {
        ...base.metadata,
        teaching: {
          patternId,
          mode: run.mode,
          judgement: run.judgement,
          teachingTokens: run.teachingTokens,
          baseline: run.baseline !== undefined,
          ...(run.outcome ? { outcome: run.outcome } : {}),
        },
      },
    };
    const body = {
      id: `chatcmpl-teach-${randomUUID()}`,
      object: "chat.completion",
      created: Math.floor(startedAt.getTime() / 1000),
      model: choice.model.name,
      choices: [
        {
          index: 0,
          message: { role: "assistant", content, refusal: null },
          finish_reason: finishReason,
          logprobs: solution?.logprobs ?? null,
        },
      ],
      usage,
    };
    const answer = jsonAnswer(200, body, {
      "x-arc-model-version": choice.model.id,
      "x-arc-teaching": `mode=${run.mode}; judgement=${run.judgement}; pattern=${patternId}; teaching-tokens=${run.teachingTokens}`,
    });
    return { answer, trace };
  }
}
