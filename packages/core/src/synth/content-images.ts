import { createHash } from "node:crypto";
import { InvalidInputError } from "../errors/arc-error.ts";
import type { ChatMessage } from "../trace/index.ts";

/** How a row refers to an image it does not inline: `arc-image:sha256:<hex of the image's bytes>`. */
export const IMAGE_REF_PREFIX = "arc-image:sha256:";

/** An image taken out of a conversation: its reference, media type and bytes (base64). */
export interface ContentImage {
  ref: string;
  mediaType: string;
  /** The image's bytes, base64. */
  data: string;
}

const DATA_URL = /^data:([^;,]+);base64,([A-Za-z0-9+/=\s]+)$/;

/** The image_url parts of a conversation, each with the object that holds its `url`. */
function imageParts(messages: readonly ChatMessage[]): { image_url: { url?: unknown } }[] {
  return messages.flatMap((m) =>
    Array.isArray(m.content)
      ? (m.content as { type?: string; image_url?: { url?: unknown } }[]).filter(
          (part): part is { image_url: { url?: unknown } } =>
            part.type === "image_url" && typeof part.image_url === "object" && part.image_url !== null,
        )
      : [],
  );
}

/**
 * A copy of the conversation with every inline (`data:` URL, base64) image replaced by its content reference, and
 * the images, each once. The same image anywhere gets the same reference, so a dataset stores it once.
 */
export function extractInlineImages(messages: readonly ChatMessage[]): {
  messages: ChatMessage[];
  images: ContentImage[];
} {
  const copy = structuredClone(messages) as ChatMessage[];
  const images = new Map<string, ContentImage>();
  for (const part of imageParts(copy)) {
    const match = typeof part.image_url.url === "string" ? DATA_URL.exec(part.image_url.url) : null;
    if (!match) continue;
    const data = match[2].replace(/\s+/g, "");
    const ref = `${IMAGE_REF_PREFIX}${createHash("sha256").update(Buffer.from(data, "base64")).digest("hex")}`;
    images.set(ref, { ref, mediaType: match[1], data });
    part.image_url.url = ref;
  }
  return { messages: copy, images: [...images.values()] };
}

/**
 * The bytes of every image of a conversation, in order: inline (`data:` URL) images decoded, references read from
 * `images`. An image given only by a web URL, or a reference not in `images`, is an error that names it: an
 * export that carries images must carry all of them.
 */
export function imageBytes(
  messages: readonly ChatMessage[],
  images: ReadonlyMap<string, ContentImage>,
): Uint8Array[] {
  return imageParts(messages).map((part) => {
    const url = part.image_url.url;
    const inline = typeof url === "string" ? DATA_URL.exec(url) : null;
    if (inline) return new Uint8Array(Buffer.from(inline[2].replace(/\s+/g, ""), "base64"));
    const stored = typeof url === "string" ? images.get(url) : undefined;
    if (stored) return new Uint8Array(Buffer.from(stored.data, "base64"));
    const shown = typeof url === "string" ? url.slice(0, 120) : JSON.stringify(url);
    throw new InvalidInputError(
      `image_url: expected an inline image or a stored image reference, got ${shown}${typeof url === "string" && url.startsWith(IMAGE_REF_PREFIX) ? " (not among the images given)" : ""}`,
      { field: "image_url" },
    );
  });
}

/** The image references a conversation holds. */
export function imageRefs(messages: readonly ChatMessage[]): string[] {
  return imageParts(messages)
    .map((part) => part.image_url.url)
    .filter((url): url is string => typeof url === "string" && url.startsWith(IMAGE_REF_PREFIX));
}

/** A copy of the conversation with each image reference found in `images` turned back into a `data:` URL. */
export function inlineImages(
  messages: readonly ChatMessage[],
  images: ReadonlyMap<string, ContentImage>,
): ChatMessage[] {
  const copy = structuredClone(messages) as ChatMessage[];
  for (const part of imageParts(copy)) {
    const image = typeof part.image_url.url === "string" ? images.get(part.image_url.url) : undefined;
    if (image) part.image_url.url = `data:${image.mediaType};base64,${image.data}`;
  }
  return copy;
}
