/**
 * The portal's and console's static files (one stylesheet, one script), read once at start and
 * served from memory with a content hash in the URL, so they can be cached for long.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';

const folder = new URL('./static/', import.meta.url);

interface StaticFile {
  body: string;
  type: string;
  hash: string;
}

function load(name: string, type: string): StaticFile {
  const body = readFileSync(new URL(name, folder), 'utf8');
  return { body, type, hash: createHash('sha256').update(body).digest('hex').slice(0, 12) };
}

const files: Record<string, StaticFile> = {
  'portal.css': load('portal.css', 'text/css; charset=utf-8'),
  'portal.js': load('portal.js', 'text/javascript; charset=utf-8'),
};

/** The versioned URL of a static file under `prefix` (e.g. `/static`). */
export function staticUrl(prefix: string, name: keyof typeof files & string): string {
  return `${prefix}/${name}?v=${files[name].hash}`;
}

/** Serves the static files under `${prefix}/`. */
export function registerStaticFiles(app: FastifyInstance, prefix: string): void {
  app.get(`${prefix}/:name`, async (request, reply) => {
    // An own property only: `__proto__` or `constructor` is an unknown file (404), not Object.prototype's.
    const name = (request.params as { name: string }).name;
    if (!Object.hasOwn(files, name)) return reply.callNotFound();
    const file = files[name];
    // nosniff: the browser takes the declared type and never guesses another (as for HTML pages).
    return reply
      .header('content-type', file.type)
      .header('x-content-type-options', 'nosniff')
      .header('cache-control', 'public, max-age=86400')
      .send(file.body);
  });
}
