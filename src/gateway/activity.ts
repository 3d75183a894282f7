/**
 * One activity event per call, shaped by the API's `activity-log` setting (IBM "activity-log":
 * content none | activity | header | payload; `success-content` for answers below 400,
 * `error-content` for the rest). Payloads are cut to a size bound, and credentials are always
 * redacted: by name (`Authorization`, `Cookie`, … and every header the API's security schemes
 * name), and by value wherever else they land (a backend echoing them, a `Referer`).
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
  /** The user a basic scheme authenticated. */
  user?: string;
  credential: CredentialInfo | undefined;
  subscription: SubscriptionInfo | undefined;
  backendMs: number;
  errorName: string | undefined;
  requestBody: Buffer | undefined;
  responseBody: Buffer | string | undefined;
  maxPayloadBytes: number;
  redaction?: Redaction;
}

function headerText(headers: Record<string, unknown>, redaction: Redaction, api: CompiledApi): string {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    const hidden = redaction.headers.has(lower) || api.credentialNames.headers.has(lower);
    out[name] = hidden ? '[redacted]' : Array.isArray(value) ? value.join(', ') : String(value);
  }
  return JSON.stringify(out);
}

// Shorter values are not searched for in the rest of the event: they would blank out common text.
const minSecretLength = 8;

/** The credential values this request carried: in the headers and query parameters redacted by name. */
function presentedCredentials(req: IncomingMessage, api: CompiledApi): string[] {
  const values: string[] = [];
  const add = (value: unknown) => {
    if (typeof value === 'string' && value.length >= minSecretLength) values.push(value);
    else if (Array.isArray(value)) value.forEach(add);
  };
  for (const name of credentialHeaders) add(req.headers[name]);
  for (const name of api.credentialNames.headers) add(req.headers[name]);
  const q = req.url?.indexOf('?') ?? -1;
  if (q >= 0 && api.credentialNames.query.size > 0) {
    const query = new URLSearchParams(req.url!.slice(q + 1));
    for (const name of api.credentialNames.query) add(query.getAll(name));
  }
  return values;
}

/**
 * Text as every store can hold it: PostgreSQL refuses U+0000 in text, and one such value failed the
 * insert of a whole batch, every other caller's events with it. It becomes U+FFFD, as a byte that is
 * not UTF-8 does. (Headers need nothing: they are JSON text, where U+0000 is written `\u0000`.)
 */
function storable(text: string): string {
  return text.includes('\0') ? text.replaceAll('\0', '\uFFFD') : text;
}

/** Replaces every occurrence of a presented credential in captured text. */
function scrub(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join('[redacted]');
  return out;
}

/** Replaces the values of named fields anywhere in a JSON value. */
function redactFields(value: unknown, fields: ReadonlySet<string>): unknown {
  if (Array.isArray(value)) return value.map((item) => redactFields(item, fields));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  // A body's `"__proto__"` field stays a field of the copy (assigning it would set the copy's prototype).
  for (const [key, item] of Object.entries(value))
    setOwn(out, key, fields.has(key.toLowerCase()) ? '[redacted]' : redactFields(item, fields));
  return out;
}

function payloadText(
  body: Buffer | string | undefined,
  limit: number,
  redaction: Redaction,
  secrets: readonly string[],
): string | null {
  if (body === undefined) return null;
  // Scrubbed before it is cut, so no part of a credential survives at the cut.
  let text = scrub(typeof body === 'string' ? body : body.toString('utf8'), secrets);
  if (redaction.fields.size > 0 && /^\s*[[{]/.test(text)) {
    try {
      text = JSON.stringify(redactFields(JSON.parse(text), redaction.fields));
    } catch {
      // Not JSON after all: a named field cannot be found in it, so nothing to hide.
    }
  }
  text = storable(text);
  // Counted without a copy (a UTF-16 unit is at most 3 bytes of UTF-8: short texts need no count).
  if (text.length * 3 <= limit || Buffer.byteLength(text) <= limit) return text;
  const bytes = Buffer.from(text);
  return `${bytes.subarray(0, limit).toString('utf8')}…[truncated ${bytes.length - limit} bytes]`;
}

/** The URL without its query (indexOf and slice: a split made an array per call). */
function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
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
  const secrets = withHeaders ? presentedCredentials(input.req, input.api) : [];
  return {
    ts: Date.now(),
    tx_id: input.txId,
    org_name: input.api.orgName,
    catalog_name: input.api.catalogName,
    api_name: input.api.name,
    api_version: input.api.version,
    operation_id: input.operation?.id ?? '',
    verb: input.req.method ?? '',
    path: pathOf(input.req.url ?? ''),
    status: input.status,
    latency_ms: Math.round(input.latencyMs * 1000) / 1000,
    backend_ms: Math.round(input.backendMs * 1000) / 1000,
    client_id: storable(input.clientId ?? ''),
    user_name: storable(input.user ?? ''),
    app_id: input.credential?.app.id ?? '',
    app_name: input.credential?.app.title ?? '',
    consumer_org_id: input.credential?.app.consumerOrgId ?? '',
    consumer_org_name: input.credential?.app.consumerOrgName ?? '',
    subscription_id: input.subscription?.id ?? '',
    plan_id: input.subscription?.planId ?? '',
    product_name: input.subscription?.productName ?? '',
    plan_name: input.subscription?.planName ?? '',
    error_name: input.errorName ?? '',
    content,
    request_headers: withHeaders ? scrub(headerText(input.req.headers, redaction, input.api), secrets) : null,
    request_body: withPayload ? payloadText(input.requestBody, input.maxPayloadBytes, redaction, secrets) : null,
    response_headers: withHeaders ? scrub(headerText(input.responseHeaders(), redaction, input.api), secrets) : null,
    response_body: withPayload ? payloadText(input.responseBody, input.maxPayloadBytes, redaction, secrets) : null,
  };
}
