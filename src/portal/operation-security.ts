/**
 * What credentials an operation's call needs, in words, from the same reading of the document
 * the gateway enforces (src/definitions/security-support.ts: OR of AND alternatives, `{}` open,
 * an operation's `security` replaces the document's). The portal never re-derives the rule: a
 * requirement the gateway refuses is shown as refused, never as open.
 */
import { isRecord } from '../definitions/json-path.ts';
import {
  apiSecurityRefusal,
  declaredSchemes,
  effectiveSecurity,
  securityPlan,
} from '../definitions/security-support.ts';
import type { SupportedScheme } from '../definitions/security-support.ts';
import type { ProviderConfig } from '../oauth/provider-config.ts';

/** One operation's security as the gateway enforces it. */
export interface OperationSecurity {
  /** Set when the gateway refuses every call (a requirement it cannot enforce): the reason. */
  refused?: string;
  /** Anonymous callers are allowed (no requirement, `[]`, or a `{}` alternative). */
  open: boolean;
  /** Each alternative: the schemes that must all hold. */
  alternatives: SupportedScheme[][];
}

/** The names a page shows for what an API's schemes name: user registry and OAuth provider titles. */
export interface SecurityNames {
  registries: ReadonlyMap<string, string>;
  providers: ReadonlyMap<string, ProviderConfig>;
}

/** The security in force for the operation `method path` of a stored document. */
export function operationSecurity(document: Record<string, unknown>, method: string, path: string): OperationSecurity {
  const apiWide = apiSecurityRefusal(document);
  if (apiWide) return { refused: apiWide.reason, open: false, alternatives: [] };
  const paths = isRecord(document.paths) ? document.paths : {};
  const item = isRecord(paths[path]) ? paths[path] : {};
  const operation = isRecord(item[method.toLowerCase()]) ? (item[method.toLowerCase()] as Record<string, unknown>) : {};
  const plan = securityPlan(effectiveSecurity(document, operation), declaredSchemes(document));
  if (Array.isArray(plan)) return { refused: plan.map((r) => r.reason).join('; '), open: false, alternatives: [] };
  return { open: plan.open, alternatives: plan.alternatives };
}

/** The OAuth flows a scheme declares: Swagger 2.0 `flow`, OpenAPI 3 `flows` keys. */
function flowsOf(scheme: unknown): string[] {
  if (!isRecord(scheme)) return [];
  if (typeof scheme.flow === 'string') return [scheme.flow];
  return isRecord(scheme.flows) ? Object.keys(scheme.flows) : [];
}

function place(scheme: SupportedScheme): string {
  return `${scheme.in === 'header' ? 'header' : 'query parameter'} ${scheme.name}`;
}

function scopeWords(scopes: readonly string[] | undefined): string {
  if (!scopes || scopes.length === 0) return 'no particular scope';
  return `${scopes.length === 1 ? 'scope' : 'scopes'} ${scopes.join(', ')}`;
}

/** One scheme of a requirement in words: "client id in header X-IBM-Client-Id". */
export function schemeWords(scheme: SupportedScheme, document: Record<string, unknown>, names: SecurityNames): string {
  switch (scheme.role) {
    case 'client-id':
      return `client id in ${place(scheme)}`;
    case 'client-secret':
      return `client secret in ${place(scheme)}`;
    case 'basic': {
      const title = names.registries.get(scheme.registry ?? '') ?? scheme.registry;
      return `HTTP basic user name and password (Authorization header) of user registry ${title}`;
    }
    case 'oauth2-native': {
      const provider = names.providers.get(scheme.provider ?? '');
      const flows = flowsOf(declaredSchemes(document)[scheme.scheme]);
      const flowText = flows.length > 0 ? `, flow ${flows.join(' or ')}` : '';
      return `OAuth 2 bearer token from provider ${provider?.title ?? scheme.provider}${flowText}, with ${scopeWords(scheme.scopes)}`;
    }
    case 'oauth2-introspect':
      return `OAuth 2 bearer token of a third-party provider (checked at ${new URL(scheme.introspect!.url).host}), with ${scopeWords(scheme.scopes)}`;
  }
}

/** The whole sentence shown beside an operation: "Requires: … and …; or …". */
export function credentialsText(
  security: OperationSecurity,
  document: Record<string, unknown>,
  names: SecurityNames,
): string {
  if (security.refused !== undefined)
    return `Not callable: the gateway refuses every call because this security cannot be enforced (${security.refused}).`;
  const alternatives = security.alternatives.map((schemes) =>
    schemes.map((scheme) => schemeWords(scheme, document, names)).join(' and '),
  );
  if (alternatives.length === 0) return 'Requires: no credentials (open to anonymous callers).';
  if (security.open) alternatives.push('no credentials at all (open to anonymous callers)');
  return `Requires: ${alternatives.join('; or ')}.`;
}

/** The alternative Try it fills in (index into `alternatives`), or undefined for an open call. */
export function chosenAlternative(security: OperationSecurity, wanted: string | undefined): SupportedScheme[] {
  const index = Number(wanted ?? '0');
  return Number.isInteger(index) ? (security.alternatives[index] ?? []) : [];
}
