/**
 * The HTML of an API page: one collapsible section per operation with its parameters, schemas,
 * examples, code samples and Try it form, and links to download the OpenAPI document.
 */
import type { App, AppCredential, ApiRow, ProductRow } from '../store/schema.ts';
import { breadcrumbs, notice, table } from '../web/components.ts';
import type { PortalContext } from './context.ts';
import { html } from '../web/html.ts';
import type { SafeHtml } from '../web/html.ts';
import type { ApiView, OperationView, ParameterView } from '../web/openapi-view.ts';
import { typeOf } from '../web/openapi-view.ts';
import type { ProviderConfig } from '../oauth/provider-config.ts';
import { oauthPanel } from './oauth-view.ts';
import type { TryResult } from './try-it.ts';
import type { TryToken } from './oauth-view.ts';
import { credentialsText, schemeWords } from './operation-security.ts';
import type { OperationSecurity, SecurityNames } from './operation-security.ts';
import { tryItSection } from './try-it-form.ts';
import { clientIdPlaceholder, clientSecretPlaceholder, codeSamples } from './code-samples.ts';
import type { CodeSample } from './code-samples.ts';

export interface ApiPageInput {
  context: PortalContext;
  product: ProductRow;
  api: ApiRow;
  view: ApiView;
  /** The signed-in developer's apps with their first credential and registered redirect URIs. */
  apps: Array<{ app: App; credential?: AppCredential; redirectUris: string[] }>;
  productUrl: string;
  apiUrl: string;
  gatewayBase: string;
  /** The catalog's native OAuth providers by name, with their issuer as developers reach it. */
  oauthProviders: ReadonlyMap<string, { config: ProviderConfig; issuer: string }>;
  /** The stored document, as the gateway reads its security. */
  document: Record<string, unknown>;
  /** Each operation's security (by anchor), as the gateway enforces it. */
  security: ReadonlyMap<string, OperationSecurity>;
  /** Titles of the user registries and OAuth providers the API's schemes name. */
  names: SecurityNames;
  /** Tokens got by authorization code in this session, by `provider|appId` (scope and expiry only). */
  sessionTokens: ReadonlyMap<string, TryToken>;
  /** The redirect URI the portal serves for Try it's authorization code grant. */
  callbackUri: string;
  /** A Try it answer to show under one operation (the form posted without the script). */
  result?: { anchor: string; outcome: TryResult; values: Record<string, string> };
}

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A schema as a nested list of properties with types, required marks and descriptions. */
export function schemaTree(schema: unknown, depth = 0): SafeHtml {
  if (!isObject(schema) || depth > 8) return html``;
  const target = schema.type === 'array' && isObject(schema.items) ? schema.items : schema;
  const properties = isObject(target.properties) ? target.properties : {};
  const required = new Set(Array.isArray(target.required) ? target.required.map(String) : []);
  const entries = Object.entries(properties);
  if (entries.length === 0) return html``;
  return html`<ul>
    ${entries.map(
      ([name, property]) =>
        html`<li>
          <code>${name}</code>
          <span class="type">${typeOf(property)}</span
          >${required.has(name) ? html` <span class="req">required</span>` : ''}${
            isObject(property) && typeof property.description === 'string' ? html` — ${property.description}` : ''
          }${schemaTree(property, depth + 1)}
        </li>`,
    )}
  </ul>`;
}

function exampleBlock(label: string, example: unknown): SafeHtml {
  if (example === undefined) return html``;
  return html`<p class="hint">${label}</p>
    <pre tabindex="0"><code>${typeof example === 'string' ? example : JSON.stringify(example, null, 2)}</code></pre>`;
}

function schemaBlock(schema: unknown, example: unknown, exampleLabel: string): SafeHtml {
  const tree = schemaTree(schema);
  return html`${isObject(schema) ? html`<p>Schema: <span class="type">${typeOf(schema) || 'object'}</span></p>` : ''}${tree.value ? html`<div class="schema-tree">${tree}</div>` : ''}${exampleBlock(exampleLabel, example)}`;
}

function parameterRows(parameters: ParameterView[]): unknown[][] {
  return parameters.map((p) => [
    html`<code>${p.name}</code>`,
    p.in,
    p.type,
    p.required ? 'Yes' : 'No',
    html`${p.description}${p.enum ? html` (one of ${p.enum.map(String).join(', ')})` : ''}`,
  ]);
}

function codeSampleBlock(operation: OperationView, sample: CodeSample): SafeHtml {
  const id = `${operation.anchor}-sample-${sample.language}`;
  return html`<div class="sample">
    <div class="sample-head">
      <h4 id="${id}-title">${sample.label}</h4>
      <button type="button" class="button secondary small" data-copy-target="${id}">
        Copy<span class="visually-hidden"> the ${sample.label} sample</span></button
      ><span class="copy-status hint" aria-live="polite"></span>
    </div>
    <pre tabindex="0" aria-labelledby="${id}-title"><code id="${id}">${sample.code}</code></pre>
  </div>`;
}

