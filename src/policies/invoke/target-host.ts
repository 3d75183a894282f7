/**
 * Who chooses the backend host in a `target-url` template (DESIGN §6, server-side request
 * forgery): the check {@link refuseRequestChosenHost} that `url-template.ts` runs at compile
 * time, on the template's parts as it parsed them.
 */
import { variableRoot } from '../variable-names.ts';

/** A part of a compiled template, as far as this check reads it (see url-template.ts). */
type UrlPart =
  | { kind: 'literal'; text: string }
  | { kind: 'variable' | 'parameter'; name: string; position: 'url' | 'authority' | 'path' | 'query'; label: string };
type Dynamic = Exclude<UrlPart, { kind: 'literal' }>;

/**
 * Whether a part holds what the consumer sent: a `{parameter}`, or a variable under `request`
 * or `message` (which starts as a copy of the request and keeps it until an invoke replaces
 * it). Read by the name's parsed path, as `ctx.get` reads it, so `$(request['headers'].x)` and
 * `$(request[headers].x)` count as well as `$(request.headers.x)`.
 */
function fromConsumer(part: UrlPart): part is Dynamic {
  if (part.kind === 'literal') return false;
  if (part.kind === 'parameter') return true;
  const root = variableRoot(part.name);
  return root === 'request' || root === 'message';
}

// The template's shape for the host check: a consumer value, any other value in the host.
const consumerMark = '\u0001';
const providerMark = '\u0002';

/**
 * The host name of a template's authority, in shape form (values replaced by marks), or
 * undefined when the template spells no `scheme://` before its path.
 */
function hostShape(parts: readonly UrlPart[]): string | undefined {
  const shape = parts
    .map((p) => {
      if (p.kind === 'literal') return p.text;
      if (p.position === 'path' || p.position === 'query') return '/';
      return fromConsumer(p) ? consumerMark : providerMark;
    })
    .join('');
  const scheme = shape.indexOf('://');
  if (scheme === -1) return undefined;
  const rest = shape.slice(scheme + 3);
  const authority = rest.slice(0, rest.search(/[/?#]|$/));
  const host = authority.slice(authority.lastIndexOf('@') + 1);
  if (host.startsWith('[')) return host.slice(0, host.indexOf(']') + 1);
  const port = host.indexOf(':');
  return port === -1 ? host : host.slice(0, port);
}

function choosesHost(expanded: string, part: Dynamic, why = ''): Error {
  const copy = part.kind === 'variable' && variableRoot(part.name) === 'message' ? ' (message holds a copy of it)' : '';
  return new Error(
    `target-url "${expanded}": ${part.label} comes from the request${copy} and would choose the backend's host${why}`,
  );
}

/**
 * Fail closed on server-side request forgery: a value the consumer sends (see
 * {@link fromConsumer}) may not make up the base URL, nor stand in a host whose last label the
 * provider does not spell out, or the consumer would choose which server the gateway calls:
 * `http://{host}/`, `http://{svc}.{zone}/` and `http://backend.{tld}/` are refused. A value
 * inside a host the provider spells out (`http://{region}.backend/`) stays allowed, as do the
 * flow's own variables (`$(target-url)`) and API properties (substituted before this check).
 */
export function refuseRequestChosenHost(expanded: string, parts: readonly UrlPart[]): void {
  const consumerParts = parts.filter(fromConsumer);
  const wholeUrl = consumerParts.find((p) => p.position === 'url');
  if (wholeUrl !== undefined) throw choosesHost(expanded, wholeUrl);
  const inHost = consumerParts.find((p) => p.position === 'authority');
  if (inHost === undefined) return;
  const host = hostShape(parts) ?? consumerMark;
  if (!host.includes(consumerMark)) return; // in the user information or the port
  const lastLabel = host.slice(host.lastIndexOf('.') + 1);
  if (lastLabel.includes(consumerMark) || !/[A-Za-z0-9-]/.test(lastLabel)) {
    throw choosesHost(expanded, inHost, ' (the provider spells out no last label of the host)');
  }
}
