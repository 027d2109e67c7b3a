/** The bytes of responses made by `bytesResponse`, so that the gateway reads them without a stream. */
const held = new WeakMap<Response, Uint8Array<ArrayBuffer>>();

/** A response over bytes already in memory; `responseBytes` hands them back as they are. */
export function bytesResponse(bytes: Uint8Array<ArrayBuffer>, init: ResponseInit): Response {
  const response = new Response(bytes, init);
  held.set(response, bytes);
  return response;
}

/** A response's whole body: at once for one made by `bytesResponse`, else read from its stream. */
export async function responseBytes(response: Response): Promise<Uint8Array<ArrayBuffer>> {
  return held.get(response) ?? new Uint8Array(await response.arrayBuffer());
}
