/**
 * A binary request body (not text: bytes that are no UTF-8) reaches the backend byte for byte,
 * passed through, read by a policy, or read and written back by a GatewayScript, which sees it as
 * a Uint8Array. Found by a review: a read through the context turned it into a UTF-8 string, every
 * invalid sequence replaced by U+FFFD, and the backend got other bytes than the client sent.
 */
import assert from 'node:assert/strict';
import { isUtf8 } from 'node:buffer';
import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startTestPlatform } from '../helpers/platform.ts';
import type { TestPlatform } from '../helpers/platform.ts';

interface Received {
  sha256: string;
  length: number;
  seen: string | undefined;
}

/** Answers the SHA-256 and length of the body it received, and what the script said it saw. */
const backend = createServer((req, res) => {
  const hash = createHash('sha256');
  let length = 0;
  req.on('data', (chunk: Buffer) => {
    hash.update(chunk);
    length += chunk.length;
  });
  req.on('end', () => {
    const seen = req.headers['x-seen'] as string | undefined;
    const received: Received = { sha256: hash.digest('hex'), length, seen };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(received));
  });
});

const script = (source: string) => ({ gatewayscript: { version: '2.0.0', source } });
/** What the script saw, as the header `x-seen`: the value's kind and length. */
const describeValue = "Object.prototype.toString.call(b) + ':' + b.length";

function apiText(target: string): string {
  const invoke = { invoke: { version: '2.0.0', 'target-url': `${target}/echo`, verb: 'keep' } };
  const cases: Record<string, unknown[]> = {
    pass: [invoke],
    // Reads the body only: the bytes forwarded are still the request's.
    read: [
      script(`var b = context.get('message.body'); context.set('message.headers.x-seen', ${describeValue});`),
      invoke,
    ],
    context: [
      script(
        `var b = context.get('request.body'); context.set('message.headers.x-seen', ${describeValue}); context.set('message.body', b);`,
      ),
      invoke,
    ],
    buffer: [
      script(
        `context.message.body.readAsBuffer(function (error, b) { context.message.header.set('x-seen', ${describeValue}); context.message.body.write(b); });`,
      ),
      invoke,
    ],
    // Bytes a script makes: whole, the body is those bytes; inside a list, their numbers.
    made: [
      script(
        `context.set('message.body', new Uint8Array([0, 255, 128, 10, 0xc3])); context.set('message.headers.x-seen', JSON.stringify({ list: new Uint8Array([1, 254]) }));`,
      ),
      invoke,
    ],
    json: [
      script(
        `context.message.body.readAsJSON(function (error, v) { context.set('message.headers.x-seen', String(error && error.message) + ':' + typeof v); });`,
      ),
      invoke,
    ],
    apim: [
      script(
        `var b = apim.getvariable('message.body'); apim.setvariable('message.headers.x-seen', ${describeValue}); apim.setvariable('message.body', b);`,
      ),
      invoke,
    ],
  };
  return JSON.stringify({
    swagger: '2.0',
    info: { title: 'bytes', 'x-ibm-name': 'bytes', version: '1.0.0' },
    basePath: '/bytes',
    security: [],
    paths: Object.fromEntries(
      Object.keys(cases).map((name) => [
        `/${name}`,
        { post: { operationId: name, responses: { 200: { description: 'OK' } } } },
      ]),
    ),
    'x-ibm-configuration': {
      assembly: {
        execute: [
          {
            'operation-switch': {
              version: '2.0.0',
              case: Object.entries(cases).map(([name, execute]) => ({ operations: [name], execute })),
            },
          },
        ],
      },
    },
  });
}

const productText = `product: 1.0.0
info: {name: bytes-product, title: Bytes, version: 1.0.0}
plans: {default: {title: Default}}
apis: {bytes: {name: 'bytes:1.0.0'}}
`;

/**
 * Random bytes with sequences no UTF-8 decoder keeps (a lone continuation, an overlong, a
 * surrogate) and a NUL, `tail` more at the end (lengths of each remainder by 3, as base64 has).
 */
