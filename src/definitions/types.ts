/**
 * What the definitions module produces from an API or product document. The gateway compiles
 * from these shapes; the store keeps the original document next to them.
 */

export type HttpVerb = 'get' | 'put' | 'post' | 'delete' | 'options' | 'head' | 'patch';

/** An operation parameter, normalised across OpenAPI 2.0 and 3.x. */
export interface ParameterDef {
  name: string;
  in: 'query' | 'header' | 'path' | 'cookie' | 'body' | 'formData';
  required: boolean;
  /** JSON schema of the value (OpenAPI 2 `type`/`format`/`items` folded into a schema; OAS3 `schema`). */
  schema: Record<string, unknown>;
  description?: string;
}

export interface OperationDef {
  /** `operationId`, when the document gives one. */
  id: string | undefined;
  verb: HttpVerb;
  /** Path template relative to the base path, e.g. `/items/{id}`. */
  path: string;
  summary?: string;
  /** Path-level and operation-level parameters merged (operation wins on name+in). */
  parameters: ParameterDef[];
  /** Effective security requirements (operation-level, else API-level); [] = none. */
  security: Array<Record<string, string[]>>;
  /** JSON schema of the request body, when declared. */
  requestBodySchema?: Record<string, unknown>;
  /** A body is required (Swagger `in: body` with `required: true`; OAS3 `requestBody.required`). */
  requestBodyRequired?: boolean;
}

export interface SecurityScheme {
  type: 'apiKey' | 'basic' | 'oauth2' | 'http' | 'openIdConnect' | 'mutualTLS';
  /** For apiKey: the header or query name, e.g. `X-IBM-Client-Id`. */
  name?: string;
  in?: 'header' | 'query' | 'cookie';
  /**
   * For apiKey: whether this key carries the client id or the client secret (`x-key-type`, else
   * the name); absent when the gateway cannot enforce the key (see security-support.ts).
   */
  role?: 'client-id' | 'client-secret';
}

export interface ApiProperty {
  value: string;
  description?: string;
  encoded?: boolean;
}

export interface ActivityLogSettings {
  enabled: boolean;
  successContent: 'none' | 'activity' | 'header' | 'payload';
  errorContent: 'none' | 'activity' | 'header' | 'payload';
}

/** A parsed, fully validated API document. */
export interface ApiDefinition {
  /** `info.x-ibm-name`, else a slug of `info.title`. */
  name: string;
  version: string;
  title: string;
  description?: string;
  /** `/logistics`: Swagger `basePath`, or the path part of the first OAS3 server URL; '' for none. */
  basePath: string;
  openapi: '2.0' | '3.0' | '3.1';
  operations: OperationDef[];
  securitySchemes: Record<string, SecurityScheme>;
  /** `x-ibm-configuration.properties` defaults. */
  properties: Record<string, ApiProperty>;
  /** `x-ibm-configuration.catalogs.<name>.properties` overrides. */
  catalogProperties: Record<string, Record<string, string>>;
  activityLog: ActivityLogSettings;
  buffering: boolean;
  cors: { enabled: boolean };
  /** `x-ibm-configuration.type`: `rest` (default) or `wsdl`. */
  type: string;
  /** The assembly as written (validated): `{execute, catch?, finally?}`. Absent = default proxy. */
  assembly?: { execute: unknown[]; catch?: unknown[]; finally?: unknown[] };
  /** The whole document, as parsed from YAML/JSON (refs not inlined). */
  document: Record<string, unknown>;
}

export interface RateLimitDef {
  /** Name of the limit, e.g. `default`. */
  name: string;
  /** `unlimited`, or count per window. */
  unlimited: boolean;
  count: number;
  /** Window length in ms (`100/1hour` → 3 600 000). */
  windowMs: number;
  /** The value as written, e.g. `100/1hour`. */
  value: string;
  hardLimit: boolean;
}

export interface PlanDef {
  /** Key in `plans:`, e.g. `silver`. */
  name: string;
  title: string;
  description?: string;
  approval: boolean;
  rateLimits: RateLimitDef[];
  burstLimits: RateLimitDef[];
  /** When the plan lists its APIs/operations (`apis:` inside a plan), their keys; undefined = all. */
  apis?: string[];
  /** Limits an assembly `ratelimit` policy names (`assembly-rate-limits`, `assembly-burst-limits`). */
  assemblyLimits?: Record<string, RateLimitDef[]>;
}

export type VisibilityType = 'public' | 'authenticated' | 'custom';

export interface ProductDefinition {
  name: string;
  version: string;
  title: string;
  description?: string;
  summary?: string;
  visibility: {
    view: { type: VisibilityType; enabled: boolean; orgs: string[]; tags: string[] };
    subscribe: { type: VisibilityType; enabled: boolean; orgs: string[]; tags: string[] };
  };
  plans: PlanDef[];
  /** APIs the product bundles: by `name: api:version`, or by `$ref` to a file beside it. */
  apis: Array<{ key: string; name: string; version: string } | { key: string; ref: string }>;
  contact?: { name?: string; email?: string; url?: string };
  license?: { name?: string; url?: string };
  document: Record<string, unknown>;
}
