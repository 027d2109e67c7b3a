/** A rubric for tool calls, and a trace with no env (no verifier) whose call names the wrong city: only a judge can fail it. */
export const CITY_RUBRIC = {
  criteria: ["Call the tool the user asked for, with the values the user gave."],
  classes: [
    { name: "wrong_value", description: "an argument differs from what the user said", severity: "high" },
    { name: "wrong_tool", description: "calls a tool the user did not ask for", severity: "medium" },
  ],
};

export const MISREAD_CITY_TRACE = {
  id: "misread-city",
  startedAt: "2026-11-27T10:00:00.000Z",
  steps: [
    {
      id: "s1",
      kind: "llm",
      startedAt: "2026-11-27T10:00:00.000Z",
      llm: {
        messages: [{ role: "user", content: "What's the weather in Oslo in celsius?" }],
        output: { content: '{"tool":"get_weather","args":{"city":"Bergen","unit":"c"}}' },
      },
    },
  ],
};
