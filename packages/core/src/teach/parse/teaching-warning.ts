/** A tag of the protocol's output format. */
export type TeachingTag = "thinking" | "teaching" | "solution";

/**
 * Something recoverable that went wrong in a model's output. Parsing never throws on model output:
 * it makes the best reading it can and reports what it had to repair as one of these values.
 * Every variant carries `message`, one sentence for logs and the API.
 */
export type TeachingWarning =
  | {
      /** The tag does not occur; the parser fell back as documented on the parse function. */
      kind: "missing_tag";
      tag: TeachingTag;
      message: string;
    }
  | {
      /** The tag opens but never closes (often: the output hit its token limit); its content runs to the end. */
      kind: "unclosed_tag";
      tag: TeachingTag;
      message: string;
    }
  | {
      /** The teacher gave no guidance: expected from an adaptive teacher for a capable student. */
      kind: "empty_teaching";
      message: string;
    }
  | {
      /** The teaching contained a known answer; it was cut out (`redacted`) or the whole teaching dropped (`refused`). */
      kind: "answer_leaked";
      answer: string;
      occurrences: number;
      action: "redacted" | "refused";
      message: string;
    }
  | {
      /** The teaching stated something about the question that the question does not support; the claim was cut out. */
      kind: "ungrounded_claim";
      claim: string;
      message: string;
    }
  | {
      /** The probe ran past its budget (a backend that ignores maxTokens) and was cut to `maxTokens`. */
      kind: "probe_truncated";
      tokens: number;
      maxTokens: number;
      message: string;
    }
  | {
      /** The student said nothing in the probe; the teacher sees a placeholder instead. */
      kind: "empty_probe";
      message: string;
    }
  | {
      /** The teacher did not state "Diagnosis: strong|weak"; the judgement was inferred or left unknown. */
      kind: "missing_diagnosis";
      message: string;
    }
  | {
      /** The student's <solution> is present but empty. */
      kind: "empty_solution";
      message: string;
    };

/** The kinds of TeachingWarning, for exhaustive handling by callers. */
export type TeachingWarningKind = TeachingWarning["kind"];
