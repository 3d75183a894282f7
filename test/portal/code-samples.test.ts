/** Code samples (src/portal/code-samples.ts): values are quoted for each language, credentials go where the API says. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { codeSamples } from '../../src/portal/code-samples.ts';
import type { OperationView } from '../../src/web/openapi-view.ts';

const run = promisify(execFile);

const operation: OperationView = {
  anchor: 'post-notes-id',
  method: 'POST',
  path: '/notes/{id}',
  summary: '',
  description: '',
  parameters: [
    { name: 'id', in: 'path', required: true, type: 'string', description: '', sample: "it's/1" },
    { name: 'lang', in: 'query', required: true, type: 'string', description: '', sample: 'a&b=c' },
    { name: 'optional', in: 'query', required: false, type: 'string', description: '', sample: 'skipped' },
  ],
  body: {
    contentType: 'application/json',
    required: true,
    example: { text: 'O\'Brien said "$(whoami)" `id`', ok: true, none: null },
  },
  responses: [],
  credentials: [
    { in: 'header', name: 'X-IBM-Client-Id', role: 'id' },
    { in: 'query', name: 'client_secret', role: 'secret' },
  ],
};

const [curl, javascript, python] = codeSamples({
  operation,
  gatewayBase: 'https://gw.example.com/o/c/base',
  clientId: 'abc123',
});

test('path and query values are URL-encoded; optional parameters are left out', () => {
  assert.match(
    curl.code,
    /--url 'https:\/\/gw\.example\.com\/o\/c\/base\/notes\/it'\\''s%2F1\?lang=a%26b%3Dc&client_secret=YOUR_CLIENT_SECRET'/,
  );
  assert.doesNotMatch(curl.code, /skipped/);
});

test('the curl sample is one shell command whose body reaches the server byte for byte', async () => {
  // printf stands in for curl: the shell's own parsing shows what curl would receive.
  const { stdout } = await run('sh', ['-c', curl.code.replace(/^curl /, "printf '%s\\n' ")]);
  assert.ok(stdout.includes('X-IBM-Client-Id: abc123'));
  const data = stdout.slice(stdout.indexOf('--data\n') + '--data\n'.length).trimEnd();
  assert.deepEqual(JSON.parse(data), operation.body!.example);
});

test('the fetch sample is valid JavaScript that sends the same body', () => {
  assert.match(javascript.code, /"X-IBM-Client-Id": "abc123"/);
  const body = /body: JSON\.stringify\(([\s\S]*)\),\n\}\);/.exec(javascript.code)?.[1] ?? '';
  assert.deepEqual(JSON.parse(body), operation.body!.example);
  assert.doesNotThrow(() => new Function(`return async () => { ${javascript.code} }`));
});

test('the requests sample writes Python literals (True, None) and the client id header', () => {
  assert.match(python.code, /"X-IBM-Client-Id": "abc123",/);
  assert.match(
    python.code,
    /json=\{\n {8}"text": "O'Brien said \\"\$\(whoami\)\\" `id`",\n {8}"ok": True,\n {8}"none": None,\n {4}\},/,
  );
});

test('signed out, the client id is a placeholder', () => {
  const [anonymous] = codeSamples({ operation, gatewayBase: 'https://gw.example.com/o/c/base' });
  assert.match(anonymous.code, /--header 'X-IBM-Client-Id: YOUR_CLIENT_ID'/);
});