function binaryPayload(tail: number): Buffer {
  const invalid = Buffer.from([0x00, 0xff, 0xfe, 0x80, 0xc0, 0xaf, 0xc3, 0x28, 0xed, 0xa0, 0x80, 0xf8, 0x88]);
  const bytes = Buffer.concat([randomBytes(3000), invalid, randomBytes(1000), invalid, randomBytes(tail)]);
  assert.equal(isUtf8(bytes), false);
  return bytes;
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

for (const [tier, inlineUs] of [
  ['the script pool', '0'],
  ['the inline tier', '100000'],
] as const) {
  describe(`a binary body reaches the backend unchanged (GatewayScript on ${tier})`, () => {
    let t: TestPlatform;
    before(async () => {
      if (!backend.listening) await new Promise<void>((resolve) => backend.listen(0, '127.0.0.1', resolve));
      t = await startTestPlatform({ role: 'all', env: { PORTICO_SCRIPT_INLINE_US: inlineUs } });
      const target = `http://127.0.0.1:${(backend.address() as AddressInfo).port}`;
      await t.platform.services.importApi(t.orgId, { text: apiText(target), file: 'bytes.json', state: 'online' });
      await t.platform.services.putProduct(t.orgId, 'sandbox', {
        text: productText,
        file: 'bytes-product.yaml',
        state: 'published',
      });
      await t.platform.gateway!.reload();
    });
    after(async () => {
      await t?.close();
    });

    async function send(path: string, contentType: string | undefined, body: Buffer): Promise<Received> {
      const headers: Record<string, string> = contentType === undefined ? {} : { 'content-type': contentType };
      const bytes = new Uint8Array(body);
      const response = await fetch(`${t.gateway}/acme/sandbox/bytes${path}`, { method: 'POST', headers, body: bytes });
      const text = await response.text();
      assert.equal(response.status, 200, text);
      return JSON.parse(text) as Received;
    }

    for (const [index, contentType] of ['application/octet-stream', 'image/png', undefined].entries()) {
      const named = contentType ?? 'no content type';

      test(`passes ${named} through byte for byte`, async () => {
        const body = binaryPayload(index);
        const received = await send('/pass', contentType, body);
        assert.deepEqual([received.sha256, received.length], [sha256(body), body.length]);
      });

      test(`forwards ${named} byte for byte after a script only read it`, async () => {
        const body = binaryPayload(index + 1);
        const received = await send('/read', contentType, body);
        assert.deepEqual([received.sha256, received.length], [sha256(body), body.length]);
        assert.equal(received.seen, `[object Uint8Array]:${body.length}`);
      });

      test(`forwards the bytes a script made as the body, whatever the request's ${named}`, async () => {
        const received = await send('/made', contentType, binaryPayload(index));
        const made = Buffer.from([0, 255, 128, 10, 0xc3]);
        assert.deepEqual([received.sha256, received.length], [sha256(made), made.length]);
        assert.equal(received.seen, '{"list":[1,254]}');
      });

      test(`answers readAsJSON of ${named} binary body with an error, and forwards it unchanged`, async () => {
        const body = binaryPayload(index);
        const received = await send('/json', contentType, body);
        assert.equal(received.seen, 'the body is bytes, not JSON:undefined');
        assert.deepEqual([received.sha256, received.length], [sha256(body), body.length]);
      });

      for (const [wayIndex, way] of ['context', 'buffer', 'apim'].entries()) {
        test(`forwards ${named} byte for byte after a script read it and wrote it back (${way})`, async () => {
          const body = binaryPayload(index + wayIndex);
          const received = await send(`/${way}`, contentType, body);
          assert.equal(received.seen, `[object Uint8Array]:${body.length}`);
          assert.deepEqual([received.sha256, received.length], [sha256(body), body.length]);
        });
      }
    }
  });
}

after(async () => {
  backend.closeAllConnections();
  await new Promise((resolve) => backend.close(resolve));
});
