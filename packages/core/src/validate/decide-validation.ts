import { InvalidInputError } from "../errors/index.ts";
import { wilsonInterval } from "../teach/ndr-monitor/wilson-interval.ts";
import { type PairedWorseTest, pairedWorseTest } from "./binomial-test.ts";
import { holmBonferroni } from "./holm-bonferroni.ts";
import { nonDegradationRate } from "./non-degradation-rate.ts";
import type { SafetyCheck } from "./safety-slice.ts";
import { ValidationGates, type ValidationGatesInput } from "./validation-gates.ts";

/** How one model did on one item. */
export interface ModelOutcome {
  pass: boolean;
  latencyMs: number;
  outputTokens: number;
  /** Why it failed (verifier or safety judgement), for the report. */
  reason?: string;
  /** The model turns its episode took, for an item judged as a whole episode (`ValidationItem.episode`). */
  turns?: number;
}

/** One eval item answered by both the current model (baseline) and the candidate. */
export interface ValidationItem {
  id: string;
  /** A pattern id, `general`, `general-knowledge` or `safety`. */
  slice: string;
  /**
   * `pattern` and `general`: the tenant's EvalSet (its failure patterns and its general traffic); `knowledge`: the
   * general slice of prompts unrelated to the agent's task (capability retention); `safety`: the safety slice.
   */
  kind: "pattern" | "general" | "knowledge" | "safety";
  safetyCheck?: SafetyCheck;
  /**
   * What judged both answers: `verifier:<env>` (the task family's verifier), `judge:<model>` (the tenant's judge, on
   * a row no verifier can judge) or `safety:<check>`.
   */
  judgedBy: string;
  /**
   * True for a row of a multi-turn family: each model played the whole episode in the family's session (every
   * turn answered, the session's observations fed back) and the verifier judged all its turns, not one answer.
   */
  episode?: boolean;
  baseline: ModelOutcome;
  candidate: ModelOutcome;
  /** Which answer a judge preferred when it compared the two side by side (pairwise); the win rate counts this. */
  preference?: "candidate" | "baseline" | "tie";
}

/** One slice's figures and its paired "candidate is worse" test. */
export interface SliceReport {
  slice: string;
  kind: ValidationItem["kind"];
  n: number;
  baselineFailureRate: number;
  candidateFailureRate: number;
  /** What judged its items (`verifier:<env>`, `safety:<check>`), with how many each. */
  judgedBy: Record<string, number>;
  /** 95% Wilson interval of the candidate's failure rate. */
  candidateFailureInterval: { lower: number; upper: number };
  /**
   * The paired test; for pattern and general slices `worse` is decided by Holm–Bonferroni across those slices (so
   * many slices do not make one unlucky one likely), with `threshold` the level its p-value was compared with.
   */
  test: PairedWorseTest & { threshold: number };
}

/** One gate, whether it held, and the figures that decided it. */
export interface GateCheck {
  gate: "functional" | "ndr" | "slices" | "general_ndr" | "safety" | "win_rate";
  passed: boolean;
  detail: string;
}

/** Everything a validation found, and the decision. */
export interface ValidationReport {
  decision: "pass" | "fail";
  /** Eval rows no verifier could judge (reference-free, or of no family with a verifier): left out of the decision. */
  unjudged?: number;
  /** The failed gates' details when it fails; every gate's detail when it passes. */
  reasons: string[];
  checks: GateCheck[];
  gates: ValidationGates;
  scores: {
    /** Candidate pass rate on the pattern and general slices. */
    functional: number;
    baselineFunctional: number;
    /** Share of pattern+general items where the candidate is not worse than the baseline. */
    ndr: number;
    /** Pass-rate change on the general (regression) slice, candidate minus baseline; null without one. */
    regression: number | null;
    safety: { total: number; passed: number; leaks: number; newFailures: number };
    /**
     * The general slice (capability retention): its items, those the current model answers right (`counted`, the
     * only ones that count), those of them the candidate also answers right (`kept`), and kept / counted (`ndr`,
     * null when none count); absent from reports stored without it.
     */
    general?: { total: number; counted: number; kept: number; ndr: number | null };
    /**
     * On the items a judge decided (`judge:<model>`): the candidate's wins, losses and ties against the current
     * model, the win rate (wins + ties / 2) / n and its 95% Wilson interval; null when a judge decided none.
     */
    winRate: {
      n: number;
      wins: number;
      losses: number;
      ties: number;
      rate: number;
      interval: { lower: number; upper: number };
    } | null;
    /**
     * The items judged as whole episodes of a multi-turn family (`ValidationItem.episode`), with the mean model turns
     * each model's episodes took; null when there were none; absent from reports stored without it.
     */
    episodes?: { n: number; baselineMeanTurns: number; candidateMeanTurns: number } | null;
    latency: { baselineMeanMs: number; candidateMeanMs: number; candidateP50Ms: number };
    tokens: { baselineMean: number; candidateMean: number };
  };
  slices: SliceReport[];
}

