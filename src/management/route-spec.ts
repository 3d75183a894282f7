/**
 * What the management API's route table is made of: the route shape, body schemas, request
 * helpers and response summaries, and the OpenAPI document built from the table.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PorticoError } from '../errors.ts';
import type { Permission } from '../services/provider/roles.ts';

/**
 * What a route needs: a permission of the caller's role (src/services/provider/roles.ts),
 * `signed-in` for what every provider user may do to its own account (`/api/me`, its tokens),
 * or `public` (sign-in only). server.ts checks it before the handler runs.
 */
export type RoutePermission = Permission | 'signed-in' | 'public';

export type Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

export interface RouteSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  summary: string;
  tag: string;
  /** JSON schema of the body (validated by Fastify's ajv). */
  body?: Record<string, unknown>;
  /** Status of a success answer. */
  status?: number;
  permission: RoutePermission;
  handler: Handler;
}

export const stringField = (description: string, extra: Record<string, unknown> = {}) => ({
  type: 'string',
  description,
  ...extra,
});

/**
 * Body of an import: the document as text (YAML or JSON) and the file name it came from, with the
 * initial states the route accepts (an API: online or offline; a product: staged or published),
 * so a state the route does not know is a 400 naming `state` and listing them, not ignored.
 */
function documentBody(states: readonly string[]) {
  return {
    type: 'object',
    required: ['document'],
    additionalProperties: false,
    properties: {
      document: stringField('The definition document, YAML or JSON text', { minLength: 1 }),
      file: stringField('The file name, used in error messages and to resolve references'),
      attachments: {
        type: 'object',
        additionalProperties: { type: 'string' },
        description: 'Files the document refers to (WSDL, XSD, API files for product $refs), by name',
      },
      replace: {
        type: 'boolean',
        description: 'Replace an existing API with the same name and version',
        default: false,
      },
      state: {
        type: 'string',
        enum: states,
        description: `Initial state: ${states.join(' or ')}`,
      },
      activate: {
        type: 'boolean',
        description:
          'Publishing a product brings its offline APIs online; false refuses the publish instead, naming them',
        default: true,
      },
    },
  };
}

/** Body of an API import (and of a WSDL target added to an API). */
export const apiDocumentBody = documentBody(['online', 'offline']);

/** Body of a product create or update. */
export const productDocumentBody = documentBody(['staged', 'published']);

/**
 * A query parameter as text, undefined when absent. Given twice (`?api=a&api=b` arrives as an
 * array) it is a 400 naming the parameter, never a value handed on to the store.
 */
export function queryParam(request: FastifyRequest, name: string): string | undefined {
  const value = (request.query as Record<string, unknown> | undefined)?.[name];
  if (value === undefined || typeof value === 'string') return value;
  throw new PorticoError('MGMT_VALIDATION', { field: name, reason: 'must be given once, as text' });
}

export function param(request: FastifyRequest, name: string): string {
  return (request.params as Record<string, string>)[name];
}

export function orgId(request: FastifyRequest): string {
  return request.providerUser!.org_id;
}

/** The API's name and version from the route's `:name/:version`. */
export function apiParams(request: FastifyRequest): [string, string] {
  return [param(request, 'name'), param(request, 'version')];
}

export function apiSummary(api: {
  name: string;
  version: string;
  title: string;
  state: string;
  base_path: string;
  created_at: string;
  updated_at: string;
}) {
  return {
    name: api.name,
    version: api.version,
    title: api.title,
    state: api.state,
    basePath: api.base_path,
    createdAt: api.created_at,
    updatedAt: api.updated_at,
  };
}

export function productSummary(product: {
  id: string;
  name: string;
  version: string;
  title: string;
  state: string;
  view_type: string;
  subscribe_type: string;
  updated_at: string;
}) {
  return {
    id: product.id,
    name: product.name,
    version: product.version,
    title: product.title,
    state: product.state,
    visibility: { view: product.view_type, subscribe: product.subscribe_type },
    updatedAt: product.updated_at,
  };
}

export function bearer(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header === 'string' && header.startsWith('Bearer ')) return header.slice(7).trim();
  return undefined;
}

/** The OpenAPI 3.1 document of the management API, from the route table. */
export function openApiDocument(table: RouteSpec[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of table) {
    const path = route.url.replace(/:(\w+)/g, '{$1}');
    const parameters = [...route.url.matchAll(/:(\w+)/g)].map((m) => ({
      name: m[1],
      in: 'path',
      required: true,
      schema: { type: 'string' },
    }));
    (paths[path] ??= {})[route.method.toLowerCase()] = {
      summary: route.summary,
      tags: [route.tag],
      ...(parameters.length > 0 ? { parameters } : {}),
      ...(route.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: route.body } } } }
        : {}),
      ...(route.permission === 'public' ? { security: [] } : { 'x-portico-permission': route.permission }),
      responses: {
        [String(route.status ?? 200)]: { description: 'Success' },
        default: {
          description: 'Error',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        },
      },
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Portico management API',
      version: '1.0.0',
      description: 'Provider API: APIs, products, catalogs, subscriptions, users.',
    },
    paths,
    components: {
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'Token from POST /api/login' },
      },
      schemas: {
        Error: {
          type: 'object',
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message'],
              properties: {
                code: { type: 'string' },
                message: { type: 'string' },
                field: { type: 'string' },
                file: { type: 'string' },
                path: { type: 'string' },
                rule: { type: 'string' },
              },
            },
          },
        },
      },
    },
    security: [{ bearer: [] }],
  };
}
