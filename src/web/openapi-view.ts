/**
 * Reads an API's stored OpenAPI document (Swagger 2.0 or OpenAPI 3.x) into what the API page
 * shows: operations with their parameters, request and response schemas (local `$ref`s
 * resolved, cycles marked) and examples, and where the client id and secret go.
 */

import { exampleFor } from './examples.ts';

type Json = Record<string, unknown>;

export interface ParameterView {
  name: string;
  in: string;
  required: boolean;
  type: string;
  description: string;
  /** The document's own example, the value Try it starts with. */
  example?: unknown;
  /** The document's example, else one generated from the schema (for code samples). */
  sample?: unknown;
  enum?: unknown[];
}

export interface BodyView {
  contentType: string;
  schema?: unknown;
  example?: unknown;
  required: boolean;
}

export interface ResponseView {
  status: string;
  description: string;
  contentType?: string;
  schema?: unknown;
  example?: unknown;
}

/** Where a credential goes on a call: `X-IBM-Client-Id` header, `client_secret` query, … */
export interface CredentialPlacement {
  in: 'header' | 'query';
  name: string;
  role: 'id' | 'secret';
}

/** An operation secured by a native OAuth provider (`x-ibm-oauth-provider`) and the scopes it needs. */
export interface OAuthRequirement {
  scheme: string;
  provider: string;
  scopes: string[];
}

export interface OperationView {
  /** A stable anchor: method and path. */
  anchor: string;
  method: string;
  path: string;
  operationId?: string;
  summary: string;
  description: string;
  parameters: ParameterView[];
  body?: BodyView;
  responses: ResponseView[];
  credentials: CredentialPlacement[];
  oauth?: OAuthRequirement;
}

export interface ApiView {
  title: string;
  version: string;
  description: string;
  basePath: string;
  kind: 'swagger2' | 'openapi3';
  operations: OperationView[];
}

const methods = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'];

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** The value at a local JSON pointer (`#/definitions/x`), or undefined. */
function pointer(root: Json, ref: string): unknown {
  if (!ref.startsWith('#/')) return undefined;
  let node: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isObject(node) && !Array.isArray(node)) return undefined;
    node = (node as Json)[key];
  }
  return node;
}

/** A copy of `node` with local `$ref`s replaced by their targets; a cycle becomes `{ $circular: ref }`. */
export function resolveRefs(node: unknown, root: Json, trail: string[] = [], depth = 0): unknown {
  if (depth > 40) return { $truncated: true };
  if (Array.isArray(node)) return node.map((item) => resolveRefs(item, root, trail, depth + 1));
  if (!isObject(node)) return node;
  if (typeof node.$ref === 'string') {
    const ref = node.$ref;
    if (trail.includes(ref)) return { $circular: ref };
    const target = pointer(root, ref);
    if (target === undefined) return { $unresolved: ref };
    return resolveRefs(target, root, [...trail, ref], depth + 1);
  }
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) out[key] = resolveRefs(value, root, trail, depth + 1);
  return out;
}

/** A short type description: `string`, `integer (int32)`, `array of rates`. */
export function typeOf(schema: unknown): string {
  if (!isObject(schema)) return '';
  if (schema.$circular) return `(recursive ${String(schema.$circular).split('/').pop()})`;
  const type = Array.isArray(schema.type)
    ? schema.type.join(' | ')
    : text(schema.type) || (schema.properties ? 'object' : '');
  if (type === 'array') return `array of ${typeOf(schema.items) || 'items'}`;
  return schema.format ? `${type} (${text(schema.format)})` : type;
}

/** The operation's first security alternative and the document's schemes, if it has both. */
function firstRequirement(
  document: Json,
  operation: Json,
  kind: ApiView['kind'],
): { first: Json; schemes: Json } | undefined {
  const requirements = Array.isArray(operation.security)
    ? operation.security
    : Array.isArray(document.security)
      ? document.security
      : [];
  const schemes =
    (kind === 'swagger2'
      ? document.securityDefinitions
      : isObject(document.components)
        ? document.components.securitySchemes
        : undefined) ?? {};
  // The first alternative is the one the portal fills in (API Connect lists client id first).
  const first = requirements.find(isObject);
  return first && isObject(schemes) ? { first, schemes } : undefined;
}

function credentialsFor(document: Json, operation: Json, kind: ApiView['kind']): CredentialPlacement[] {
  const requirement = firstRequirement(document, operation, kind);
  if (!requirement) return [];
  const { first, schemes } = requirement;
  const out: CredentialPlacement[] = [];
  for (const name of Object.keys(first)) {
    const scheme = schemes[name];
    if (!isObject(scheme) || scheme.type !== 'apiKey' || (scheme.in !== 'header' && scheme.in !== 'query')) continue;
    const keyName = text(scheme.name);
    out.push({ in: scheme.in, name: keyName, role: /secret/i.test(keyName) ? 'secret' : 'id' });
  }
  return out;
}

/** The first alternative's oauth2 scheme that names a native provider (the portal fills in only that one). */
function oauthFor(document: Json, operation: Json, kind: ApiView['kind']): OAuthRequirement | undefined {
  const requirement = firstRequirement(document, operation, kind);
  if (!requirement) return undefined;
  for (const [name, scopes] of Object.entries(requirement.first)) {
    const scheme = requirement.schemes[name];
    if (!isObject(scheme) || scheme.type !== 'oauth2' || typeof scheme['x-ibm-oauth-provider'] !== 'string') continue;
    return {
      scheme: name,
      provider: scheme['x-ibm-oauth-provider'],
      scopes: Array.isArray(scopes) ? scopes.map(String) : [],
    };
  }
  return undefined;
}