function mean(xs: number[]): number {
  return xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length;
}

function median(xs: number[]): number {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

function passRate(items: readonly ValidationItem[], who: "baseline" | "candidate"): number {
  return items.length === 0 ? 0 : items.filter((i) => i[who].pass).length / items.length;
}

function sliceReport(slice: string, items: ValidationItem[], alpha: number): SliceReport {
  const regressions = items.filter((i) => i.baseline.pass && !i.candidate.pass).length;
  const improvements = items.filter((i) => !i.baseline.pass && i.candidate.pass).length;
  const failures = items.filter((i) => !i.candidate.pass).length;
  return {
    slice,
    kind: items[0].kind,
    n: items.length,
    baselineFailureRate: 1 - passRate(items, "baseline"),
    candidateFailureRate: failures / items.length,
    judgedBy: Object.fromEntries(
      [...new Set(items.map((i) => i.judgedBy))].map((judge) => [
        judge,
        items.filter((i) => i.judgedBy === judge).length,
      ]),
    ),
    candidateFailureInterval: wilsonInterval(failures, items.length),
    test: { ...pairedWorseTest(regressions, improvements, alpha), threshold: alpha },
  };
}

/** The item kinds of the tenant's EvalSet: the functional, NDR and per-slice gates read these. */
const isEvalKind = (kind: ValidationItem["kind"]) => kind === "pattern" || kind === "general";

/**
 * Fewest general-slice items the current model must answer right for `minGeneralNdr` to decide: with fewer (a small
 * base that knows little) one lost item would swing the rate by over 10 points, so the gate passes with a note.
 */
export const MIN_COUNTED_GENERAL_ITEMS = 10;

/** Decides `worse` for the pattern and general slices together with Holm–Bonferroni at family-wise level alpha. */
function correctForSlices(slices: SliceReport[], alpha: number): void {
  const tested = slices.filter((s) => isEvalKind(s.kind));
  const decisions = holmBonferroni(
    tested.map((s) => s.test.pValue),
    alpha,
  );
  tested.forEach((s, i) => {
    s.test.worse = decisions[i].rejected;
    s.test.threshold = decisions[i].threshold;
  });
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

/** The candidate's win rate over the baseline on the items a judge decided; null when there are none. */
function judgedWinRate(items: readonly ValidationItem[]): ValidationReport["scores"]["winRate"] {
  const judged = items.filter((i) => i.judgedBy.startsWith("judge:"));
  if (judged.length === 0) return null;
  const preferred = (i: ValidationItem) =>
    i.preference ??
    (i.candidate.pass === i.baseline.pass ? "tie" : i.candidate.pass ? "candidate" : "baseline");
  const wins = judged.filter((i) => preferred(i) === "candidate").length;
  const losses = judged.filter((i) => preferred(i) === "baseline").length;
  const ties = judged.length - wins - losses;
  const score = wins + ties / 2;
  return {
    n: judged.length,
    wins,
    losses,
    ties,
    rate: score / judged.length,
    interval: wilsonInterval(score, judged.length),
  };
}

/**
 * The capability-retention gate: of the general-slice items the current model answers right, the share the candidate
 * also answers right, against `minGeneralNdr`; passes with a note when fewer than `MIN_COUNTED_GENERAL_ITEMS` count.
 */
function generalNdrCheck(
  general: NonNullable<ValidationReport["scores"]["general"]>,
  minGeneralNdr: number,
): GateCheck {
  const of = `the ${general.counted} of ${general.total} general-slice items the current model answers right`;
  if (general.counted < MIN_COUNTED_GENERAL_ITEMS) {
    return {
      gate: "general_ndr",
      passed: true,
      detail: `general NDR not gated: only ${of} count, fewer than ${MIN_COUNTED_GENERAL_ITEMS}${general.ndr === null ? "" : ` (the candidate kept ${general.kept})`}`,
    };
  }
  const ndr = general.ndr ?? 1;
  return {
    gate: "general_ndr",
    passed: ndr >= minGeneralNdr,
    detail: `general NDR ${pct(ndr)} ${ndr >= minGeneralNdr ? ">=" : "<"} ${pct(minGeneralNdr)} (the candidate kept ${general.kept} of ${of})`,
  };
}

/** Every slice's report, sorted by name, with `worse` decided across the pattern and general slices. */
function sliceReports(items: readonly ValidationItem[], alpha: number): SliceReport[] {
  const bySlice = new Map<string, ValidationItem[]>();
  for (const item of items) bySlice.set(item.slice, [...(bySlice.get(item.slice) ?? []), item]);
  const slices = [...bySlice.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([slice, sliceItems]) => sliceReport(slice, sliceItems, alpha));
  correctForSlices(slices, alpha);
  return slices;
}

/** The items judged as whole episodes and each model's mean turns in them; null when there are none. */
function episodeTurns(functionalItems: readonly ValidationItem[]): ValidationReport["scores"]["episodes"] {
  const episodeItems = functionalItems.filter((i) => i.episode);
  if (episodeItems.length === 0) return null;
  return {
    n: episodeItems.length,
    baselineMeanTurns: mean(episodeItems.map((i) => i.baseline.turns ?? 1)),
    candidateMeanTurns: mean(episodeItems.map((i) => i.candidate.turns ?? 1)),
  };
}

/** The general slice's retention: the items the current model answers right, and those the candidate keeps. */
function generalRetention(
  knowledgeItems: readonly ValidationItem[],
): NonNullable<ValidationReport["scores"]["general"]> {
  const counted = knowledgeItems.filter((i) => i.baseline.pass);
  const kept = counted.filter((i) => i.candidate.pass).length;
  return {
    total: knowledgeItems.length,
    counted: counted.length,
    kept,
    ndr: counted.length === 0 ? null : kept / counted.length,
  };
}

/** The safety slice's figures: items, those passed, leaks and the items the current model passes that now fail. */
function safetyFigures(safetyItems: readonly ValidationItem[]): ValidationReport["scores"]["safety"] {
  return {
    total: safetyItems.length,
    passed: safetyItems.filter((i) => i.candidate.pass).length,
    leaks: safetyItems.filter((i) => i.safetyCheck === "must_not_leak" && !i.candidate.pass).length,
    newFailures: safetyItems.filter((i) => i.baseline.pass && !i.candidate.pass).length,
  };
}

/** The candidate's pass rate on the EvalSet's items against `minFunctional`. */
function functionalCheck(
  functionalItems: readonly ValidationItem[],
  functional: number,
  minFunctional: number,
  episodes: ValidationReport["scores"]["episodes"],
): GateCheck {
  const judgedAs = episodes
    ? `; ${episodes.n} of ${functionalItems.length} items judged as whole episodes in their family's session`
    : "";
  return {
    gate: "functional",
    passed: functional >= minFunctional,
    detail: `functional pass rate ${pct(functional)} (current model ${pct(passRate(functionalItems, "baseline"))}) ${functional >= minFunctional ? ">=" : "<"} ${pct(minFunctional)}${judgedAs}`,
  };
}

/** The share of the EvalSet's items where the candidate is not worse, against `minNdr`. */
function ndrCheck(functionalItems: readonly ValidationItem[], ndr: number, minNdr: number): GateCheck {
  const regressed = functionalItems.filter((i) => i.baseline.pass && !i.candidate.pass).length;
  return {
    gate: "ndr",
    passed: ndr >= minNdr,
    detail: `NDR ${pct(ndr)} ${ndr >= minNdr ? ">=" : "<"} ${pct(minNdr)} (${regressed} of ${functionalItems.length} items regressed)`,
  };
}

/** No pattern or general slice significantly worse; the worse ones named with their figures. */
function slicesCheck(slices: readonly SliceReport[], alpha: number): GateCheck {
  const worse = slices.filter((s) => isEvalKind(s.kind) && s.test.worse);
  return {
    gate: "slices",
    passed: worse.length === 0,
    detail:
      worse.length === 0
        ? `no slice significantly worse (McNemar one-sided, Holm–Bonferroni over ${slices.filter((s) => isEvalKind(s.kind)).length} slices, alpha ${alpha})`
        : worse
            .map(
              (s) =>
                `slice ${s.slice} significantly worse: failure rate ${pct(s.baselineFailureRate)} -> ${pct(s.candidateFailureRate)}, ${s.test.regressions} regressions vs ${s.test.improvements} improvements, p=${s.test.pValue.toPrecision(2)} < ${s.test.threshold.toPrecision(2)} (Holm–Bonferroni, alpha ${alpha})`,
            )
            .join("; "),
  };
}

/** The safety gate: `strict` wants every safety item passed, `clean` no leak and no new safety failure. */
function safetyCheck(safety: ValidationReport["scores"]["safety"], mode: "clean" | "strict"): GateCheck {
  const clean =
    mode === "strict" ? safety.passed === safety.total : safety.leaks === 0 && safety.newFailures === 0;
  return {
    gate: "safety",
    passed: clean,
    detail: `safety ${safety.passed}/${safety.total} passed, ${safety.leaks} leaks, ${safety.newFailures} items the current model passes now fail (${mode})`,
  };
}

/** The judged win rate's lower 95% bound against `minWinRate`. */
function winRateCheck(
  winRate: NonNullable<ValidationReport["scores"]["winRate"]>,
  minWinRate: number,
): GateCheck {
  return {
    gate: "win_rate",
    passed: winRate.interval.lower >= minWinRate,
    detail: `win rate ${pct(winRate.rate)} over the current model on ${winRate.n} judged items (${winRate.wins} won, ${winRate.losses} lost, ${winRate.ties} tied; 95% interval ${pct(winRate.interval.lower)}-${pct(winRate.interval.upper)}), lower bound ${winRate.interval.lower >= minWinRate ? ">=" : "<"} ${pct(minWinRate)}`,
  };
}

/** Each model's mean latency and output tokens over every item, and the candidate's median latency. */
function costFigures(
  items: readonly ValidationItem[],
): Pick<ValidationReport["scores"], "latency" | "tokens"> {
  const latencies = (who: "baseline" | "candidate") => items.map((i) => i[who].latencyMs);
  return {
    latency: {
      baselineMeanMs: mean(latencies("baseline")),
      candidateMeanMs: mean(latencies("candidate")),
      candidateP50Ms: median(latencies("candidate")),
    },
    tokens: {
      baselineMean: mean(items.map((i) => i.baseline.outputTokens)),
      candidateMean: mean(items.map((i) => i.candidate.outputTokens)),
    },
  };
}

/**
 * Judges a candidate against the current model on paired outcomes with a tenant's gates: functional pass rate,
 * NDR, no slice significantly worse (McNemar exact test per slice, so three unlucky items in a slice of twenty do
 * not block a release but a real regression does; Holm–Bonferroni across the slices keeps the chance that any
 * slice is wrongly called worse at alpha however many patterns there are), capability retention on the general slice
 * (`knowledge` items, kept apart from the EvalSet's figures), and the safety slice. Pure: the server runs the models.
 */
export function decideValidation(
  items: readonly ValidationItem[],
  gatesInput: ValidationGatesInput = {},
): ValidationReport {
  const gates = ValidationGates.parse(gatesInput);
  const functionalItems = items.filter((i) => isEvalKind(i.kind));
  if (functionalItems.length === 0) {
    throw new InvalidInputError(
      "items: expected at least one pattern or general item to validate on, got none",
      {
        field: "items",
      },
    );
  }
  const slices = sliceReports(items, gates.alpha);
  const functional = passRate(functionalItems, "candidate");
  const ndr = nonDegradationRate(
    functionalItems.map((i) => ({ baseline: Number(i.baseline.pass), candidate: Number(i.candidate.pass) })),
  );
  const generalTraffic = functionalItems.filter((i) => i.kind === "general");
  const general = generalRetention(items.filter((i) => i.kind === "knowledge"));
  const safety = safetyFigures(items.filter((i) => i.kind === "safety"));
  const episodes = episodeTurns(functionalItems);
  const winRate = judgedWinRate(functionalItems);

  const checks: GateCheck[] = [
    functionalCheck(functionalItems, functional, gates.minFunctional, episodes),
    ndrCheck(functionalItems, ndr, gates.minNdr),
    slicesCheck(slices, gates.alpha),
  ];
  if (general.total > 0) checks.push(generalNdrCheck(general, gates.minGeneralNdr));
  if (gates.safety !== "off") checks.push(safetyCheck(safety, gates.safety));
  if (winRate) checks.push(winRateCheck(winRate, gates.minWinRate));
  const failed = checks.filter((c) => !c.passed);
  return {
    decision: failed.length === 0 ? "pass" : "fail",
    reasons: (failed.length === 0 ? checks : failed).map((c) => c.detail),
    checks,
    gates,
    scores: {
      functional,
      baselineFunctional: passRate(functionalItems, "baseline"),
      ndr,
      regression:
        generalTraffic.length === 0
          ? null
          : passRate(generalTraffic, "candidate") - passRate(generalTraffic, "baseline"),
      general,
      safety,
      winRate,
      episodes,
      ...costFigures(items),
    },
    slices,
  };
}
