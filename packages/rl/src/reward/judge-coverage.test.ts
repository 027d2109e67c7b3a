import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { judgeCoverageShortfall } from "./judge-coverage.ts";

describe("judge coverage of a run", () => {
  it("is short when the judge scored under the share asked, and always when it scored none", () => {
    assert.equal(judgeCoverageShortfall({ scored: 5, unjudged: 5 }, 0.5), undefined);
    assert.match(
      judgeCoverageShortfall({ scored: 4, unjudged: 6 }, 0.5) ?? "",
      /scored 4 of the run's 10 samples \(40%\), under the 50% .* learned from too little/,
    );
    assert.match(
      judgeCoverageShortfall({ scored: 0, unjudged: 288 }, 0) ?? "",
      /scored none of the run's 288 samples: the run learned from nothing and registers no candidate \(288 could not be judged/,
    );
    assert.equal(judgeCoverageShortfall({ scored: 0, unjudged: 0 }, 0.5), undefined);
  });
});