function parameterView(raw: Json, kind: ApiView['kind']): ParameterView {
  const schema = kind === 'openapi3' || raw.in === 'body' ? (raw.schema as Json | undefined) : raw;
  const example = raw.example ?? (isObject(schema) ? schema.example : undefined);
  return {
    name: text(raw.name),
    in: text(raw.in),
    required: raw.required === true || raw.in === 'path',
    type: typeOf(schema),
    description: text(raw.description),
    example,
    sample: example ?? exampleFor(schema, { name: text(raw.name) }),
    enum: isObject(schema) && Array.isArray(schema.enum) ? schema.enum : undefined,
  };
}

/** Path-level parameters merged with the operation's own (the operation's win, per name+in). */
function mergedParameters(pathItem: Json, operation: Json): Json[] {
  const list = [
    ...(Array.isArray(pathItem.parameters) ? pathItem.parameters : []),
    ...(Array.isArray(operation.parameters) ? operation.parameters : []),
  ].filter(isObject);
  const byKey = new Map<string, Json>();
  for (const p of list) byKey.set(`${text(p.in)}:${text(p.name)}`, p);
  return [...byKey.values()];
}

function firstContent(content: unknown): { contentType: string; media: Json } | undefined {
  if (!isObject(content)) return undefined;
  const entries = Object.entries(content).filter(([, media]) => isObject(media)) as Array<[string, Json]>;
  const preferred = entries.find(([type]) => /json/i.test(type)) ?? entries[0];
  return preferred ? { contentType: preferred[0], media: preferred[1] } : undefined;
}

function mediaExample(media: Json): unknown {
  if (media.example !== undefined) return media.example;
  if (isObject(media.examples)) {
    const first = Object.values(media.examples)[0];
    if (isObject(first) && first.value !== undefined) return first.value;
  }
  return exampleFor(media.schema);
}

function operationView(
  document: Json,
  path: string,
  method: string,
  pathItem: Json,
  operation: Json,
  kind: ApiView['kind'],
): OperationView {
  const rawParameters = mergedParameters(pathItem, operation);
  const parameters = rawParameters.filter((p) => p.in !== 'body').map((p) => parameterView(p, kind));
  let body: BodyView | undefined;
  const bodyParameter = rawParameters.find((p) => p.in === 'body');
  if (kind === 'swagger2' && bodyParameter) {
    const consumes = Array.isArray(operation.consumes)
      ? operation.consumes
      : Array.isArray(document.consumes)
        ? document.consumes
        : [];
    body = {
      contentType: text(consumes[0]) || 'application/json',
      schema: bodyParameter.schema,
      example: exampleFor(bodyParameter.schema),
      required: bodyParameter.required === true,
    };
  } else if (kind === 'openapi3' && isObject(operation.requestBody)) {
    const chosen = firstContent(operation.requestBody.content);
    if (chosen)
      body = {
        contentType: chosen.contentType,
        schema: chosen.media.schema,
        example: mediaExample(chosen.media),
        required: operation.requestBody.required === true,
      };
  }
  const produces = Array.isArray(operation.produces)
    ? operation.produces
    : Array.isArray(document.produces)
      ? document.produces
      : [];
  const responses = Object.entries(isObject(operation.responses) ? operation.responses : {})
    .filter(([, r]) => isObject(r))
    .map(([status, r]): ResponseView => {
      const response = r as Json;
      if (kind === 'swagger2') {
        const examples = isObject(response.examples) ? response.examples : {};
        const example = Object.values(examples)[0] ?? exampleFor(response.schema);
        return {
          status,
          description: text(response.description),
          contentType: text(produces[0]) || undefined,
          schema: response.schema,
          example,
        };
      }
      const chosen = firstContent(response.content);
      return {
        status,
        description: text(response.description),
        contentType: chosen?.contentType,
        schema: chosen?.media.schema,
        example: chosen ? mediaExample(chosen.media) : undefined,
      };
    });
  return {
    anchor: `${method}-${path}`
      .replace(/[^A-Za-z0-9]+/g, '-')
      .replace(/^-|-$/g, '')
      .toLowerCase(),
    method: method.toUpperCase(),
    path,
    operationId: text(operation.operationId) || undefined,
    summary: text(operation.summary),
    description: text(operation.description),
    parameters,
    body,
    responses,
    credentials: credentialsFor(document, operation, kind),
    oauth: oauthFor(document, operation, kind),
  };
}

/** The API page's view of a stored document. */
export function apiView(stored: Json): ApiView {
  const document = resolveRefs(stored, stored) as Json;
  const kind: ApiView['kind'] = typeof stored.openapi === 'string' ? 'openapi3' : 'swagger2';
  const info = isObject(document.info) ? document.info : {};
  let basePath = text(document.basePath);
  if (kind === 'openapi3' && Array.isArray(document.servers) && isObject(document.servers[0])) {
    const url = text(document.servers[0].url);
    basePath = url.startsWith('/') ? url : url.replace(/^[a-z]+:\/\/[^/]+/i, '');
  }
  const operations: OperationView[] = [];
  for (const [path, item] of Object.entries(isObject(document.paths) ? document.paths : {})) {
    if (!isObject(item)) continue;
    for (const method of methods) {
      const operation = item[method];
      if (isObject(operation)) operations.push(operationView(document, path, method, item, operation, kind));
    }
  }
  return {
    title: text(info.title),
    version: text(info.version),
    description: text(info.description),
    basePath: basePath.replace(/\/$/, ''),
    kind,
    operations,
  };
}
