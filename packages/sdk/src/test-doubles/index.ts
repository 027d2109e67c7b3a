/** Test doubles for what cannot exist on a test machine (an LLM provider) or is tested elsewhere (the Arc server). */
export { CollectorTestServer, freePort } from "./collector-test-server.ts";
export { OpenAITestServer, type ScriptedReply } from "./openai-test-server.ts";
