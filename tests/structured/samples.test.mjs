// Sampled structured output validates: for every schema in schemas/, 50 seeded samples at
// temperature 1 (seed = i) through /v1/chat/completions with response_format json_schema, on a
// random-weight model and on stories260K; every one must end with finish_reason "stop", parse,
// and validate with ajv. Then a few samples for the other constraint kinds (json_object, regex,
// GBNF, guided_choice, the vLLM / llama-server spellings), /v1/completions and streaming.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  BatonServer, CONCURRENCY, MAX_TOKENS, chatBody, clip, compileValidator, describeErrors,
  MODEL_ID, STORIES_MODEL, jsonSchemaFormat, loadSchemas, models, pool, poolEach,
} from './helpers.mjs';

const SAMPLES = Number(process.env.BATON_ST_SAMPLES || 50);
const schemas = loadSchemas();

if (!STORIES_MODEL) {
  test('samples on stories260K', { skip: 'stories260K.gguf not found in ../shared/models' }, () => {});
}

// One sample's verdict: null when it is good, else a line saying what is wrong with it.
function judge(validate, r, seed) {
  if (r.error) return `seed ${seed}: request failed: ${r.error.message}`;
  if (r.status !== 200) return `seed ${seed}: HTTP ${r.status}: ${clip(r.text, 600)}`;
  const choice = r.body.choices?.[0];
  const text = choice?.message?.content ?? choice?.text;
  if (choice?.finish_reason !== 'stop') {
    return `seed ${seed}: finish_reason ${JSON.stringify(choice?.finish_reason)} ` +
      `(${r.body.usage?.completion_tokens} tokens): ${clip(text)}`;
  }
  let value;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return `seed ${seed}: not JSON (${e.message}): ${clip(text)}`;
  }
  if (validate && !validate(value)) {
    return `seed ${seed}: invalid (${describeErrors(validate)}): ${clip(text)}`;
  }
  return null;
}

function report(name, bad, total) {
  return `${name}: ${bad.length}/${total} samples failed; first ones:\n${bad.slice(0, 4).join('\n\n')}`;
}

