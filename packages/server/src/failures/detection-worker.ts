import {
  type ClusterState,
  type DetectorRegistry,
  FailureClusterer,
  type FailureRecord,
  type Feedback,
  failureRecord,
  JUDGE_DETECTOR_ID,
  type Judgement,
  Trace,
  traceModelVersion,
  unknownVerdict,
} from "@arc/core";
import type { JudgeUpstreams } from "../judges/tenant-judge.ts";
import { timeSlicer } from "../scheduling/time-slicer.ts";
import type { Database } from "../store/database.ts";
import { isolateFailures } from "../store/isolate-failures.ts";
import { getTraces } from "../store/trace-store.ts";
import { loadClusterState, lockClusterState, saveClusterState } from "./cluster-state-store.ts";
import {
  claimDueTraces,
  completeClaims,
  type DetectionClaim,
  deadLetterClaims,
  hasDueTraces,
  releaseClaims,
  requeueLater,
} from "./detection-queue.ts";
import {
  type FailurePipelineConfig,
  type FailurePipelineConfigInput,
  parseFailurePipelineConfig,
  type RegistrySetup,
} from "./failure-pipeline-config.ts";
import { assignedPatterns, insertFailures } from "./failure-store.ts";
import { savePatterns } from "./pattern-store.ts";
import { tenantRegistry } from "./tenant-registry.ts";
import { type NewVerdict, upsertVerdicts } from "./verdict-store.ts";

/**
 * How long judging runs before it pauses, so requests are answered in between: a gateway call that arrives during a
 * slice waits for the rest of it, so the slice is short (a pause costs one turn of the event loop). One trace's
 * judging is bounded on its own (a tenant's schemas and patterns run within SCHEMA_BOUNDS), so a slice ends at most
 * one bounded trace past this.
 */
const SLICE_MS = 2;

/** What one pass of the worker did. */
export interface DetectionPass {
  /** Traces judged (and, if failed for the first time, clustered). */
  judged: number;
  /** Failures that joined a pattern in this pass. */
  assigned: number;
  /** Claims given back after an error (tried again on a later pass). */
  released: number;
}

/** How a worker runs; every field is optional. */
export interface DetectionWorkerOptions {
  /** Scheduling settings (quiet period, batch, poll, lease, attempts); omitted ones take their defaults. */
  config?: FailurePipelineConfigInput;
  /** The tenants' own detectors, verifiers and solution resolvers. */
  setupRegistry?: RegistrySetup;
  /** The upstreams tenants' judges may run on (the server's allowlist); without them no judge runs. */
  judgeUpstreams?: JudgeUpstreams;
  /** How long a trace the judge could not judge waits at least before it is judged again, at most twice that (default one minute). */
  judgeRetryMs?: number;
  /** Where pass errors go (default: console.error); the worker keeps going after one. */
  onError?: (error: unknown) => void;
  /** Whether the process is answering requests now; while it is, passes take at most `busyShare` of the time. */
  busy?: () => boolean;
}

/** A judged trace before it is written: the judgement, and the failure record if it failed and could be read. */
interface Judged {
  claim: DetectionClaim;
  judgement: Judgement;
  record: FailureRecord | null;
  modelVersion: string | null;
}

/**
 * Judges ingested traces asynchronously: ingest only queues them (a trigger, in the ingest transaction); this worker
 * claims traces that have been quiet for `quietMs` (`FOR UPDATE SKIP LOCKED`, so several `arc serve` processes can
 * share one PostgreSQL server), judges them outside any transaction, then in one transaction per tenant — holding
 * that tenant's clusterer lock — assigns each first-time failure to its pattern, writes the verdicts (one row per
 * trace), the memberships, the patterns projection and the clusterer state, and removes the claims. A trace queued
 * again meanwhile (late steps, feedback) stays queued and is judged again; it keeps the pattern it first joined.
 * A trace that breaks its batch is judged apart from it, and one that keeps breaking the worker is moved aside (a
 * dead letter, see `deadLetteredDetections`) rather than tried forever.
 */
