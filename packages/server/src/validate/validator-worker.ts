import { listModelVersions } from "../store/model-registry.ts";
import { type ValidatorDeps, validateCandidate } from "./validate-candidate.ts";

/**
 * Validates every tenant's candidates, oldest first, one at a time. A tenant with no EvalSet or no production model
 * yet, or whose judge decided none of its rows yet, is skipped (its candidates wait) and said once; a candidate
 * another validator decided first is left to it.
 */
export class Validator {
  private readonly waiting = new Set<string>();

  constructor(
    private readonly deps: ValidatorDeps,
    private readonly onResult: (event: {
      tenantId: string;
      model: string;
      decision: string;
      reasons: string[];
    }) => void = () => {},
  ) {}

  /** One pass over every tenant's candidates. */
  async tick(): Promise<void> {
    const tenants = await this.deps.db.query<{ id: string }>("select id from tenants order by id");
    for (const { id: tenantId } of tenants) {
      const candidates = await listModelVersions(this.deps.db, tenantId, ["candidate"]);
      for (const candidate of candidates.reverse()) {
        try {
          const { validation, model } = await validateCandidate(
            this.deps,
            tenantId,
            candidate.id,
            "system:validator",
          );
          this.onResult({
            tenantId,
            model: model.name,
            decision: validation.decision,
            reasons: validation.report.reasons,
          });
        } catch (error) {
          const message = (error as Error).message;
          if (/only from candidate|only a candidate is validated/.test(message)) continue;
          if (!/no EvalSet|no production model|decided none of the/.test(message)) throw error;
          if (!this.waiting.has(tenantId)) console.warn(`validator: tenant ${tenantId} waits: ${message}`);
          this.waiting.add(tenantId);
          break;
        }
      }
    }
  }
}