for (const model of models()) {
  describe(`samples on ${model.name}`, () => {
    let server;
    // Every schema's samples are requested up front through one pool, so the server's batch
    // stays full across schema boundaries; each test awaits its own schema's results.
    const results = new Map();
    const started = Date.now();
    let tokens = 0;

    before(async () => {
      server = await BatonServer.start(model.path);
      const jobs = [];
      for (const s of schemas) {
        for (let seed = 0; seed < SAMPLES; seed++) jobs.push({ s, seed });
      }
      const all = poolEach(jobs, CONCURRENCY, async ({ s, seed }) => {
        const r = await server.post('/v1/chat/completions', chatBody(
          { response_format: jsonSchemaFormat(s.name, s.schema) },
          { seed, prompt: `Write one ${s.schema.title || s.name} as JSON.` }));
        tokens += r.body?.usage?.completion_tokens ?? 0;
        return r;
      });
      for (const s of schemas) {
        const first = jobs.findIndex((j) => j.s === s);
        results.set(s.name, Promise.all(all.slice(first, first + SAMPLES)));
      }
    });

    after(async () => {
      const secs = (Date.now() - started) / 1000;
      console.log(`# ${model.name}: ${schemas.length} schemas x ${SAMPLES} samples, ` +
        `${tokens} completion tokens in ${secs.toFixed(1)} s`);
      const { code, signal } = await server.stop();
      assert.equal(code, 0, `baton serve exited with ${code ?? signal} after SIGTERM\n${server.stderrTail()}`);
    });

    for (const s of schemas) {
      test(`${s.name}: ${SAMPLES} samples validate`, async () => {
        const validate = compileValidator(s.schema);
        const rs = await results.get(s.name);
        const bad = rs.map((r, seed) => judge(validate, r, seed)).filter(Boolean);
        assert.equal(bad.length, 0, report(s.name, bad, rs.length));
      });
    }

    test('the same seed gives the same output under a concurrent batch', async () => {
      const s = schemas.find((x) => x.name === 'invoice') ?? schemas[0];
      const body = (seed) => chatBody({ response_format: jsonSchemaFormat(s.name, s.schema) }, { seed });
      const seeds = [0, 1, 2, 3, 0, 1, 2, 3];
      const rs = await pool(seeds, CONCURRENCY, (seed) => server.post('/v1/chat/completions', body(seed)));
      for (let i = 0; i < 4; i++) {
        assert.equal(rs[i].status, 200, rs[i].text);
        assert.equal(rs[i + 4].body.choices[0].message.content, rs[i].body.choices[0].message.content,
          `seed ${seeds[i]} differs between two runs`);
      }
    });

    // json_object bounds no string, and a random-weight model with a 32,000-token vocabulary
    // writes a closing quote about once in a few hundred tokens: the answer is closed in time
    // because it is planned within max_tokens.
    test('json_object: any JSON object', async () => {
      const rs = await pool([...Array(8).keys()], CONCURRENCY, (seed) => server.post(
        '/v1/chat/completions',
        chatBody({ response_format: { type: 'json_object' }, max_tokens: 48 }, { seed })));
      const bad = rs.map((r, seed) => {
        const why = judge(null, r, seed);
        if (why) return why;
        const v = JSON.parse(r.body.choices[0].message.content);
        return v && typeof v === 'object' && !Array.isArray(v) ? null
          : `seed ${seed}: not an object: ${r.body.choices[0].message.content}`;
      }).filter(Boolean);
      assert.equal(bad.length, 0, report('json_object', bad, rs.length));
    });

    // Unbounded strings and arrays under a budget from the shortest output up to 4x it: every
    // answer parses and validates; below the shortest output, a 400 naming both numbers.
    test('every max_tokens from the shortest output up ends valid', async () => {
      const schema = {
        type: 'object',
        properties: {
          title: { type: 'string' },
          tags: { type: 'array', items: { type: 'string' } },
          meta: { type: 'object', properties: { note: { type: 'string' } }, required: ['note'] },
        },
        required: ['title', 'tags', 'meta'],
        additionalProperties: false,
      };
      const format = jsonSchemaFormat('open', schema);
      const refused = await server.post('/v1/chat/completions', chatBody({ response_format: format, max_tokens: 2 }));
      assert.equal(refused.status, 400, refused.text);
      assert.equal(refused.body.error.code, 'max_tokens_too_small');
      const minimum = Number(/takes (\d+) tokens/.exec(refused.body.error.message)?.[1]);
      assert.ok(minimum > 2 && minimum < 200, refused.body.error.message);
      const validate = compileValidator(schema);
      const n = Number(process.env.BATON_ST_BUDGET_SAMPLES || 200);
      const budgets = [...Array(n).keys()].map((seed) => minimum + (seed % (3 * minimum + 1)));
      const rs = await pool([...budgets.keys()], CONCURRENCY, (seed) => server.post(
        '/v1/chat/completions', chatBody({ response_format: format, max_tokens: budgets[seed] }, { seed })));
      const bad = rs.map((r, seed) => {
        if (r.error || r.status !== 200) return `seed ${seed}: ${r.error?.message ?? `HTTP ${r.status} ${r.text}`}`;
        const text = r.body.choices[0].message.content;
        let value;
        try {
          value = JSON.parse(text);
        } catch (e) {
          return `seed ${seed} (max_tokens ${budgets[seed]}): not JSON (${e.message}): ${clip(text)}`;
        }
        return validate(value) ? null : `seed ${seed}: invalid (${describeErrors(validate)}): ${clip(text)}`;
      }).filter(Boolean);
      assert.equal(bad.length, 0, report('budgets', bad, rs.length));
    });

    test('response_format text: unconstrained', async () => {
      const r = await server.post('/v1/chat/completions',
        chatBody({ response_format: { type: 'text' }, max_tokens: 8 }, { seed: 1 }));
      assert.equal(r.status, 200, r.text);
      assert.ok(['stop', 'length'].includes(r.body.choices[0].finish_reason));
    });

    // Whole-output constraints checked against an equivalent JavaScript regex.
    const regexCases = [
      { field: 'regex', re: '(cat|dog)s? [0-9]{1,3}' },
      { field: 'regex', re: '[A-Z][a-z]{2,8}( [A-Z][a-z]{2,8}){0,2}' },
      { field: 'regex', re: '\\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\\d|3[01])' },
      { field: 'guided_regex', re: '(yes|no|maybe)!{0,3}' },
      { field: 'regex', re: '[\\u00e0-\\u00ff]{1,4}-[^\\n"]{0,6}' },
    ];
    for (const { field, re } of regexCases) {
      test(`${field} ${re}: every sample matches in full`, async () => {
        const full = new RegExp(`^(?:${re})$`, 'u');
        const rs = await pool([...Array(6).keys()], CONCURRENCY, (seed) => server.post(
          '/v1/chat/completions', chatBody({ [field]: re, max_tokens: 256 }, { seed })));
        const bad = rs.map((r, seed) => {
          if (r.error || r.status !== 200) return `seed ${seed}: ${r.error?.message ?? `HTTP ${r.status} ${r.text}`}`;
          const c = r.body.choices[0];
          if (c.finish_reason !== 'stop') return `seed ${seed}: finish_reason ${c.finish_reason}: ${JSON.stringify(c.message.content)}`;
          return full.test(c.message.content) ? null : `seed ${seed}: no match: ${JSON.stringify(c.message.content)}`;
        }).filter(Boolean);
        assert.equal(bad.length, 0, report(`${field} ${re}`, bad, rs.length));
      });
    }

    // GBNF grammars with a checker each (a regex for the regular one, a parser for the nested one).
    const gbnfCases = [
      {
        field: 'grammar',
        name: 'key=value list',
        text: 'root ::= pair ("; " pair){0,3}\npair ::= key "=" value\nkey ::= [a-z_]{1,8}\n' +
          'value ::= [0-9]{1,6} | "\\"" [a-zA-Z ]{0,10} "\\""   # a number or a short quoted string\n',
        check: (t) => /^[a-z_]{1,8}=(?:[0-9]{1,6}|"[a-zA-Z ]{0,10}")(?:; [a-z_]{1,8}=(?:[0-9]{1,6}|"[a-zA-Z ]{0,10}")){0,3}$/.test(t),
      },
      {
        field: 'guided_grammar',
        name: 'balanced lists',
        text: 'root ::= list\nlist ::= "(" ws (item (ws item){0,2})? ws ")"\n' +
          'item ::= atom | list\natom ::= [a-z]{1,3} | [0-9]\nws ::= " "?\n',
        check: (t) => {
          // list := "(" ws (item (ws item){0,2})? ws ")"; recursive descent with backtracking
          // over the optional spaces is unnecessary: atoms never start with a space.
          let i = 0;
          const ws = () => { if (t[i] === ' ') i++; };
          function item() {
            if (t[i] === '(') return list();
            const m = /^(?:[a-z]{1,3}|[0-9])/.exec(t.slice(i));
            if (!m) return false;
            i += m[0].length;
            return true;
          }
          function list() {
            if (t[i] !== '(') return false;
            i++;
            ws();
            let n = 0;
            while (t[i] !== ')' && i < t.length) {
              if (n === 3 || !item()) return false;
              n++;
              ws();
            }
            if (t[i] !== ')') return false;
            i++;
            return true;
          }
          return list() && i === t.length;
        },
      },
    ];
    for (const g of gbnfCases) {
      test(`${g.field}: ${g.name}`, async () => {
        const rs = await pool([...Array(6).keys()], CONCURRENCY, (seed) => server.post(
          '/v1/chat/completions', chatBody({ [g.field]: g.text, max_tokens: 512 }, { seed })));
        const bad = rs.map((r, seed) => {
          if (r.error || r.status !== 200) return `seed ${seed}: ${r.error?.message ?? `HTTP ${r.status} ${r.text}`}`;
          const c = r.body.choices[0];
          if (c.finish_reason !== 'stop') return `seed ${seed}: finish_reason ${c.finish_reason}: ${JSON.stringify(c.message.content)}`;
          return g.check(c.message.content) ? null : `seed ${seed}: not in the grammar: ${JSON.stringify(c.message.content)}`;
        }).filter(Boolean);
        assert.equal(bad.length, 0, report(g.name, bad, rs.length));
      });
    }

    test('guided_choice: exactly one of the choices', async () => {
      const choices = ['positive', 'negative', 'neutral', 'mixed feelings', 'n/a'];
      const rs = await pool([...Array(10).keys()], CONCURRENCY, (seed) => server.post(
        '/v1/chat/completions', chatBody({ guided_choice: choices }, { seed })));
      const seen = new Set();
      for (const [seed, r] of rs.entries()) {
        assert.equal(r.status, 200, `seed ${seed}: ${r.text}`);
        const c = r.body.choices[0];
        assert.equal(c.finish_reason, 'stop', `seed ${seed}: ${JSON.stringify(c)}`);
        assert.ok(choices.includes(c.message.content), `seed ${seed}: ${JSON.stringify(c.message.content)}`);
        seen.add(c.message.content);
      }
      assert.ok(seen.size >= 2, `10 samples at temperature 1 all chose ${[...seen]}`);
    });

    // The schema given as json_schema (llama-server) and guided_json (vLLM) instead of
    // response_format.
    for (const field of ['json_schema', 'guided_json']) {
      test(`${field}: the schema itself as the field`, async () => {
        const s = schemas.find((x) => x.name === 'person') ?? schemas[0];
        const validate = compileValidator(s.schema);
        const rs = await pool([...Array(6).keys()], CONCURRENCY, (seed) => server.post(
          '/v1/chat/completions', chatBody({ [field]: s.schema }, { seed })));
        const bad = rs.map((r, seed) => judge(validate, r, seed)).filter(Boolean);
        assert.equal(bad.length, 0, report(field, bad, rs.length));
      });
    }

    test('/v1/completions with response_format json_schema', async () => {
      const s = schemas.find((x) => x.name === 'recipe') ?? schemas[0];
      const validate = compileValidator(s.schema);
      const rs = await pool([...Array(8).keys()], CONCURRENCY, (seed) => server.post('/v1/completions', {
        model: MODEL_ID, prompt: 'A recipe as JSON:', temperature: 1, seed, max_tokens: MAX_TOKENS,
        response_format: jsonSchemaFormat(s.name, s.schema),
      }));
      const bad = rs.map((r, seed) => judge(validate, r, seed)).filter(Boolean);
      assert.equal(bad.length, 0, report('completions', bad, rs.length));
    });

    test('/v1/completions with regex', async () => {
      const rs = await pool([...Array(4).keys()], CONCURRENCY, (seed) => server.post('/v1/completions', {
        model: MODEL_ID, prompt: 'Code:', temperature: 1, seed, max_tokens: 64, regex: '[A-F0-9]{4}-[a-z]{2}',
      }));
      for (const [seed, r] of rs.entries()) {
        assert.equal(r.status, 200, `seed ${seed}: ${r.text}`);
        assert.equal(r.body.choices[0].finish_reason, 'stop', JSON.stringify(r.body));
        assert.match(r.body.choices[0].text, /^[A-F0-9]{4}-[a-z]{2}$/);
      }
    });

    // Streaming: the deltas concatenated validate, the last choice event says "stop", and the
    // text equals the non-streamed one for the same seed.
    for (const route of ['/v1/chat/completions', '/v1/completions']) {
      test(`streamed ${route}: the concatenated deltas validate`, async () => {
        const s = schemas.find((x) => x.name === 'zod_definitions') ?? schemas[0];
        const validate = compileValidator(s.schema);
        const chat = route === '/v1/chat/completions';
        const body = (seed) => (chat
          ? chatBody({ response_format: jsonSchemaFormat(s.name, s.schema) }, { seed })
          : { model: MODEL_ID, prompt: 'An order as JSON:', temperature: 1, seed, max_tokens: MAX_TOKENS,
            response_format: jsonSchemaFormat(s.name, s.schema) });
        const seeds = [...Array(6).keys()];
        const streamed = await pool(seeds, CONCURRENCY, (seed) => server.postStream(route, body(seed)));
        const plain = await pool(seeds, CONCURRENCY, (seed) => server.post(route, body(seed)));
        const bad = [];
        for (const seed of seeds) {
          const r = streamed[seed];
          if (r.error || r.status !== 200) { bad.push(`seed ${seed}: ${r.error?.message ?? `HTTP ${r.status} ${r.text}`}`); continue; }
          if (!r.done) bad.push(`seed ${seed}: no [DONE]`);
          let text = '';
          let finish = null;
          for (const e of r.events) {
            for (const c of e.choices ?? []) {
              text += (chat ? c.delta?.content : c.text) ?? '';
              if (c.finish_reason) finish = c.finish_reason;
            }
          }
          if (finish !== 'stop') { bad.push(`seed ${seed}: streamed finish_reason ${finish}: ${clip(text)}`); continue; }
          let v;
          try { v = JSON.parse(text); } catch (e) { bad.push(`seed ${seed}: streamed text not JSON (${e.message}): ${clip(text)}`); continue; }
          if (!validate(v)) bad.push(`seed ${seed}: streamed text invalid (${describeErrors(validate)}): ${clip(text)}`);
          const p = plain[seed];
          const ptext = chat ? p.body?.choices?.[0]?.message?.content : p.body?.choices?.[0]?.text;
          if (ptext !== text) bad.push(`seed ${seed}: streamed ${clip(text, 400)} != non-streamed ${clip(ptext, 400)}`);
        }
        assert.equal(bad.length, 0, report(`stream ${route}`, bad, seeds.length));
      });
    }
  });
}
