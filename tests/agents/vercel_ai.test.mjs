// The Vercel AI SDK (`ai` with @ai-sdk/openai-compatible): the SDK gets the call, runs the tool,
// sends the result back and ends with the model's final text, non-streamed and streamed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, stepCountIs, streamText, tool } from 'ai';
import { z } from 'zod';

import { API_KEY, MODEL_ID, toolCallText, withServer, withTimeout } from './helpers.mjs';

function model(server) {
  return createOpenAICompatible({ name: 'baton', baseURL: server.baseURL, apiKey: API_KEY })
    .chatModel(MODEL_ID);
}

// A tool the SDK executes itself; records its inputs.
function weatherTool(seen) {
  return tool({
    description: 'Current weather of a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      seen.push(city);
      return { city, forecast: 'sunny', celsius: 23 };
    },
  });
}

const script = { rules: [
  { name: 'final', contains: ['<tool_response>', '"forecast"'], reply: 'It is sunny in Lisbon, 23 °C.' },
  { name: 'call', contains: ['weather in Lisbon'], reply: toolCallText('get_weather', { city: 'Lisbon' }) },
] };

function checkRequests(server) {
  const reqs = server.requests();
  assert.deepEqual(reqs.map((r) => r.rule), ['call', 'final']);
  const p = reqs[1].prompt;
  assert.ok(p.includes(toolCallText('get_weather', { city: 'Lisbon' })), 'the call is in the history');
  // The SDK sends the tool's JSON output as the tool message's content.
  assert.match(p, /<tool_response>\n.*"forecast":\s*"sunny".*\n<\/tool_response>/s);
}

test('generateText runs the tool and returns the final text', async () => {
  await withServer(script, async (server) => {
    const seen = [];
    const r = await withTimeout(generateText({
      model: model(server),
      tools: { get_weather: weatherTool(seen) },
      stopWhen: stepCountIs(4),
      prompt: 'What is the weather in Lisbon?',
      maxRetries: 0,
    }), 60000, 'generateText');
    assert.deepEqual(seen, ['Lisbon'], 'the tool ran once with the parsed input');
    assert.equal(r.steps.length, 2);
    assert.equal(r.steps[0].finishReason, 'tool-calls');
    assert.deepEqual(r.steps[0].toolCalls.map((c) => [c.toolName, c.input]),
      [['get_weather', { city: 'Lisbon' }]]);
    assert.equal(r.text, 'It is sunny in Lisbon, 23 °C.');
    assert.equal(r.finishReason, 'stop');
    checkRequests(server);
  }, { name: 'ai-generate' });
});

test('streamText streams the call, runs the tool and streams the final text', async () => {
  await withServer(script, async (server) => {
    const seen = [];
    const result = streamText({
      model: model(server),
      tools: { get_weather: weatherTool(seen) },
      stopWhen: stepCountIs(4),
      prompt: 'What is the weather in Lisbon?',
      maxRetries: 0,
    });
    const parts = [];
    let text = '';
    await withTimeout((async () => {
      for await (const part of result.fullStream) {
        parts.push(part.type);
        if (part.type === 'text-delta') text += part.text;
        if (part.type === 'error') throw part.error;
      }
    })(), 60000, 'streamText');
    assert.deepEqual(seen, ['Lisbon']);
    assert.ok(parts.includes('tool-call') && parts.includes('tool-result'), parts.join(','));
    assert.ok(parts.includes('tool-input-delta'), `the input streamed: ${parts.join(',')}`);
    assert.equal(text, 'It is sunny in Lisbon, 23 °C.');
    checkRequests(server);
  }, { name: 'ai-stream' });
});
