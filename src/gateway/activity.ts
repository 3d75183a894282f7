/**
 * One activity event per call, shaped by the API's `activity-log` setting (IBM "activity-log":
 * content none | activity | header | payload; `success-content` for answers below 400,
 * `error-content` for the rest). Payloads are cut to a size bound, and credential headers
 * are always redacted.
 */
import type { IncomingMessage } from 'node:http';
import type { NewActivityEvent } from '../store/schema.ts';
import type { CompiledApi, CompiledOperation, CredentialInfo, SubscriptionInfo } from './snapshot.ts';
import { setOwn } from '../policies/variable-names.ts';

const credentialHeaders = ['x-ibm-client-secret', 'authorization', 'proxy-authorization', 'cookie', 'set-cookie'];

/** What activity capture replaces by `[redacted]`: credential headers always, plus named headers and JSON fields. */
export interface Redaction {
  headers: ReadonlySet<string>;
  fields: ReadonlySet<string>;
}

/** Builds the redaction from `PORTICO_ANALYTICS_REDACT` names (each applies to headers and JSON fields, case-insensitively). */
export function createRedaction(names: readonly string[] = []): Redaction {
  const lower = names.map((name) => name.toLowerCase());
  return { headers: new Set([...credentialHeaders, ...lower]), fields: new Set(lower) };
}

const defaultRedaction = createRedaction();

export interface ActivityInput {
  req: IncomingMessage;
  /** The response's header fields (lower-case names), read only when the log keeps headers. */
  responseHeaders: () => Record<string, unknown>;
  status: number;
  txId: string;
  latencyMs: number;
  api: CompiledApi;
  operation: CompiledOperation | undefined;
  clientId: string | undefined;
  credential: CredentialInfo | undefined;
  subscription: SubscriptionInfo | undefined;
  backendMs: number;
  errorName: string | undefined;
  requestBody: Buffer | undefined;
  responseBody: Buffer | string | undefined;
  maxPayloadBytes: number;
  redaction?: Redaction;
}

function headerText(headers: Record<string, unknown>, redaction: Redaction): string {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name] = redaction.headers.has(name.toLowerCase()) ? '[redacted]' : Array.isArray(value) ? value.join(', ') : String(value);
  }
  return JSON.stringify(out);
}

/** Replaces the values of named fields anywhere in a JSON value. */
function redactFields(value: unknown, fields: ReadonlySet<string>): unknown {
  if (Array.isArray(value)) return value.map((item) => redactFields(item, fields));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  // A body's `"__proto__"` field stays a field of the copy (assigning it would set the copy's prototype).
  for (const [key, item] of Object.entries(value)) setOwn(out, key, fields.has(key.toLowerCase()) ? '[redacted]' : redactFields(item, fields));
  return out;
}

function payloadText(body: Buffer | string | undefined, limit: number, redaction: Redaction): string | null {
  if (body === undefined) return null;
  let text = typeof body === 'string' ? body : body.toString('utf8');
  if (redaction.fields.size > 0 && /^\s*[[{]/.test(text)) {
    try {
      text = JSON.stringify(redactFields(JSON.parse(text), redaction.fields));
    } catch {
      // Not JSON after all: a named field cannot be found in it, so nothing to hide.
    }
  }
  const bytes = Buffer.from(text);
  if (bytes.length <= limit) return text;
  return `${bytes.subarray(0, limit).toString('utf8')}…[truncated ${bytes.length - limit} bytes]`;
}

/** The event to record, or undefined when the API logs nothing for this outcome. */
export function buildActivityEvent(input: ActivityInput): NewActivityEvent | undefined {
  const settings = input.api.definition.activityLog;
  if (!settings.enabled) return undefined;
  const content = input.status < 400 ? settings.successContent : settings.errorContent;
  if (content === 'none') return undefined;
  const withHeaders = content === 'header' || content === 'payload';
  const withPayload = content === 'payload';
  const redaction = input.redaction ?? defaultRedaction;
  return {
    ts: Date.now(),
    tx_id: input.txId,
    org_name: input.api.orgName,
    catalog_name: input.api.catalogName,
    api_name: input.api.name,
    api_version: input.api.version,
    operation_id: input.operation?.id ?? '',
    verb: input.req.method ?? '',
    path: (input.req.url ?? '').split('?')[0],
    status: input.status,
    latency_ms: Math.round(input.latencyMs * 1000) / 1000,
    backend_ms: Math.round(input.backendMs * 1000) / 1000,
    client_id: input.clientId ?? '',
    app_id: input.credential?.app.id ?? '',
    app_name: input.credential?.app.title ?? '',
    consumer_org_name: input.credential?.app.consumerOrgName ?? '',
    product_name: input.subscription?.productName ?? '',
    plan_name: input.subscription?.planName ?? '',
    error_name: input.errorName ?? '',
    content,
    request_headers: withHeaders ? headerText(input.req.headers, redaction) : null,
    request_body: withPayload ? payloadText(input.requestBody, input.maxPayloadBytes, redaction) : null,
    response_headers: withHeaders ? headerText(input.responseHeaders(), redaction) : null,
    response_body: withPayload ? payloadText(input.responseBody, input.maxPayloadBytes, redaction) : null,
  };
}
