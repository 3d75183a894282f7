/**
 * The OpenAPI document a developer downloads from an API page: the provider's document with the
 * gateway as its server and nothing of the provider's internals. Of `x-ibm-configuration` only
 * the fields that describe the API to a caller survive; the assembly, catalog overrides, targets
 * and property values (backend addresses, keys) never leave the platform.
 */
import { stringify } from 'yaml';

type Json = Record<string, unknown>;

/** `x-ibm-configuration` fields that tell a caller something and reveal nothing of the backend. */
const publicConfiguration = ['type', 'phase', 'testable', 'enforced', 'cors', 'gateway'];

export interface GatewayAddress {
  /** The gateway as developers reach it, e.g. `https://api.example.com`. */
  publicUrl: string;
  orgName: string;
  catalogName: string;
  /** The API's base path (`/logistics`). */
  basePath: string;
}

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Property names with their descriptions, without their values. */
function publicProperties(properties: unknown): Json | undefined {
  if (!isObject(properties)) return undefined;
  const out: Json = {};
  for (const [name, property] of Object.entries(properties)) {
    out[name] =
      isObject(property) && typeof property.description === 'string' ? { description: property.description } : {};
  }
  return out;
}

function publicIbmConfiguration(configuration: unknown): Json | undefined {
  if (!isObject(configuration)) return undefined;
  const out: Json = {};
  for (const key of publicConfiguration) if (configuration[key] !== undefined) out[key] = configuration[key];
  const properties = publicProperties(configuration.properties);
  if (properties) out.properties = properties;
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The stored document as developers may have it, with the gateway as its server. */
export function publicOpenApi(stored: Json, gateway: GatewayAddress): Json {
  const document = structuredClone(stored);
  const configuration = publicIbmConfiguration(document['x-ibm-configuration']);
  if (configuration) document['x-ibm-configuration'] = configuration;
  else delete document['x-ibm-configuration'];
  const url = new URL(gateway.publicUrl);
  const prefix = url.pathname.replace(/\/$/, '');
  const basePath = `${prefix}/${encodeURIComponent(gateway.orgName)}/${encodeURIComponent(gateway.catalogName)}${gateway.basePath}`;
  if (typeof document.openapi === 'string') {
    document.servers = [{ url: `${url.origin}${basePath}` }];
  } else {
    // Swagger 2.0 names the server by parts (Swagger 2.0 §"Swagger Object": host, basePath, schemes).
    document.host = url.host;
    document.basePath = basePath;
    document.schemes = [url.protocol.replace(/:$/, '')];
  }
  return document;
}

/** The document as YAML or JSON text. */
export function openApiText(document: Json, format: 'json' | 'yaml'): string {
  return format === 'json'
    ? `${JSON.stringify(document, null, 2)}\n`
    : stringify(document, { aliasDuplicateObjects: false });
}
