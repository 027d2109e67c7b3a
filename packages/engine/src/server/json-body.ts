import { OpenAIError } from "./openai-error.ts";

/** Reads the body as JSON, counting bytes on the stream: 413 past `maxBytes` whatever Content-Length says. */
export async function readJsonBody(req: Request, maxBytes: number): Promise<unknown> {
  const tooLarge = () =>
    new OpenAIError(413, `request body exceeds the limit of ${maxBytes} bytes`, {
      code: "request_too_large",
    });
  if (Number(req.headers.get("content-length") ?? 0) > maxBytes) throw tooLarge();
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (req.body) {
    for await (const chunk of req.body as unknown as AsyncIterable<Uint8Array>) {
      size += chunk.byteLength;
      if (size > maxBytes) throw tooLarge();
      chunks.push(chunk);
    }
  }
  try {
    return JSON.parse(Buffer.concat(chunks, size).toString("utf8"));
  } catch {
    throw new OpenAIError(
      400,
      "We could not parse the JSON body of your request: it is not valid JSON. Send a JSON object as the body.",
    );
  }
}
