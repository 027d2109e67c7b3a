import { timingSafeEqual } from "node:crypto";
import type { Queryable } from "../store/database.ts";
import { findPrincipal, hashApiKey, type Principal } from "../store/keys.ts";
import { RefreshingCache } from "../store/refreshing-cache.ts";
import { findTenant, type Tenant } from "../store/tenants.ts";

/** How long a looked-up key is trusted before it is checked again (so a revocation elsewhere lands within this). */
const cacheTtlMs = 2_000;

/** The longest key held in the cache: 10,000 such keys take a few MB, where 10,000 headers' worth would take 160. */
const maxCachedKeyLength = 256;

/**
 * Resolves bearer keys to principals, cached (see `RefreshingCache`) so that requests do not query the keys table:
 * a key seen before is answered from memory, without hashing it, and a revocation elsewhere lands within 2 s.
 */
export class Authenticator {
  private readonly cache: RefreshingCache<Principal | null>;
  private readonly configuredAdminHash: Buffer | null;

  constructor(
    private readonly db: Queryable,
    /** An admin key from config (ARC_ADMIN_KEY), accepted besides the stored ones. */
    configuredAdminKey?: string,
  ) {
    this.configuredAdminHash = configuredAdminKey ? Buffer.from(hashApiKey(configuredAdminKey), "hex") : null;
    this.cache = new RefreshingCache((key) => this.lookUp(this.db, key), {
      ttlMs: cacheTtlMs,
      refreshAfterMs: cacheTtlMs / 2,
    });
  }

  /** The principal of a key, or null for an unknown or revoked key. */
  principalFor(key: string): Promise<Principal | null> {
    // keys are held as they are, so a key longer than any Arc makes is looked up each time instead
    if (key.length > maxCachedKeyLength) return this.lookUp(this.db, key);
    return this.cache.get(key);
  }

  /** The tenant with this id or name, or null: what an admin key may act for (the `arc-tenant` header). */
  tenant(idOrName: string): Promise<Tenant | null> {
    return findTenant(this.db, idOrName);
  }

  /** Forgets cached keys at once (after a revocation in this process). */
  forget(): void {
    this.cache.clear();
  }

  private async lookUp(db: Queryable, key: string): Promise<Principal | null> {
    const hash = hashApiKey(key);
    if (this.configuredAdminHash && timingSafeEqual(Buffer.from(hash, "hex"), this.configuredAdminHash)) {
      return { role: "admin", keyId: "config" };
    }
    return findPrincipal(db, key);
  }
}
