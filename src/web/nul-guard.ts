/**
 * U+0000 refused in what a request to the management API, the console or the portal carries.
 *
 * PostgreSQL cannot store U+0000 in text, nor compare with it: an app title, a name, an email
 * address or an id holding one failed in the store (a 500, or a 503 when the store was then asked
 * whether it answers), where SQLite stored it. Refused here, before any handler, it is the same 400
 * on either store, naming the field. Nothing a person types holds U+0000.
 */
import type { FastifyRequest } from 'fastify';
import { PorticoError } from '../errors.ts';
import { nulField } from '../nul.ts';

/** A `preValidation` hook: the request's path parameters, query and body may not hold U+0000. */
export async function refuseNul(request: FastifyRequest): Promise<void> {
  const field = nulField(request.params, '') ?? nulField(request.query, '') ?? nulField(request.body, '');
  if (field === undefined) return;
  throw new PorticoError('MGMT_VALIDATION', { field: field || 'body', reason: 'must not contain U+0000 (NUL)' });
}