export class DetectionWorker {
  private readonly clusterers = new Map<string, { version: number; clusterer: FailureClusterer }>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;

  private readonly config: FailurePipelineConfig;
  private readonly setup: RegistrySetup | undefined;
  private readonly judgeUpstreams: JudgeUpstreams | undefined;
  private readonly judgeRetryMs: number;
  private readonly onError: (error: unknown) => void;
  private readonly busy: () => boolean;

  constructor(
    private readonly db: Database,
    options: DetectionWorkerOptions = {},
  ) {
    this.config = parseFailurePipelineConfig(options.config ?? {});
    this.setup = options.setupRegistry;
    this.judgeUpstreams = options.judgeUpstreams;
    this.judgeRetryMs = options.judgeRetryMs ?? 60_000;
    this.onError = options.onError ?? ((error) => console.error("detection worker:", error));
    this.busy = options.busy ?? (() => false);
  }

  /** Claims and judges one batch of due traces; resolves to what it did. Safe to call while started. */
  async runOnce(): Promise<DetectionPass> {
    const pass: DetectionPass = { judged: 0, assigned: 0, released: 0 };
    if (!(await hasDueTraces(this.db, this.config.quietMs))) return pass;
    const claims = await claimDueTraces(this.db, {
      quietMs: this.config.quietMs,
      limit: this.config.batchSize,
      leaseMs: this.config.leaseMs,
    });
    const byTenant = new Map<string, DetectionClaim[]>();
    for (const c of claims) byTenant.set(c.tenantId, [...(byTenant.get(c.tenantId) ?? []), c]);
    // Tenants are judged side by side, so one whose detectors are slow (a judge model) does not hold back the others.
    await Promise.all(
      [...byTenant].map(([tenantId, tenantClaims]) => this.runTenant(tenantId, tenantClaims, pass)),
    );
    return pass;
  }

  /** Settles one tenant's claims of a pass: moves aside the exhausted ones, judges and writes the rest. */
  private async runTenant(
    tenantId: string,
    tenantClaims: DetectionClaim[],
    pass: DetectionPass,
  ): Promise<void> {
    const exhausted = tenantClaims.filter((c) => c.attempts > this.config.maxAttempts);
    const live = tenantClaims.filter((c) => c.attempts <= this.config.maxAttempts);
    // A trace whose worker kept stopping while judging it is moved aside unread: reading it may stop this one.
    for (const claim of exhausted.filter((c) => c.abandoned)) {
      await this.deadLetter(
        claim,
        new Error(
          `its judging did not finish in ${claim.attempts - 1} attempts, the last one abandoned when its lease ran out (the worker stopped or hung while judging it); last error: ${claim.lastError ?? "none"}`,
        ),
      );
    }
    // Traces that kept failing with the whole tenant are settled apart, so an error in the tenant's setup cannot
    // hold them forever.
    const settled = exhausted.filter((c) => !c.abandoned);
    if (settled.length > 0) {
      try {
        pass.assigned += await this.write(
          tenantId,
          settled.map((claim) => this.gaveUp(claim)),
        );
        pass.judged += settled.length;
      } catch (error) {
        await this.release(settled, error, pass);
      }
    }
    if (live.length === 0) return;
    let registry: DetectorRegistry;
    try {
      registry = await tenantRegistry(this.db, tenantId, this.setup, this.judgeUpstreams);
    } catch (error) {
      await this.release(live, error, pass);
      return;
    }
    await this.judgeApart(tenantId, live, registry, pass);
  }

