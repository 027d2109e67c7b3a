import { timingSafeEqual } from "node:crypto";
import type { Queryable } from "../store/database.ts";
import { findPrincipal, hashApiKey, type Principal } from "../store/keys.ts";

/** How long a looked-up key is trusted before it is checked again (so a revocation elsewhere lands within this). */
const cacheTtlMs = 2_000;

/** Resolves bearer keys to principals, with a short cache so ingest does not query the keys table per request. */
export class Authenticator {
  private readonly cache = new Map<string, { principal: Principal | null; expiresAt: number }>();
  private readonly configuredAdminHash: Buffer | null;

  constructor(
    private readonly db: Queryable,
    /** An admin key from config (ARC_ADMIN_KEY), accepted besides the stored ones. */
    configuredAdminKey?: string,
  ) {
    this.configuredAdminHash = configuredAdminKey ? Buffer.from(hashApiKey(configuredAdminKey), "hex") : null;
  }

  async principalFor(key: string): Promise<Principal | null> {
    const hash = hashApiKey(key);
    if (this.configuredAdminHash && timingSafeEqual(Buffer.from(hash, "hex"), this.configuredAdminHash)) {
      return { role: "admin", keyId: "config" };
    }
    const cached = this.cache.get(hash);
    if (cached && cached.expiresAt > Date.now()) return cached.principal;
    const principal = await findPrincipal(this.db, key);
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(hash, { principal, expiresAt: Date.now() + cacheTtlMs });
    return principal;
  }

  /** Forgets cached keys at once (after a revocation in this process). */
  forget(): void {
    this.cache.clear();
  }
}
