// Bad constraints are refused before any generation: HTTP 400 with an OpenAI-style error whose
// message names the problem (the keyword, the line:column, the construct), on both routes and
// for streamed requests; and the server keeps serving after them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { BatonServer, MODEL_ID, RANDOM_MODEL, chatBody, compileValidator, jsonSchemaFormat } from './helpers.mjs';

const schemaFormat = (schema) => ({ response_format: jsonSchemaFormat('bad', schema) });

// [name, request fields, regex the message must match]
const cases = [
  ['unsupported keyword uniqueItems', schemaFormat({
    type: 'object',
    properties: { tags: { type: 'array', items: { type: 'string' }, uniqueItems: true } },
  }), /uniqueItems/],
  ['unsupported format ipv6', schemaFormat({ type: 'string', format: 'ipv6' }), /ipv6/],
  ['unsupported keyword deep inside $defs', schemaFormat({
    $ref: '#/$defs/a', $defs: { a: { type: 'object', properties: { n: { type: 'integer', multipleOf: 3 } } } },
  }), /multipleOf/],
  ['unsupported keyword patternProperties', schemaFormat({
    type: 'object', patternProperties: { '^x': { type: 'integer' } },
  }), /patternProperties/],
  ['unsupported keyword not', schemaFormat({ not: { type: 'string' } }), /\bnot\b/],
  ['unsatisfiable integer bounds', schemaFormat({ type: 'integer', minimum: 5, maximum: 1 }),
    /minimum|maximum|unsatisf|no value/i],
  ['unsatisfiable exclusive bounds', schemaFormat({
    type: 'object', properties: { x: { type: 'integer', exclusiveMinimum: 3, exclusiveMaximum: 4 } }, required: ['x'],
  }), /exclusive|minimum|maximum|unsatisf|no value/i],
  ['false schema', schemaFormat(false), /false|unsatisf|no value/i],
  ['empty enum', schemaFormat({ type: 'object', properties: { e: { enum: [] } }, required: ['e'] }), /enum/],
  ['minLength over maxLength', schemaFormat({ type: 'string', minLength: 5, maxLength: 2 }),
    /minLength|maxLength|unsatisf|no value/i],
  ['minItems over maxItems', schemaFormat({ type: 'array', items: { type: 'integer' }, minItems: 3, maxItems: 1 }),
    /minItems|maxItems|unsatisf|no value/i],
  ['unknown type name', schemaFormat({ type: 'strin' }), /strin/],
  ['type not a string', schemaFormat({ type: 5 }), /type/],
  ['properties not an object', schemaFormat({ type: 'object', properties: [] }), /properties/],
  ['negative maxLength', schemaFormat({ type: 'string', maxLength: -1 }), /maxLength/],
  ['dangling $ref', schemaFormat({ $ref: '#/$defs/missing' }), /missing|\$ref/],
  ['invalid pattern', schemaFormat({ type: 'string', pattern: '[a-' }), /pattern|\[a-/],
  ['schema missing in json_schema', { response_format: { type: 'json_schema', json_schema: { name: 'x' } } },
    /schema/],
  ['unknown response_format type', { response_format: { type: 'xml' } }, /response_format|type/],
  ['GBNF syntax error', { grammar: 'root ::= "a" (\n' }, /\d+:\d+|line/],
  ['GBNF syntax error on line 2', { grammar: 'root ::= item+\nitem ::= [a-z] "\n' }, /2:\d+|line 2/],
  ['GBNF undefined rule', { grammar: 'root ::= "x" missing-rule\n' }, /missing-rule/],
  ['GBNF without root', { grammar: 'start ::= "x"\n' }, /root/],
  ['GBNF left recursion', { guided_grammar: 'root ::= root "a" | "b"\n' }, /recurs|root/i],
  ['invalid regex', { regex: '(ab' }, /regex|\(|paren|group/i],
  ['regex backreference', { regex: '(a)\\1' }, /backreference|\\1/i],
  ['regex lookahead', { guided_regex: 'a(?=b)' }, /lookahead|\(\?=/i],
  ['empty guided_choice', { guided_choice: [] }, /guided_choice/],
  ['guided_choice not strings', { guided_choice: ['a', 3] }, /guided_choice/],
  ['response_format and regex', { response_format: { type: 'json_object' }, regex: 'a+' },
    /response_format|regex|only one/],
  ['grammar and regex', { grammar: 'root ::= "a"', regex: 'a' }, /grammar|regex|only one/],
  ['json_schema and guided_json', { json_schema: { type: 'integer' }, guided_json: { type: 'integer' } },
    /json_schema|guided_json|only one/],
  ['response_format json_schema and guided_choice', {
    response_format: jsonSchemaFormat('x', { type: 'string' }), guided_choice: ['a', 'b'],
  }, /response_format|guided_choice|only one/],
];

describe('bad constraints are 400s', () => {
  let server;
  before(async () => { server = await BatonServer.start(RANDOM_MODEL); });
  after(async () => {
    const { code, signal } = await server.stop();
    assert.equal(code, 0, `baton serve exited with ${code ?? signal} after SIGTERM\n${server.stderrTail()}`);
  });

  function check400(r, re, what) {
    const shown = `${what}: HTTP ${r.status} ${r.text.slice(0, 800)}`;
    assert.equal(r.status, 400, shown);
    const e = r.body?.error;
    assert.ok(e && typeof e === 'object', shown);
    assert.equal(typeof e.message, 'string', shown);
    assert.equal(e.type, 'invalid_request_error', shown);
    assert.ok('param' in e && 'code' in e, `param and code present: ${shown}`);
    assert.match(e.message, re, shown);
  }

  for (const [name, fields, re] of cases) {
    test(`chat: ${name}`, async () => {
      const r = await server.post('/v1/chat/completions', chatBody({ ...fields, max_tokens: 8 }));
      check400(r, re, JSON.stringify(fields));
    });
  }

  // A sample of the same on /v1/completions and streamed: still a plain 400 before any event.
  for (const [name, fields, re] of cases.filter((_, i) => i % 4 === 0)) {
    test(`completions: ${name}`, async () => {
      const r = await server.post('/v1/completions', { model: MODEL_ID, prompt: 'x', max_tokens: 8, ...fields });
      check400(r, re, JSON.stringify(fields));
    });
    test(`chat, stream: true: ${name}`, async () => {
      const r = await server.post('/v1/chat/completions', chatBody({ ...fields, max_tokens: 8, stream: true }));
      check400(r, re, JSON.stringify(fields));
    });
  }

  test('the server keeps serving: health and a constrained request after all the 400s', async () => {
    // Every bad request again, at once, then good ones.
    await Promise.all(cases.map(([, fields]) =>
      server.post('/v1/chat/completions', chatBody({ ...fields, max_tokens: 8 }))));
    assert.equal(await server.health(), 200);
    const schema = {
      type: 'object',
      properties: { ok: { type: 'boolean' }, n: { type: 'integer', minimum: 1, maximum: 9 } },
      required: ['ok', 'n'],
      additionalProperties: false,
    };
    const validate = compileValidator(schema);
    for (let seed = 0; seed < 3; seed++) {
      const r = await server.post('/v1/chat/completions',
        chatBody({ response_format: jsonSchemaFormat('ok', schema) }, { seed }));
      assert.equal(r.status, 200, r.text);
      const c = r.body.choices[0];
      assert.equal(c.finish_reason, 'stop', JSON.stringify(c));
      assert.ok(validate(JSON.parse(c.message.content)), c.message.content);
    }
    const plain = await server.post('/v1/chat/completions', chatBody({ max_tokens: 4 }));
    assert.equal(plain.status, 200, plain.text);
  });
});
