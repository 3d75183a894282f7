/**
 * Turns a validated API document into the {@link ApiDefinition} the gateway compiles from:
 * operations with merged, schema-typed parameters, effective security, security schemes with
 * their client-id/secret role, API properties and the x-ibm-configuration settings with
 * API Connect's defaults.
 */
import type { ActivityLogSettings, ApiDefinition, OperationDef, ParameterDef, SecurityScheme } from './types.ts';
import { apiProperties, catalogProperties } from './api-properties.ts';
import { rawOperations, resolveLocal } from './api-operations.ts';
import type { RawOperation } from './api-operations.ts';
import { isRecord } from './json-path.ts';
import { schemeSupport } from './security-support.ts';

type OpenApiVersion = ApiDefinition['openapi'];
type Document = Record<string, unknown>;

/** Builds the normalised definition; `document` has passed validation. */
export function normaliseApi(document: Document, openapi: OpenApiVersion): ApiDefinition {
  const info = document.info as Document;
  const ibm = isRecord(document['x-ibm-configuration']) ? document['x-ibm-configuration'] : {};
  const title = String(info.title);
  const definition: ApiDefinition = {
    name: typeof info['x-ibm-name'] === 'string' ? info['x-ibm-name'] : slug(title),
    version: String(info.version),
    title,
    basePath: openapi === '2.0' ? cleanBasePath(document.basePath) : serverBasePath(document.servers),
    openapi,
    operations: rawOperations(document).map((raw) => toOperation(document, raw, openapi)),
    securitySchemes: securitySchemes(document, openapi),
    properties: apiProperties(ibm.properties),
    catalogProperties: catalogProperties(ibm.catalogs),
    activityLog: activityLog(ibm['activity-log']),
    buffering: ibm.buffering === true,
    cors: { enabled: !(isRecord(ibm.cors) && ibm.cors.enabled === false) },
    type: typeof ibm.type === 'string' ? ibm.type : 'rest',
    document,
  };
  if (typeof info.description === 'string') definition.description = info.description;
  if (isRecord(ibm.assembly)) definition.assembly = assembly(ibm.assembly);
  return definition;
}

/** `Accessories Logistics` → `accessories-logistics`. */
export function slug(title: string): string {
  const text = title
    .toLowerCase()
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return text === '' ? 'api' : text;
}

function cleanBasePath(value: unknown): string {
  if (typeof value !== 'string') return '';
  const path = value.replace(/\/+$/, '');
  if (path === '') return '';
  return path.startsWith('/') ? path : `/${path}`;
}

