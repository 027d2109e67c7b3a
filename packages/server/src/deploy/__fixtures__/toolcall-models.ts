import { DetectorRegistry, solutionsByQuestion } from "@arc/core";
import { ModelPool, type ModelPoolOptions } from "../../gateway/model-pool.ts";
import { InlineVerdicts } from "../verdict-source.ts";
import { AnswerBookEngine } from "./answer-book-engine.ts";
import type { ToolcallEvalFixture } from "./toolcall-eval-fixture.ts";

/**
 * A model pool whose checkpoints are answer books over the toolcall fixture (TEST DOUBLES for trained models): a
 * directory named `right` answers every question correctly, `wrong-pattern` fails the booking pattern.
 */
export function toolcallModelPool(fx: ToolcallEvalFixture, options: ModelPoolOptions = {}): ModelPool {
  const questions = fx.tasks.map((t) => t.question);
  const pattern = new Set(fx.patternQuestions);
  const books: Record<string, AnswerBookEngine> = {
    right: new AnswerBookEngine(new Map(questions.map((q) => [q, fx.right(q)]))),
    "wrong-pattern": new AnswerBookEngine(
      new Map(questions.map((q) => [q, pattern.has(q) ? fx.wrong(q) : fx.right(q)])),
    ),
  };
  return new ModelPool({
    ...options,
    loadEngine: async (dir) => {
      const book = books[dir.split("/").at(-1) as string];
      if (!book) throw new Error(`no answer book for ${dir}`);
      return book;
    },
  });
}

/** Live verdicts that know the fixture's solutions, as a tenant's detectors would for its own tasks. */
export function toolcallVerdicts(fx: ToolcallEvalFixture): InlineVerdicts {
  return new InlineVerdicts(() => new DetectorRegistry().resolveSolutionsWith(solutionsByQuestion(fx.tasks)));
}
