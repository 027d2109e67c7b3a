import { type GenResult, type Task, taskFamilies, type VerifyResult } from "@arc/core";

/** What a reward sees: the task, the sample and the verifier's judgement of it. */
export interface RewardInput {
  task: Task;
  sample: GenResult;
  verdict: VerifyResult;
}

/** A reward is a plain function; rewards compose by wrapping (see `withPenalties`). */
export type RewardFn = (input: RewardInput) => number;

/** The verifier's own score: 1 for a pass, 0 otherwise. */
export const verifierReward: RewardFn = ({ verdict }) => verdict.reward;

/**
 * Partial credit by how far the output got: a wrong argument with the right tool is better than the
 * wrong tool, which is better than no parseable call; a family's `partialCredit` grades its failures finer
 * (more right arguments earn more). Gives semi-online DPO and GRPO a signal inside groups whose samples all fail
 * the verifier (where a 0/1 reward ties).
 */
export const partialCreditReward: RewardFn = ({ task, sample, verdict }) => {
  if (verdict.status === "pass") return 1;
  const credit = taskFamilies.find(task.env)?.partialCredit?.(task, sample.text, verdict);
  if (credit !== undefined) return credit;
  switch (verdict.failure?.class) {
    case "wrong_argument":
    case "wrong_answer":
      return 0.5;
    case "wrong_tool":
    case "schema_violation":
    case "execution_error":
    case "incomplete":
      return 0.2;
    default:
      return 0;
  }
};

/** Detector-style penalties subtracted from a reward. */
export interface RewardPenalties {
  /** Subtracted when the sample hit maxTokens instead of ending its turn (rambling). */
  truncated?: number;
  /** Subtracted per output token beyond `lengthLimit`, scaled per token. */
  perTokenOverLimit?: number;
  /** Output tokens allowed before `perTokenOverLimit` applies. */
  lengthLimit?: number;
}

/** Wraps a reward with detector penalties. */
export function withPenalties(reward: RewardFn, penalties: RewardPenalties): RewardFn {
  return (input) => {
    let r = reward(input);
    if (penalties.truncated && input.sample.finishReason === "length") r -= penalties.truncated;
    const over = input.sample.outputTokens.length - (penalties.lengthLimit ?? Number.POSITIVE_INFINITY);
    if (penalties.perTokenOverLimit && over > 0) r -= penalties.perTokenOverLimit * over;
    return r;
  };
}
