import type { ChatModel } from "@arc/core";
import { OpenAIChatModel } from "@arc/engine";
import { answerToResponse } from "../gateway/model-answer.ts";
import type { ModelBackend } from "../gateway/model-backend.ts";

/**
 * The teaching protocol's ChatModel over a model version's gateway backend (embedded engine or
 * upstream server): the OpenAI-compatible adapter with a fetch that hands the body to the backend,
 * so teaching calls take exactly the path ordinary gateway calls take.
 */
export function backendChatModel(backend: ModelBackend, name: string): ChatModel {
  const fetchViaBackend: typeof fetch = async (_url, init) =>
    answerToResponse(
      await backend.chat(
        JSON.parse(String(init?.body)) as Record<string, unknown>,
        init?.signal ?? undefined,
      ),
    );
  return new OpenAIChatModel({ baseURL: "http://backend.invalid/v1", model: name, fetch: fetchViaBackend });
}
