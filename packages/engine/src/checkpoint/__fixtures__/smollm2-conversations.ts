import type { GenMessage } from "@arc/core";

/** A tool as the OpenAI API offers it. */
type Tool = { type: "function"; function: { name: string; description: string; parameters: object } };

const WEATHER: Tool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Current weather of a city",
    parameters: {
      type: "object",
      properties: {
        city: { type: "string", description: "City name, e.g. Paris" },
        unit: { type: "string", enum: ["celsius", "fahrenheit"] },
      },
      required: ["city"],
    },
  },
};
const CONVERT: Tool = {
  type: "function",
  function: {
    name: "convert_units",
    description: "Convert a quantity from one unit to another",
    parameters: {
      type: "object",
      properties: { value: { type: "number" }, from: { type: "string" }, to: { type: "string" } },
      required: ["value", "from", "to"],
    },
  },
};
const BOOK: Tool = {
  type: "function",
  function: {
    name: "book_table",
    description: "Book a restaurant table",
    parameters: {
      type: "object",
      properties: {
        restaurant: { type: "string" },
        people: { type: "integer", minimum: 1 },
        time: { type: "string", description: "24h time, e.g. 19:30" },
      },
      required: ["restaurant", "people", "time"],
    },
  },
};

/** A conversation, the tools it offers and a reply to score, as the agreement checks and the bench use them. */
export interface Conversation {
  name: string;
  messages: GenMessage[];
  tools?: Tool[];
  reply: string;
}

/**
 * Eight chat-templated conversations of SmolLM2 (tools offered in four, a tool call and its result in two), each
 * with a reply, at least 200 tokens in all: the log-prob agreement with transformers runs over every position.
 */
export const SMOLLM2_CONVERSATIONS: Conversation[] = [
  {
    name: "tool call for the weather",
    tools: [WEATHER, CONVERT],
    messages: [{ role: "user", content: "What's the weather like in Lyon right now? Please use celsius." }],
    reply: '<tool_call>{"name": "get_weather", "arguments": {"city": "Lyon", "unit": "celsius"}}</tool_call>',
  },
  {
    name: "plain chat, two turns",
    messages: [
      { role: "system", content: "You are a concise assistant. Answer in at most two sentences." },
      { role: "user", content: "Why is the sky blue during the day but red at sunset?" },
      {
        role: "assistant",
        content:
          "Sunlight scatters off air molecules, and blue light scatters most, so the daytime sky looks blue. At sunset the light crosses much more air, the blue is scattered away, and the reds and oranges remain.",
      },
      { role: "user", content: "And why are clouds white, then? Explain it to a ten-year-old." },
      {
        role: "assistant",
        content:
          "Clouds are made of tiny water drops that are much bigger than air molecules, so they scatter every color of sunlight about the same amount, and all the colors together look white.",
      },
      { role: "user", content: "Then why do storm clouds look dark grey?" },
    ],
    reply:
      "Storm clouds are very thick and full of big drops, so most of the sunlight is scattered back up or absorbed before it reaches their bottoms. Less light comes through to us, and the side we see from the ground looks dark grey.",
  },
  {
    name: "tool result answered",
    tools: [WEATHER],
    messages: [
      { role: "user", content: "Is it warm in Madrid today?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          {
            id: "call_1",
            type: "function",
            function: { name: "get_weather", arguments: '{"city": "Madrid"}' },
          },
        ],
      },
      {
        role: "tool",
        tool_call_id: "call_1",
        content: '{"temperature": 31, "unit": "celsius", "sky": "clear"}',
      },
    ],
    reply:
      "Yes, it is warm in Madrid today: 31 degrees Celsius under a clear sky. Light clothes, sunscreen and plenty of water would be a good idea if you go out in the afternoon.",
  },
  {
    name: "numbers and a unit conversion",
    tools: [CONVERT],
    messages: [
      { role: "system", content: "You help with cooking. Use the tools when a conversion is needed." },
      {
        role: "user",
        content: "My recipe needs 450 grams of flour but I only have cups. How many cups is that?",
      },
    ],
    reply:
      '<tool_call>{"name": "convert_units", "arguments": {"value": 450, "from": "gram", "to": "cup"}}</tool_call>',
  },
  {
    name: "code question",
    messages: [
      {
        role: "user",
        content:
          "In Python, what is the difference between a list and a tuple? Give me a short example of each, and say when I would pick one over the other.",
      },
    ],
    reply:
      "A list is mutable: you can add, remove or change its items after creating it, for example `fruits = ['apple', 'pear']` followed by `fruits.append('plum')`. A tuple is immutable once created, for example `point = (3, 4)`; trying `point[0] = 5` raises a TypeError. Because a tuple cannot change, it is hashable when its items are, so it can be a dictionary key or a set member. Pick a list for a collection that grows, shrinks or is sorted in place, such as a queue of tasks; pick a tuple for a fixed record whose positions mean something, such as coordinates, an RGB color or a row a database query returns.",
  },
  {
    name: "two tools, a booking",
    tools: [BOOK, WEATHER],
    messages: [
      { role: "system", content: "You are a booking assistant for restaurants in Rome." },
      { role: "user", content: "Book a table for 4 people at Da Enzo tonight at 20:15, please." },
    ],
    reply:
      '<tool_call>{"name": "book_table", "arguments": {"restaurant": "Da Enzo", "people": 4, "time": "20:15"}}</tool_call>',
  },
  {
    name: "a short story",
    messages: [
      { role: "user", content: "Write an eight-sentence story about a lighthouse keeper and a lost cat." },
    ],
    reply:
      "Every night, old Marta climbed the hundred and twelve steps of the lighthouse to light the great lamp. One stormy evening she found a soaked grey cat shivering on the top landing, its green eyes wide with fright. She dried it with a towel by the lamp's warm glass and shared her supper of bread and smoked fish. The cat ate everything, curled up on her logbook and slept until dawn. In the morning Marta asked the fishermen in the harbor whether anyone had lost a cat, but nobody had. So she named it Beacon and let it stay. From then on, Beacon climbed the steps beside her every evening and watched the beam sweep across the dark sea. The sailors said the light had never shone so steadily as in the years the keeper and her cat kept it together.",
  },
  {
    name: "arithmetic, step by step",
    messages: [
      { role: "system", content: "Show your reasoning before the answer." },
      { role: "user", content: "What is 17 times 24?" },
      {
        role: "assistant",
        content: "17 times 24 is 17 times 20 plus 17 times 4, that is 340 plus 68, so the answer is 408.",
      },
      {
        role: "user",
        content:
          "Good. Now: a train leaves at 14:35 and the trip takes 2 hours and 50 minutes, plus a 12-minute stop on the way that is not counted in the trip. When does it arrive?",
      },
    ],
    reply:
      "Start at 14:35. Adding the 2 hours of the trip gives 16:35. Adding 50 more minutes: 16:35 plus 25 minutes is 17:00, and the remaining 25 minutes bring it to 17:25. The 12-minute stop is not counted in the trip time, so we add it too: 17:25 plus 12 minutes is 17:37. The train arrives at 17:37.",
  },
];
