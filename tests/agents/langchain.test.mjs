// LangChain JS (@langchain/openai ChatOpenAI with bindTools): AIMessage.tool_calls carries the
// parsed arguments, invoked and streamed.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ChatOpenAI } from '@langchain/openai';
import { HumanMessage, ToolMessage } from '@langchain/core/messages';

import { API_KEY, MODEL_ID, toolCallText, withServer, withTimeout } from './helpers.mjs';

const READ = {
  type: 'function',
  function: {
    name: 'read',
    description: 'Read a file from the local filesystem',
    parameters: {
      type: 'object',
      properties: { filePath: { type: 'string' }, limit: { type: 'integer' } },
      required: ['filePath'],
    },
  },
};

function chat(server) {
  return new ChatOpenAI({
    model: MODEL_ID, apiKey: API_KEY, maxRetries: 0, timeout: 30000,
    configuration: { baseURL: server.baseURL },
  });
}

const args = { filePath: '/srv/app/config.yaml', limit: 50 };
const script = { rules: [
  { name: 'final', contains: ['<tool_response>', 'port: 8080'], reply: 'The app listens on port 8080.' },
  { name: 'call', contains: ['Which port'], reply: toolCallText('read', args) },
] };

test('bindTools: invoke gives AIMessage.tool_calls, then the tool result gives the answer', async () => {
  await withServer(script, async (server) => {
    const model = chat(server).bindTools([READ]);
    const messages = [new HumanMessage('Which port does the app use?')];
    const ai = await withTimeout(model.invoke(messages), 30000, 'invoke');
    assert.equal(ai.tool_calls?.length, 1, JSON.stringify(ai));
    const [call] = ai.tool_calls;
    assert.equal(call.name, 'read');
    assert.deepEqual(call.args, args);
    assert.ok(call.id, 'the call has an id');
    assert.equal(ai.response_metadata?.finish_reason, 'tool_calls');

    messages.push(ai, new ToolMessage({ tool_call_id: call.id, content: 'port: 8080\nworkers: 4' }));
    const final = await withTimeout(model.invoke(messages), 30000, 'invoke with the result');
    assert.equal(final.content, 'The app listens on port 8080.');
    assert.equal(final.tool_calls?.length ?? 0, 0);
    const p = server.requests()[1].prompt;
    assert.ok(p.includes(toolCallText('read', args)), 'the call is in the history');
    assert.ok(p.includes('<tool_response>\nport: 8080\nworkers: 4\n</tool_response>'));
  }, { name: 'langchain-invoke' });
});

test('bindTools: streamed chunks concatenate to the same tool call', async () => {
  await withServer(script, async (server) => {
    const model = chat(server).bindTools([READ]);
    let full;
    await withTimeout((async () => {
      for await (const chunk of await model.stream([new HumanMessage('Which port does the app use?')])) {
        full = full ? full.concat(chunk) : chunk;
      }
    })(), 30000, 'stream');
    assert.equal(full.tool_calls?.length, 1, JSON.stringify(full));
    assert.equal(full.tool_calls[0].name, 'read');
    assert.deepEqual(full.tool_calls[0].args, args);
  }, { name: 'langchain-stream' });
});