// OpenAPI 3 §Server Object: the URL may be relative and may hold {variables} with defaults.
function serverBasePath(servers: unknown): string {
  if (!Array.isArray(servers) || !isRecord(servers[0]) || typeof servers[0].url !== 'string') return '';
  const server = servers[0];
  const variables = isRecord(server.variables) ? server.variables : {};
  const url = String(server.url).replace(/\{([^}]+)\}/g, (whole, name: string) => {
    const variable = variables[name];
    return isRecord(variable) && typeof variable.default === 'string' ? variable.default : whole;
  });
  const withoutOrigin = url.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '').replace(/^\/\/[^/]*/, '');
  return cleanBasePath(withoutOrigin.replace(/[?#].*$/, ''));
}

function toOperation(document: Document, raw: RawOperation, openapi: OpenApiVersion): OperationDef {
  const parameters = mergedParameters(document, raw, openapi);
  const operation: OperationDef = {
    id: raw.id,
    verb: raw.verb,
    path: raw.path,
    parameters,
    security: securityRequirements(raw.operation.security ?? document.security),
  };
  if (typeof raw.operation.summary === 'string') operation.summary = raw.operation.summary;
  const body = openapi === '2.0' ? swaggerBodySchema(parameters) : oasBodySchema(document, raw.operation.requestBody);
  if (body !== undefined) operation.requestBodySchema = body;
  const required =
    openapi === '2.0'
      ? parameters.some((parameter) => parameter.in === 'body' && parameter.required)
      : isRecord(resolveLocal(document, raw.operation.requestBody)) &&
        (resolveLocal(document, raw.operation.requestBody) as Document).required === true;
  if (required) operation.requestBodyRequired = true;
  return operation;
}

// OpenAPI: operation parameters override path-item parameters with the same name and location.
function mergedParameters(document: Document, raw: RawOperation, openapi: OpenApiVersion): ParameterDef[] {
  const merged = new Map<string, ParameterDef>();
  for (const list of [raw.pathItem.parameters, raw.operation.parameters]) {
    if (!Array.isArray(list)) continue;
    for (const written of list) {
      const parameter = resolveLocal(document, written);
      if (!isRecord(parameter)) continue;
      const def = toParameter(parameter, openapi);
      merged.set(`${def.in}:${def.name}`, def);
    }
  }
  return [...merged.values()];
}

// Swagger 2.0 keeps a non-body parameter's type and constraints on the parameter itself.
const swaggerSchemaKeys = [
  'type',
  'format',
  'items',
  'enum',
  'default',
  'maximum',
  'exclusiveMaximum',
  'minimum',
  'exclusiveMinimum',
  'maxLength',
  'minLength',
  'pattern',
  'maxItems',
  'minItems',
  'uniqueItems',
  'multipleOf',
];

function toParameter(parameter: Document, openapi: OpenApiVersion): ParameterDef {
  const location = parameter.in as ParameterDef['in'];
  const def: ParameterDef = {
    name: String(parameter.name),
    in: location,
    required: location === 'path' || parameter.required === true,
    schema: parameterSchema(parameter, openapi),
  };
  if (typeof parameter.description === 'string') def.description = parameter.description;
  return def;
}

function parameterSchema(parameter: Document, openapi: OpenApiVersion): Record<string, unknown> {
  if (openapi !== '2.0' || parameter.in === 'body') {
    if (isRecord(parameter.schema)) return parameter.schema;
    return firstMediaSchema(parameter.content) ?? {};
  }
  const schema: Record<string, unknown> = {};
  for (const key of swaggerSchemaKeys) if (parameter[key] !== undefined) schema[key] = parameter[key];
  if (schema.type === 'file') return { type: 'string', format: 'binary' };
  return schema;
}

function swaggerBodySchema(parameters: ParameterDef[]): Record<string, unknown> | undefined {
  const body = parameters.find((parameter) => parameter.in === 'body');
  if (body !== undefined) return body.schema;
  const form = parameters.filter((parameter) => parameter.in === 'formData');
  if (form.length === 0) return undefined;
  return {
    type: 'object',
    properties: Object.fromEntries(form.map((parameter) => [parameter.name, parameter.schema])),
    required: form.filter((parameter) => parameter.required).map((parameter) => parameter.name),
  };
}

function oasBodySchema(document: Document, requestBody: unknown): Record<string, unknown> | undefined {
  const body = resolveLocal(document, requestBody);
  return isRecord(body) ? firstMediaSchema(body.content) : undefined;
}

// JSON first (application/json, then any +json type), else the first media type declared.
function firstMediaSchema(content: unknown): Record<string, unknown> | undefined {
  if (!isRecord(content)) return undefined;
  const types = Object.keys(content);
  const chosen =
    types.find((type) => type === 'application/json') ?? types.find((type) => /[/+]json\b/.test(type)) ?? types[0];
  const media = chosen === undefined ? undefined : content[chosen];
  return isRecord(media) && isRecord(media.schema) ? media.schema : undefined;
}

function securityRequirements(value: unknown): Array<Record<string, string[]>> {
  if (!Array.isArray(value)) return [];
  return value
    .filter(isRecord)
    .map((requirement) =>
      Object.fromEntries(
        Object.entries(requirement).map(([name, scopes]) => [name, Array.isArray(scopes) ? scopes.map(String) : []]),
      ),
    );
}

function securitySchemes(document: Document, openapi: OpenApiVersion): Record<string, SecurityScheme> {
  const written =
    openapi === '2.0'
      ? document.securityDefinitions
      : isRecord(document.components)
        ? document.components.securitySchemes
        : undefined;
  if (!isRecord(written)) return {};
  const schemes: Record<string, SecurityScheme> = {};
  for (const [name, value] of Object.entries(written)) {
    const scheme = resolveLocal(document, value);
    if (isRecord(scheme)) schemes[name] = toSecurityScheme(name, scheme);
  }
  return schemes;
}

function toSecurityScheme(name: string, scheme: Document): SecurityScheme {
  const result: SecurityScheme = { type: scheme.type as SecurityScheme['type'] };
  if (scheme.type !== 'apiKey') return result;
  result.name = String(scheme.name);
  result.in = scheme.in as SecurityScheme['in'];
  const support = schemeSupport(name, scheme);
  if (typeof support !== 'string' && (support.role === 'client-id' || support.role === 'client-secret')) {
    result.role = support.role;
  }
  return result;
}

// API Connect's defaults: activity logged on success, payload on error, enabled.
function activityLog(value: unknown): ActivityLogSettings {
  const written = isRecord(value) ? value : {};
  return {
    enabled: written.enabled !== false,
    successContent: (written['success-content'] as ActivityLogSettings['successContent'] | undefined) ?? 'activity',
    errorContent: (written['error-content'] as ActivityLogSettings['errorContent'] | undefined) ?? 'payload',
  };
}

function assembly(value: Document): NonNullable<ApiDefinition['assembly']> {
  const result: NonNullable<ApiDefinition['assembly']> = { execute: value.execute as unknown[] };
  if (Array.isArray(value.catch)) result.catch = value.catch;
  if (Array.isArray(value.finally)) result.finally = value.finally;
  return result;
}
