import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { ChatMessage } from "../trace/index.ts";
import { extractInlineImages, IMAGE_REF_PREFIX, imageRefs, inlineImages } from "./content-images.ts";

const png = (byte: string) => `data:image/png;base64,${Buffer.from(byte).toString("base64")}`;
const image = (url: string) => ({ type: "image_url", image_url: { url } });

describe("content-addressed images", () => {
  it("replaces each inline image by a reference to its bytes, each image once, and leaves URLs and text alone", () => {
    const messages: ChatMessage[] = [
      { role: "system", content: "Describe pictures." },
      {
        role: "user",
        content: [{ type: "text", text: "a" }, image(png("one")), image("https://x.test/p.png")],
      },
      { role: "user", content: [image(png("one")), image(png("two"))] },
    ];
    const { messages: out, images } = extractInlineImages(messages);
    assert.equal(images.length, 2);
    assert.ok(images.every((i) => i.ref.startsWith(IMAGE_REF_PREFIX) && i.mediaType === "image/png"));
    assert.deepEqual(imageRefs(out), [images[0].ref, images[0].ref, images[1].ref]);
    assert.equal(
      (out[1].content as { image_url?: { url: string } }[])[2].image_url?.url,
      "https://x.test/p.png",
    );
    assert.equal((messages[1].content as { image_url?: { url: string } }[])[1].image_url?.url, png("one"));
    assert.deepEqual(inlineImages(out, new Map(images.map((i) => [i.ref, i]))), messages);
  });
});
