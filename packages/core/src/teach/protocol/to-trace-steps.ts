import type { Step } from "../../trace/index.ts";
import type { TeachingRun } from "./run-teaching.ts";

/**
 * Turns a teaching run into trace steps (kind `llm`, one per phase, named `teach.<phase>`), so the
 * protocol's calls are stored, detected and exported like any other LLM call. Step ids are
 * `<idPrefix>.<phase>`; `metadata.teaching` carries the phase, role, mode, judgement and warnings.
 */
export function toTraceSteps(run: TeachingRun, options: { idPrefix: string; parentId?: string }): Step[] {
  return run.phases.map((record): Step => {
    const endedAt = new Date(Date.parse(record.startedAt) + record.latencyMs).toISOString();
    const warnings = run.warnings
      .filter((w) => w.phase === record.phase)
      .map(({ kind, message }) => ({ kind, message }));
    return {
      id: `${options.idPrefix}.${record.phase}`,
      kind: "llm",
      name: `teach.${record.phase}`,
      ...(options.parentId === undefined ? {} : { parentId: options.parentId }),
      startedAt: record.startedAt,
      endedAt,
      latencyMs: record.latencyMs,
      llm: {
        ...(record.model === undefined ? {} : { modelRequested: record.model }),
        messages: record.messages.map(({ role, content }) => ({ role, content })),
        params: { max_tokens: record.maxTokens, temperature: record.temperature },
        output: { content: record.output },
        ...(record.finishReason === undefined ? {} : { finishReason: record.finishReason }),
        usage: {
          promptTokens: record.promptTokens,
          completionTokens: record.completionTokens,
          totalTokens: record.promptTokens + record.completionTokens,
        },
      },
      metadata: {
        teaching: {
          phase: record.phase,
          role: record.role,
          mode: run.mode,
          judgement: run.judgement,
          ...(record.phase === "teaching" ? { teachingTokens: run.teachingTokens } : {}),
          warnings,
        },
      },
    };
  });
}
