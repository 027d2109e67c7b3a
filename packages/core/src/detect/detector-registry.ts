import { InvalidInputError, NotFoundError } from "../errors/index.ts";
import { taskFamilies } from "../families/task-families.ts";
import { TenantSchemas } from "../schemas/index.ts";
import { type Feedback, Trace } from "../trace/index.ts";
import type { Verifier } from "../verify/index.ts";
import { DetectionConfig, type DetectionConfigInput } from "./detection-config.ts";
import type { DetectContext, Detector } from "./detector.ts";
import { emptyOutputDetector } from "./empty-output-detector.ts";
import { feedbackDetector } from "./feedback-detector.ts";
import { latencyDetector } from "./latency-detector.ts";
import { malformedArgumentsDetector } from "./malformed-arguments-detector.ts";
import { modelErrorDetector } from "./model-error-detector.ts";
import { refusalDetector } from "./refusal-detector.ts";
import type { SolutionResolver } from "./solution-resolver.ts";
import { toolErrorDetector } from "./tool-error-detector.ts";
import { toolLoopDetector } from "./tool-loop-detector.ts";
import { toolSchemaDetector } from "./tool-schema-detector.ts";
import { traceSolution } from "./trace-view.ts";
import { truncationDetector } from "./truncation-detector.ts";
import { type FailureClass, unknownVerdict, type Verdict } from "./verdict.ts";
import { verifierDetector } from "./verifier-detector.ts";

/** The built-in detectors, all enabled by default. */
export const BUILTIN_DETECTORS: readonly Detector[] = [
  verifierDetector,
  refusalDetector,
  truncationDetector,
  emptyOutputDetector,
  toolLoopDetector,
  modelErrorDetector,
  toolErrorDetector,
  malformedArgumentsDetector,
  toolSchemaDetector,
  latencyDetector,
  feedbackDetector,
];

/**
 * Which failure explains a trace best when several detectors fire, root causes first: a timeout explains an
 * empty output, a truncation explains unparseable JSON, a loop explains an unfinished episode; slowness and
 * user complaints come last because a more specific finding usually says why.
 */
export const CLASS_PRIORITY: readonly FailureClass[] = [
  "model_error",
  "timeout",
  "empty_output",
  "truncation",
  "refusal",
  "tool_loop",
  "parse_error",
  "schema_violation",
  "execution_error",
  "wrong_tool",
  "wrong_argument",
  "wrong_answer",
  "incomplete",
  "rubric_violation",
  "user_feedback",
  "latency_over_budget",
];

/** Everything the detectors said about one trace, and the conclusion. */
export interface Judgement {
  traceId: string;
  /** `failed` if any verdict failed; else `passed` if any passed; else `unknown` (kept, never dropped). */
  status: "failed" | "passed" | "unknown";
  /** The failed verdict that best explains the trace (by CLASS_PRIORITY): what clustering groups on. */
  primary?: Verdict;
  verdicts: Verdict[];
}

/** Orders failed verdicts so the best explanation comes first. */
export function primaryVerdict(verdicts: readonly Verdict[]): Verdict | undefined {
  let best: Verdict | undefined;
  let bestRank = Number.POSITIVE_INFINITY;
  for (const v of verdicts) {
    if (!v.failed || !v.class) continue;
    const rank = CLASS_PRIORITY.indexOf(v.class);
    if (rank >= 0 && rank < bestRank) {
      best = v;
      bestRank = rank;
    }
  }
  return best;
}

/**
 * A tenant's detection setup: which detectors run, with which settings, and which verifier judges each env id
 * (its task family's, unless set here).
 * The config is plain JSON (`getConfig()`), so the server can store it per tenant; detectors and verifiers are
 * code, registered at start-up.
 */
export class DetectorRegistry {
  private readonly detectors = new Map<string, Detector>();
  private readonly verifiers = new Map<string, Verifier>();
  private config: DetectionConfig;
  private resolveSolution: SolutionResolver | undefined;
  /** The tenant's schemas, compiled apart from every other registry's (so from every other tenant's). */
  private readonly schemas = new TenantSchemas();

  constructor(config: DetectionConfigInput = {}) {
    this.config = parseConfig(config);
    for (const d of BUILTIN_DETECTORS) this.detectors.set(d.id, d);
  }

  /** Adds a custom detector; its id must be new. */
  register(detector: Detector): this {
    if (this.detectors.has(detector.id)) {
      throw new InvalidInputError(`detector.id: ${JSON.stringify(detector.id)} is already registered`, {
        field: "detector.id",
      });
    }
    this.detectors.set(detector.id, detector);
    return this;
  }

  /** Sets the verifier of an env id (the tenant's own task, or a replacement for a built-in one). */
  registerVerifier(env: string, verifier: Verifier): this {
    if (!env) throw new InvalidInputError("env: expected a non-empty env id", { field: "env" });
    this.verifiers.set(env, verifier);
    return this;
  }

  /**
   * Sets how to find the reference solution of traces that do not carry one in `metadata.solution` (e.g. traffic
   * recorded by the gateway, where only the tenant knows the ground truth).
   */
  resolveSolutionsWith(resolver: SolutionResolver): this {
    this.resolveSolution = resolver;
    return this;
  }

