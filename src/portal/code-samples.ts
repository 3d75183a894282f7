/**
 * Ready-to-run calls of one operation in curl, JavaScript (fetch) and Python (requests), with the
 * developer's client id, the document's (or generated) example values for required parameters and
 * the request body. Values are quoted for each language here; the page escapes them for HTML.
 */
import type { OperationView } from '../web/openapi-view.ts';

export const clientIdPlaceholder = 'YOUR_CLIENT_ID';
export const clientSecretPlaceholder = 'YOUR_CLIENT_SECRET';

export interface CodeSample {
  language: 'curl' | 'javascript' | 'python';
  label: string;
  code: string;
}

export interface SampleInput {
  operation: OperationView;
  /** The operation's base: gateway URL, `/<org>/<catalog>` and the API's base path. */
  gatewayBase: string;
  /** The signed-in developer's client id, or undefined for the placeholder. */
  clientId?: string;
}

interface SampleRequest {
  method: string;
  url: string;
  headers: Array<[string, string]>;
  /** JSON value when the body is JSON, else text. */
  body?: { json: boolean; value: unknown };
}

function asText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value ?? '');
}

function sampleRequest(input: SampleInput): SampleRequest {
  const { operation } = input;
  const parameter = (where: string, name: string) =>
    operation.parameters.find((p) => p.in === where && p.name === name);
  const path = operation.path.replace(/\{([^}]+)\}/g, (_whole, name: string) =>
    encodeURIComponent(asText(parameter('path', name)?.sample ?? name)),
  );
  const url = new URL(`${input.gatewayBase}${path}`);
  const headers: Array<[string, string]> = [];
  for (const p of operation.parameters.filter((p) => p.required && p.sample !== undefined)) {
    if (p.in === 'query') url.searchParams.append(p.name, asText(p.sample));
    if (p.in === 'header') headers.push([p.name, asText(p.sample)]);
  }
  const clientId = input.clientId || clientIdPlaceholder;
  for (const credential of operation.credentials) {
    const value = credential.role === 'id' ? clientId : clientSecretPlaceholder;
    if (credential.in === 'header') headers.push([credential.name, value]);
    else url.searchParams.set(credential.name, value);
  }
  // No declared placement: API Connect's default header, as Try it sends it.
  if (operation.credentials.length === 0) headers.push(['X-IBM-Client-Id', clientId]);
  headers.push(['Accept', 'application/json']);
  let body: SampleRequest['body'];
  if (operation.body && operation.body.example !== undefined && !['GET', 'HEAD'].includes(operation.method)) {
    const json = /json/i.test(operation.body.contentType);
    headers.push(['Content-Type', operation.body.contentType]);
    body = { json, value: json ? operation.body.example : asText(operation.body.example) };
  }
  return { method: operation.method, url: url.toString(), headers, body };
}

/** A POSIX shell word in single quotes (a quote inside becomes '\''). */
function shellQuote(value: string): string {
  return `'${value.replace(/'/g, `'\\''`)}'`;
}

function curl(request: SampleRequest): string {
  const lines = [`curl --request ${request.method}`, `  --url ${shellQuote(request.url)}`];
  for (const [name, value] of request.headers) lines.push(`  --header ${shellQuote(`${name}: ${value}`)}`);
  if (request.body) {
    const text = request.body.json ? JSON.stringify(request.body.value, null, 2) : String(request.body.value);
    lines.push(`  --data ${shellQuote(text)}`);
  }
  return lines.join(' \\\n');
}

/** JSON is valid JavaScript for strings and data (U+2028/9 included since ES2019). */
function javascript(request: SampleRequest): string {
  const headers = request.headers.map(([name, value]) => `    ${JSON.stringify(name)}: ${JSON.stringify(value)},`);
  const body = request.body
    ? [
        `  body: ${request.body.json ? `JSON.stringify(${JSON.stringify(request.body.value, null, 2).replace(/\n/g, '\n  ')})` : JSON.stringify(request.body.value)},`,
      ]
    : [];
  return [
    `const response = await fetch(${JSON.stringify(request.url)}, {`,
    `  method: ${JSON.stringify(request.method)},`,
    '  headers: {',
    ...headers,
    '  },',
    ...body,
    '});',
    'console.log(response.status, await response.text());',
  ].join('\n');
}

/** A Python literal for a JSON value (JSON string escapes are valid Python escapes). */
function pythonLiteral(value: unknown, indent: string): string {
  if (value === null || value === undefined) return 'None';
  if (value === true) return 'True';
  if (value === false) return 'False';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : 'None';
  if (typeof value === 'string') return JSON.stringify(value);
  const inner = `${indent}    `;
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    return `[\n${value.map((item) => `${inner}${pythonLiteral(item, inner)},`).join('\n')}\n${indent}]`;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) return '{}';
  return `{\n${entries.map(([k, v]) => `${inner}${JSON.stringify(k)}: ${pythonLiteral(v, inner)},`).join('\n')}\n${indent}}`;
}

function python(request: SampleRequest): string {
  const headers = request.headers.map(([name, value]) => `        ${JSON.stringify(name)}: ${JSON.stringify(value)},`);
  const body = request.body
    ? [`    ${request.body.json ? 'json' : 'data'}=${pythonLiteral(request.body.value, '    ')},`]
    : [];
  return [
    'import requests',
    '',
    'response = requests.request(',
    `    ${JSON.stringify(request.method)},`,
    `    ${JSON.stringify(request.url)},`,
    '    headers={',
    ...headers,
    '    },',
    ...body,
    '    timeout=30,',
    ')',
    'print(response.status_code, response.text)',
  ].join('\n');
}

/** The three samples of an operation, in the order the page shows them. */
export function codeSamples(input: SampleInput): CodeSample[] {
  const request = sampleRequest(input);
  return [
    { language: 'curl', label: 'curl', code: curl(request) },
    { language: 'javascript', label: 'JavaScript (fetch)', code: javascript(request) },
    { language: 'python', label: 'Python (requests)', code: python(request) },
  ];
}
