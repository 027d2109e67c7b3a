/** A verdict reduced to what calibration compares: failed or not, and the failure's class. */
export interface CalibrationVerdict {
  failed: boolean;
  /** The failure's class: the verifier's failure class for a label, the rubric class for the judge. */
  class?: string;
}

/** One trace whose label is known: the label (the verifier's verdict) and the judge's (null: it could not judge). */
export interface CalibrationItem {
  traceId: string;
  label: CalibrationVerdict;
  judged: CalibrationVerdict | null;
}

/** Precision and recall of one failure class; null where nothing was flagged, or nothing labelled, with it. */
export interface ClassCalibration {
  name: string;
  /** Traces labelled with the class, and traces the judge flagged with it. */
  labelled: number;
  flagged: number;
  precision: number | null;
  recall: number | null;
}

/** How well a judge agrees with known labels. */
export interface CalibrationReport {
  /** Labelled traces tried, those the judge judged, and those it could not (budget, outage, malformed reply). */
  items: number;
  judged: number;
  unjudged: number;
  /** Share of judged traces where the judge's failed/passed equals the label's; null when none was judged. */
  agreement: number | null;
  /**
   * Cohen's kappa of failed/passed: agreement beyond what two raters with these base rates reach by chance (1
   * perfect, 0 chance); null when undefined (none judged, or both always give one answer).
   */
  kappa: number | null;
  /** Precision and recall of the judge's "failed", whatever the class. */
  failed: { precision: number | null; recall: number | null };
  /** Per class, matched by name: a rubric class named as the verifier's class compares with it. */
  classes: ClassCalibration[];
}

const ratio = (part: number, whole: number) => (whole === 0 ? null : part / whole);

/** Agreement, Cohen's kappa and per-class precision and recall of a judge against labelled traces. */
export function calibrationReport(items: readonly CalibrationItem[]): CalibrationReport {
  const judged = items.filter(
    (i): i is CalibrationItem & { judged: CalibrationVerdict } => i.judged !== null,
  );
  const n = judged.length;
  const both = judged.filter((i) => i.label.failed && i.judged.failed).length;
  const labelFailed = judged.filter((i) => i.label.failed).length;
  const judgeFailed = judged.filter((i) => i.judged.failed).length;
  const agreeing = judged.filter((i) => i.label.failed === i.judged.failed).length;
  const agreement = ratio(agreeing, n);
  let kappa: number | null = null;
  if (n > 0 && agreement !== null) {
    const chance = (labelFailed / n) * (judgeFailed / n) + (1 - labelFailed / n) * (1 - judgeFailed / n);
    kappa = chance === 1 ? null : (agreement - chance) / (1 - chance);
  }
  const names = [
    ...new Set(
      judged.flatMap((i) => [
        ...(i.label.failed && i.label.class ? [i.label.class] : []),
        ...(i.judged.failed && i.judged.class ? [i.judged.class] : []),
      ]),
    ),
  ].sort();
  const classes = names.map((name) => {
    const labelled = judged.filter((i) => i.label.failed && i.label.class === name).length;
    const flagged = judged.filter((i) => i.judged.failed && i.judged.class === name).length;
    const hits = judged.filter(
      (i) => i.label.failed && i.judged.failed && i.label.class === name && i.judged.class === name,
    ).length;
    return { name, labelled, flagged, precision: ratio(hits, flagged), recall: ratio(hits, labelled) };
  });
  return {
    items: items.length,
    judged: n,
    unjudged: items.length - n,
    agreement,
    kappa,
    failed: { precision: ratio(both, judgeFailed), recall: ratio(both, labelFailed) },
    classes,
  };
}