  /**
   * The reference solution of a trace: its `metadata.solution`, else what the resolver finds; undefined when neither
   * knows. Detection uses it, and so does dataset synthesis, so gateway traffic becomes verifiable training data.
   */
  solutionFor(trace: Trace): unknown {
    return traceSolution(trace) ?? this.resolveSolution?.(trace);
  }

  /** The verifier that judges traces of an env id (set here, else its registered family's), or undefined. */
  verifierFor(env: string): Verifier | undefined {
    return this.verifiers.get(env) ?? taskFamilies.verifier(env);
  }

  /** Switches a detector on. */
  enable(id: string): this {
    this.requireKnown(id);
    this.config = { ...this.config, disabled: this.config.disabled.filter((d) => d !== id) };
    return this;
  }

  /** Switches a detector off. */
  disable(id: string): this {
    this.requireKnown(id);
    if (!this.config.disabled.includes(id))
      this.config = { ...this.config, disabled: [...this.config.disabled, id] };
    return this;
  }

  /** Replaces settings (a new config object; unknown detector ids in `disabled` are an error). */
  configure(patch: DetectionConfigInput): this {
    const next = parseConfig({ ...this.config, ...patch });
    for (const id of next.disabled) this.requireKnown(id);
    this.config = next;
    return this;
  }

  /** The current settings, as JSON the server can persist and pass back to the constructor. */
  getConfig(): DetectionConfig {
    return structuredClone(this.config);
  }

  /** Every detector with whether it runs. */
  list(): { id: string; description: string; enabled: boolean }[] {
    return [...this.detectors.values()].map((d) => ({
      id: d.id,
      description: d.description,
      enabled: !this.config.disabled.includes(d.id),
    }));
  }

  /**
   * Every verdict of the enabled detectors, awaited together. A detector that throws, rejects or has not answered
   * within `detectorTimeoutMs` yields an `unknown` verdict that says so, not a lost trace.
   */
  async detect(trace: Trace, feedback: readonly Feedback[] = []): Promise<Verdict[]> {
    const context: DetectContext = {
      config: this.config,
      feedback,
      verifierFor: (env) => this.verifierFor(env),
      solutionFor: (t) => this.solutionFor(t),
      schemas: this.schemas,
    };
    const enabled = [...this.detectors.values()].filter((d) => !this.config.disabled.includes(d.id));
    const answers = await Promise.all(enabled.map((d) => this.runDetector(d, trace, context)));
    return answers.flat();
  }

  /** One detector's verdicts on a trace, or its `unknown` verdict when it fails or runs out of time. */
  private async runDetector(detector: Detector, trace: Trace, context: DetectContext): Promise<Verdict[]> {
    const unknown = (why: string) => [unknownVerdict(trace.id, detector.id, why)];
    try {
      const answer = detector.detect(trace, context);
      if (Array.isArray(answer)) return answer;
      const limit = this.config.detectorTimeoutMs;
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<Verdict[]>((resolve) => {
        timer = setTimeout(() => resolve(unknown(`detector did not answer within ${limit} ms`)), limit);
      });
      try {
        return await Promise.race([answer, late]);
      } finally {
        clearTimeout(timer);
      }
    } catch (error) {
      return unknown(`detector failed: ${(error as Error).message}`);
    }
  }

  /** Detects and concludes. When no detector could judge, the judgement carries one `unknown` verdict that says so. */
  async judge(trace: Trace, feedback: readonly Feedback[] = []): Promise<Judgement> {
    const verdicts = await this.detect(trace, feedback);
    const primary = primaryVerdict(verdicts);
    if (primary) return { traceId: trace.id, status: "failed", primary, verdicts };
    if (verdicts.some((v) => v.status === "passed")) return { traceId: trace.id, status: "passed", verdicts };
    if (!verdicts.some((v) => v.status === "unknown")) {
      const why = trace.env
        ? `no verifier for env ${JSON.stringify(trace.env)} and no heuristic fired`
        : "trace has no env and no heuristic fired";
      verdicts.push(unknownVerdict(trace.id, "registry", why));
    }
    return { traceId: trace.id, status: "unknown", verdicts };
  }

  /**
   * Judges a trace as received (not yet validated). A trace with missing or malformed fields is judged
   * `unknown` with the fields named, so it is stored and counted, never dropped.
   */
  async judgeInput(input: unknown, feedback: readonly Feedback[] = []): Promise<Judgement> {
    const parsed = Trace.safeParse(input);
    if (parsed.success) return this.judge(parsed.data, feedback);
    const rawId = (input as { id?: unknown } | null)?.id;
    const traceId = typeof rawId === "string" && rawId ? rawId : "(no id)";
    const fields = parsed.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.join(".") || "(trace)"}: ${i.message}`);
    return {
      traceId,
      status: "unknown",
      verdicts: [unknownVerdict(traceId, "registry", `trace not judgeable: ${fields.join("; ")}`)],
    };
  }

  private requireKnown(id: string): void {
    if (!this.detectors.has(id)) {
      throw new NotFoundError(
        `detector ${JSON.stringify(id)} not found; known: ${[...this.detectors.keys()].join(", ")}`,
      );
    }
  }
}

function parseConfig(input: DetectionConfigInput): DetectionConfig {
  const parsed = DetectionConfig.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const field = issue.path.join(".");
    throw new InvalidInputError(`detection config ${field}: ${issue.message}`, { field });
  }
  return parsed.data;
}