function codeSamplesSection(input: ApiPageInput, operation: OperationView): SafeHtml {
  const clientId = input.apps[0]?.credential?.client_id;
  const samples = codeSamples({ operation, gatewayBase: input.gatewayBase, clientId });
  const whose = clientId
    ? html`with the client id of your app ${input.apps[0].app.title}`
    : html`with <code>${clientIdPlaceholder}</code> where your app's client id goes`;
  return html`<h3>Code samples</h3>
    <p class="hint">
      Ready to run ${whose}; a client secret, where one is needed, is never shown again: paste it in place of
      <code>${clientSecretPlaceholder}</code>.
    </p>
    <div class="samples">${samples.map((sample) => codeSampleBlock(operation, sample))}</div>`;
}

function oauthSection(input: ApiPageInput, requirement: NonNullable<OperationView['oauth']>): SafeHtml {
  const provider = input.oauthProviders.get(requirement.provider);
  return oauthPanel(requirement, provider?.config, provider?.issuer);
}

function operationSection(input: ApiPageInput, operation: OperationView): SafeHtml {
  const method = operation.method.toLowerCase();
  const open = input.result?.anchor === operation.anchor;
  return html`<section class="operation" id="${operation.anchor}" aria-labelledby="${operation.anchor}-title">
<details${open ? html` open` : ''}><summary><h2 id="${operation.anchor}-title"><span class="method ${method}">${operation.method}</span> <span class="path">${operation.path}</span>${
    operation.summary ? html` <span class="op-summary">${operation.summary}</span>` : ''
  }</h2></summary>
<div class="operation-body">${operation.description ? html`<p>${operation.description}</p>` : ''}
<p class="hint">${operation.operationId ? html`Operation <code>${operation.operationId}</code> · ` : ''}<code class="url">${operation.method} ${input.gatewayBase}${operation.path}</code></p>
<h3>Parameters</h3>
${operation.parameters.length === 0 ? html`<p>None.</p>` : table(`Parameters of ${operation.method} ${operation.path}`, ['Name', 'In', 'Type', 'Required', 'Description'], parameterRows(operation.parameters), { hideCaption: true })}
${
  operation.body
    ? html`<h3>Request body</h3>
        <p class="hint">${operation.body.contentType}${operation.body.required ? ', required' : ''}</p>
        ${schemaBlock(operation.body.schema, operation.body.example, 'Example request')}`
    : ''
}
<h3>Responses</h3>
${operation.responses.map(
  (r) =>
    html`<h4>Status ${r.status}</h4>
      ${r.description && r.description !== r.status ? html`<p>${r.description}</p>` : ''}${schemaBlock(r.schema, r.example, `Example response${r.contentType ? ` (${r.contentType})` : ''}`)}`,
)}
<h3>Credentials</h3>
<p class="credentials">${credentialsText(input.security.get(operation.anchor)!, input.document, input.names)}</p>
${operation.oauth ? oauthSection(input, operation.oauth) : ''}
${codeSamplesSection(input, operation)}
${tryItSection(input, operation)}</div></details></section>`;
}

function downloadLinks(input: ApiPageInput): SafeHtml {
  const file = `${input.api.name}-${input.api.version}`.replace(/[^A-Za-z0-9._-]/g, '_');
  return html`<p class="downloads">
    Download OpenAPI: <a href="${input.apiUrl}/openapi.yaml" download="${file}.yaml">YAML</a> ·
    <a href="${input.apiUrl}/openapi.json" download="${file}.json">JSON</a>
  </p>`;
}

/** The whole main content of an API page. */
export function apiPage(input: ApiPageInput): SafeHtml {
  const { product, api, view } = input;
  // Every credential some operation asks for; each operation's section says which it needs.
  const securityNames = [
    ...new Set(
      [...input.security.values()].flatMap((s) =>
        s.alternatives.flat().map((scheme) => schemeWords(scheme, input.document, input.names)),
      ),
    ),
  ];
  return html`${breadcrumbs([['API Products', '/products'], [`${product.title} ${product.version}`, input.productUrl], [`${api.title} ${api.version}`]])}
    <h1>${api.title} <span class="meta">${api.version}</span></h1>
    ${api.state === 'offline' ? notice('warn', 'This API is offline at the moment: calls answer 404 until the provider brings it online.') : ''}
    ${view.description ? html`<p class="lede">${view.description}</p>` : ''}
    <dl class="facts">
      <dt>Base URL</dt>
      <dd><code class="url">${input.gatewayBase}</code></dd>
      <dt>Credentials</dt>
      <dd>${securityNames.length > 0 ? securityNames.join('; ') : 'none (open to anonymous callers)'}</dd>
    </dl>
    ${downloadLinks(input)}
    <div class="layout-api">
      <nav class="toc" aria-label="Operations">
        <h2 class="visually-hidden">Operations</h2>
        <ul>
          ${view.operations.map(
            (o) =>
              html`<li>
                <a href="#${o.anchor}"
                  ><span class="method ${o.method.toLowerCase()}">${o.method}</span>
                  <span class="path">${o.path}</span></a
                >
              </li>`,
          )}
        </ul>
      </nav>
      <div>${view.operations.map((o) => operationSection(input, o))}</div>
    </div>`;
}
