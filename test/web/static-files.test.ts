/**
 * The portal's and the console's stylesheet and script are served with
 * `X-Content-Type-Options: nosniff` and their own type, like every HTML page: a browser never
 * guesses another type for them.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startPortalDemo } from '../helpers/browser.ts';
import type { RunningDemo } from '../helpers/browser.ts';

let running: RunningDemo;

before(async () => {
  running = await startPortalDemo();
});

after(async () => {
  await running?.close();
});

/** The static file URLs a page links to (stylesheet and script), absolute. */
async function linkedFiles(page: string): Promise<string[]> {
  const text = await (await fetch(page)).text();
  const found = [...text.matchAll(/(?:href|src)="([^"]*\/static\/[^"]+)"/g)].map((m) => m[1].replace(/&amp;/g, '&'));
  return found.map((url) => new URL(url, page).toString());
}

for (const [where, page] of [
  ['portal', () => `${running.portal}/`],
  ['console', () => `${running.management}/console/sign-in`],
] as const) {
  test(`the ${where}'s stylesheet and script carry nosniff and their own content type`, async () => {
    const files = await linkedFiles(page());
    assert.equal(files.length, 2, `${where} links one stylesheet and one script: ${files.join(', ')}`);
    for (const url of files) {
      const answer = await fetch(url);
      await answer.arrayBuffer();
      assert.equal(answer.status, 200, url);
      assert.equal(answer.headers.get('x-content-type-options'), 'nosniff', url);
      const type = url.includes('.css') ? 'text/css; charset=utf-8' : 'text/javascript; charset=utf-8';
      assert.equal(answer.headers.get('content-type'), type, url);
    }
  });
}
