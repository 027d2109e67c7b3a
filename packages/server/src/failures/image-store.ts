import type { ContentImage } from "@arc/core";
import type { Queryable } from "../store/database.ts";

/** Stores images by content reference; one already stored is left as it is (same reference, same bytes). */
export async function saveImages(
  db: Queryable,
  tenantId: string,
  images: readonly ContentImage[],
): Promise<void> {
  for (const image of images) {
    await db.query(
      `insert into images (tenant_id, ref, media_type, data) values ($1, $2, $3, $4)
       on conflict (tenant_id, ref) do nothing`,
      [tenantId, image.ref, image.mediaType, Buffer.from(image.data, "base64")],
    );
  }
}

/** The stored images among `refs`, by reference. */
export async function loadImages(
  db: Queryable,
  tenantId: string,
  refs: readonly string[],
): Promise<Map<string, ContentImage>> {
  if (refs.length === 0) return new Map();
  const rows = await db.query<{ ref: string; media_type: string; data: Uint8Array }>(
    "select ref, media_type, data from images where tenant_id = $1 and ref = any($2::text[])",
    [tenantId, [...new Set(refs)]],
  );
  return new Map(
    rows.map((r) => [
      r.ref,
      { ref: r.ref, mediaType: r.media_type, data: Buffer.from(r.data).toString("base64") },
    ]),
  );
}