  /**
   * Runs passes until `stop`: back to back while batches come full, every `pollMs` while passes find traces, and
   * while they find none, after a wait that doubles from `pollMs` up to `idlePollMs`. While the process is `busy`
   * answering requests, a pass of d ms is followed by a rest of d × (1 / `busyShare` − 1) ms, at most `idlePollMs`.
   */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    const { pollMs, idlePollMs, batchSize, busyShare } = this.config;
    let wait = pollMs;
    const loop = async () => {
      const started = performance.now();
      try {
        const { judged, released } = await this.runOnce();
        const settled = judged + released;
        wait =
          settled >= batchSize ? 0 : settled > 0 ? pollMs : Math.max(pollMs, Math.min(wait * 2, idlePollMs));
        if (settled > 0 && this.busy()) {
          const rest = (performance.now() - started) * (1 / busyShare - 1);
          wait = Math.max(wait, Math.min(rest, idlePollMs));
        }
      } catch (error) {
        this.onError(error);
        wait = pollMs;
      }
      if (!this.stopped) this.timer = setTimeout(tick, wait);
    };
    const tick = () => {
      this.running = loop();
    };
    tick();
  }

  /** Stops polling and waits for the pass under way to finish. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.running;
  }

  /**
   * Judges one tenant's claims and writes the outcome. When that fails, the halves are judged apart, down to single
   * traces, so one trace that cannot be read, judged or written does not hold back the others: a trace that fails
   * on its own is given back with its error, and moved aside (a dead letter) once it has failed `maxAttempts` times.
   */
  private judgeApart(
    tenantId: string,
    claims: DetectionClaim[],
    registry: DetectorRegistry,
    pass: DetectionPass,
  ): Promise<void> {
    return isolateFailures(
      claims,
      async (batch) => {
        const judged = await this.judgeAll(tenantId, batch, registry);
        pass.assigned += await this.write(tenantId, judged);
        pass.judged += batch.length;
      },
      (claim, error) =>
        claim.attempts >= this.config.maxAttempts
          ? this.deadLetter(claim, error)
          : this.release([claim], error, pass),
    );
  }

  /** Gives claims back with the error, to be tried again on a later pass, and reports it. */
  private async release(claims: DetectionClaim[], error: unknown, pass: DetectionPass): Promise<void> {
    await releaseClaims(this.db, claims, errorMessage(error));
    pass.released += claims.length;
    this.onError(error);
  }

  /** Moves a claim aside for good with the error that broke it, and reports it. */
  private async deadLetter(claim: DetectionClaim, error: unknown): Promise<void> {
    const message = errorMessage(error);
    await deadLetterClaims(this.db, [claim], message);
    this.onError(
      new Error(
        `trace "${claim.traceId}" of tenant ${claim.tenantId} is moved aside (a dead letter): ${message}`,
      ),
    );
  }

  /**
   * Writes judged traces in one transaction, holding the tenant's clusterer lock; returns the failures assigned.
   * When it fails, the cached clusterer (which may hold assignments that were rolled back) is dropped.
   */
  private async write(tenantId: string, judged: Judged[]): Promise<number> {
    try {
      return await this.db.transaction(async (tx) => {
        const version = await lockClusterState(tx, tenantId);
        const clusterer = await this.clustererAt(tx, tenantId, version);
        const already = await assignedPatterns(
          tx,
          tenantId,
          judged.map((j) => j.claim.traceId),
        );
        const joined: { failure: FailureRecord; patternId: string }[] = [];
        const verdicts: NewVerdict[] = judged.map((j) => {
          let patternId = already.get(j.claim.traceId) ?? null;
          if (!patternId && j.record) {
            patternId = clusterer.assign(j.record).patternId;
            joined.push({ failure: j.record, patternId });
          }
          return {
            traceId: j.claim.traceId,
            judgement: j.judgement,
            patternId,
            modelVersion: j.modelVersion,
          };
        });
        await upsertVerdicts(tx, tenantId, verdicts);
        if (joined.length > 0) {
          await insertFailures(tx, tenantId, joined);
          const state: ClusterState = clusterer.toJSON();
          await savePatterns(tx, tenantId, clusterer.patterns());
          const next = await saveClusterState(tx, tenantId, state);
          this.clusterers.set(tenantId, { version: next, clusterer });
        }
        await completeClaims(
          tx,
          tenantId,
          judged.map((j) => j.claim),
        );
        // the judge could not judge these yet (its budget, an outage, a malformed reply): they are judged again later
        const unjudged = judged.filter((j) =>
          j.judgement.verdicts.some((v) => v.detectorId === JUDGE_DETECTOR_ID && v.status === "unknown"),
        );
        await requeueLater(
          tx,
          tenantId,
          unjudged.map((j) => j.claim.traceId),
          this.judgeRetryMs,
        );
        return joined.length;
      });
    } catch (error) {
      this.clusterers.delete(tenantId);
      throw error;
    }
  }

  /** The tenant's clusterer at `version`: the cached one when no other worker has moved it on, else loaded. */
  private async clustererAt(
    tx: Parameters<typeof loadClusterState>[0],
    tenantId: string,
    version: number,
  ): Promise<FailureClusterer> {
    const cached = this.clusterers.get(tenantId);
    if (cached && cached.version === version) return cached.clusterer;
    this.clusterers.delete(tenantId);
    const state = await loadClusterState(tx, tenantId);
    const clusterer = state ? FailureClusterer.fromJSON(state) : new FailureClusterer(tenantId);
    this.clusterers.set(tenantId, { version, clusterer });
    return clusterer;
  }

  /** Judges claimed traces with their tenant's registry and the feedback known so far. */
  private async judgeAll(
    tenantId: string,
    claims: DetectionClaim[],
    registry: DetectorRegistry,
  ): Promise<Judged[]> {
    const traces = await getTraces(
      this.db,
      tenantId,
      claims.map((c) => c.traceId),
    );
    // Judging is mostly synchronous work: a slice at a time, so that the requests the process is answering are
    // served between slices; while it is answering some, judging takes at most busyShare of the time, as between
    // passes. Every judgement is started before any is awaited (a judge model's calls overlap).
    const judging: Promise<Judged>[] = [];
    const { busyShare, idlePollMs } = this.config;
    const slice = timeSlicer(SLICE_MS, (ran) =>
      this.busy() ? Math.min(ran * (1 / busyShare - 1), idlePollMs) : 0,
    );
    for (const claim of claims) {
      await slice();
      const judged = this.judgeOne(claim, traces.get(claim.traceId), registry);
      judged.catch(() => {}); // its error reaches Promise.all below; this keeps it handled across the turns
      judging.push(judged);
    }
    return Promise.all(judging);
  }

  /** The `unknown` judgement of a trace whose judging failed `maxAttempts` times: kept and counted, with the error. */
  private gaveUp(claim: DetectionClaim): Judged {
    const why = `judging failed ${claim.attempts - 1} times; last error: ${claim.lastError ?? "unknown"}`;
    return {
      claim,
      judgement: {
        traceId: claim.traceId,
        status: "unknown",
        verdicts: [unknownVerdict(claim.traceId, "worker", why)],
      },
      record: null,
      modelVersion: null,
    };
  }

  /** Judges one claimed trace with the feedback known so far. */
  private async judgeOne(
    claim: DetectionClaim,
    stored: (Trace & { feedback: Feedback[] }) | undefined,
    registry: DetectorRegistry,
  ): Promise<Judged> {
    if (!stored) throw new Error(`trace "${claim.traceId}" is queued but not stored`);
    const { feedback, ...trace } = stored;
    const parsed = Trace.safeParse(trace);
    if (!parsed.success) {
      return {
        claim,
        judgement: await registry.judgeInput(trace, feedback),
        record: null,
        modelVersion: null,
      };
    }
    const judgement = await registry.judge(parsed.data, feedback);
    return {
      claim,
      judgement,
      record: failureRecord(parsed.data, judgement),
      modelVersion: traceModelVersion(parsed.data) ?? null,
    };
  }
}

/** An error's message, or what was thrown, as text. */
function errorMessage(error: unknown): string {
  return String((error as Error)?.message ?? error);
}
