import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { removeClaims } from "./ungrounded-claims.ts";

describe("removeClaims", () => {
  it("drops a claim and tidies the separators it leaves", () => {
    assert.equal(
      removeClaims("March is month 03; July is month 07.", ["July is month 07"]),
      "March is month 03.",
    );
    assert.equal(removeClaims("July is month 07; 3pm is hour 15.", ["July is month 07"]), "3pm is hour 15.");
    assert.equal(
      removeClaims("Call the tool add_event, taken from the request. July is month 07; 3pm is hour 15.", [
        "July is month 07",
      ]),
      "Call the tool add_event, taken from the request. 3pm is hour 15.",
    );
  });

  it("leaves nothing when every claim goes, and the teaching as it was when none does", () => {
    assert.equal(removeClaims("July is month 07.", ["July is month 07"]), "");
    assert.equal(removeClaims("July is month 07; July is month 07.", ["July is month 07"]), "");
    assert.equal(removeClaims("March is month 03.", []), "March is month 03.");
  });
});
