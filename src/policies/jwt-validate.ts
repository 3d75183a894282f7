/**
 * `jwt-validate` (IBM "jwt-validate"): verifies the JWT in `jwt` (default
 * `request.headers.authorization`, `Bearer <jwt>`), checks `iss` and `aud` against the
 * `iss-claim` / `aud-claim` patterns, and writes the claims to `output-claims` (default
 * `decoded.claims`). Keys: `jws-jwk` (a variable holding a JWK or JWK set; `api.properties.*`
 * is read once at publish) or Portico's `jwks-url` (fetched and kept, see jose/key-set.ts).
 * DataPower crypto objects (`jws-crypto`, `jwe-crypto`) and encrypted JWTs are refused at import.
 * A token the policy accepted is answered from its own cache while it is repeated (jose/verified-cache.ts).
 */
import { channel } from 'node:diagnostics_channel';
import { policy, refused, str } from './schema-kit.ts';
import { definePolicy, problemsInEveryCatalog, problemsOf } from './policy.ts';
import { decodeProtectedHeader, jwtVerify } from 'jose';
import type { JWTPayload } from 'jose';
import { compileLinearPattern, PatternRefusal } from '../definitions/linear-pattern.ts';
import type { LinearPattern } from '../definitions/linear-pattern.ts';
import { PorticoError } from '../errors.ts';
import { dispatcherFor, tlsProfilesOf } from './invoke/dispatchers.ts';
import { candidates, importKeySet, joseAlgorithms, KeyLookupError, RemoteKeySet } from './jose/key-set.ts';
import type { VerificationKey } from './jose/key-set.ts';
import { VerifiedTokenCache } from './jose/verified-cache.ts';
import type { VerifiedCacheSettings } from './jose/verified-cache.ts';
import { optionalArray, optionalString, readBlock, titleOf } from './policy-config.ts';
import type { PolicyBlock } from './policy-config.ts';
import { AssemblyError, PolicyCompileError } from './types.ts';
import type { CheckScope, CompiledApiInfo, FlowContext, JwksSettings, PolicyType, Step } from './types.ts';

const defaultJwks: JwksSettings = {
  refreshMs: 600_000,
  unknownKidIntervalMs: 30_000,
  maxStaleMs: 86_400_000,
  timeoutMs: 5000,
};
const supportedAlgorithms = joseAlgorithms;
// Key sets read from a request-time variable, by their JSON: imported once, a few kept.
const maxVariableKeySets = 16;
// RFC 7519 §4.1.4 / §4.1.5: a little leeway for clocks that disagree.
const clockToleranceSeconds = 30;
// Per compiled policy (docs/policies.md#jwt-validate): a minute at most, 4 096 tokens, 4 MiB.
const verifiedCache: VerifiedCacheSettings = { ttlMs: 60_000, maxEntries: 4096, maxBytes: 4 * 1024 * 1024 };
/** Each request's cache outcome, `{ policy, hit }`, for whoever subscribes (tests, diagnostics). */
export const jwtCacheChannel = channel('portico:jwt-validate:cache');

/** Where the policy gets its keys. */
type KeySource =
  | { kind: 'fixed'; keys: Promise<VerificationKey[]>; loaded?: VerificationKey[] }
  | { kind: 'variable'; name: string; cache: Map<string, Promise<VerificationKey[]>> }
  | { kind: 'remote'; set: RemoteKeySet };

/** The jwt-validate policy. */
export const jwtValidatePolicy: PolicyType = definePolicy<PolicyBlock>({
  name: 'jwt-validate',
  versions: ['1.0.0', '2.0.0'],
  description: 'Verifies a JWT (signature, exp/nbf, iss and aud patterns) and writes its claims to output-claims.',
  schema: policy(
    ['1.0.0', '2.0.0'],
    {
      jwt: str(
        'Variable holding the JWT (`Bearer <jwt>` in request.headers.authorization).',
        'request.headers.authorization',
      ),
      'output-claims': str('Variable the verified claims are written to.', 'decoded.claims'),
      'iss-claim': str('Regular expression searched anywhere in the iss claim (anchor it: ^…$); empty = not checked.'),
      'aud-claim': str(
        'Regular expression searched anywhere in the aud claim or one of its values (anchor it: ^…$); empty = not checked.',
      ),
      'jws-jwk': str('Variable holding the verification JWK or JWK set (api.properties.* is read once at publish).'),
      'jwks-url': str('Portico: a JWKS URL ($(property) allowed), fetched and kept (PORTICO_JWKS_* settings).'),
      'tls-profile': str('Portico: TLS profile (PORTICO_TLS_PROFILES) for an https jwks-url.'),
      'jws-algorithms': {
        type: 'array',
        default: [],
        description: 'Portico: algorithms accepted (default: every one the key type allows; none never).',
        items: { type: 'string' },
      },
      'jws-crypto': refused('DataPower crypto object: not supported by Portico (use jws-jwk or jwks-url).'),
      'jwe-crypto': refused('DataPower crypto object for JWE: not supported by Portico.'),
      'jwe-jwk': refused('JWK to decrypt a JWE: encrypted JWTs are not supported by Portico.'),
    },
    [],
    { anyOf: [{ required: ['jws-jwk'] }, { required: ['jwks-url'] }] },
  ),
  check(config: PolicyBlock, scope: CheckScope, path: string) {
    return [
      ...['iss-claim', 'aud-claim'].flatMap((key) => problemsOf(() => pattern(config, key, path))),
      ...problemsOf(() => allowedAlgorithms(config, path)),
      ...problemsInEveryCatalog(scope.propertySets, (properties) => keyReference(config, properties, path)),
    ];
  },
  compile(config: PolicyBlock, api: CompiledApiInfo, path: string): Step {
    const block = readBlock(config, jwtValidatePolicy, path);
    refuseUnsupported(block, path);
    const source = optionalString(block, 'jwt', path) ?? 'request.headers.authorization';
    const output = optionalString(block, 'output-claims', path) ?? 'decoded.claims';
    const issuer = pattern(block, 'iss-claim', path);
    const audience = pattern(block, 'aud-claim', path);
    const allowed = allowedAlgorithms(block, path);
    const keys = keySource(block, api, path);
    const title = titleOf(block, 'jwt-validate');
    const cache = new VerifiedTokenCache(verifiedCache, clockToleranceSeconds);
    // A repeat of an accepted token, with the key set already loaded, is answered without a
    // promise (the flow runs a step that returns nothing synchronously, flow.ts).
    function fromCache(token: string, current: readonly VerificationKey[] | undefined): JWTPayload | undefined {
      const hit = current === undefined ? undefined : cache.get(token, current, Date.now());
      if (jwtCacheChannel.hasSubscribers) jwtCacheChannel.publish({ policy: title, hit: hit !== undefined });
      return hit;
    }
    async function verifyAndKeep(ctx: FlowContext, token: string): Promise<void> {
      const { claims, key } = await verify(token, keys, allowed, ctx, title);
      checkClaim(claims.iss, issuer, 'iss', title);
      checkClaim(claims.aud, audience, 'aud', title);
      cache.set(token, claims, key, Date.now());
      ctx.set(output, claims);
    }
    async function withVariableKeys(
      ctx: FlowContext,
      token: string,
      source: KeySource & { kind: 'variable' },
    ): Promise<void> {
      const hit = fromCache(token, await variableKeys(source, ctx).catch(() => undefined));
      if (hit !== undefined) ctx.set(output, hit);
      else await verifyAndKeep(ctx, token);
    }
    return function jwtValidate(ctx: FlowContext): Promise<void> | undefined {
      const token = readToken(ctx.get(source), source, title);
      if (keys.kind === 'variable') return withVariableKeys(ctx, token, keys);
      const hit = fromCache(token, keys.kind === 'remote' ? keys.set.loaded() : keys.loaded);
      if (hit === undefined) return verifyAndKeep(ctx, token);
      ctx.set(output, hit);
      return undefined;
    };
  },
});

function refuseUnsupported(block: PolicyBlock, path: string): void {
  for (const field of ['jws-crypto', 'jwe-crypto', 'jwe-jwk']) {
    if (block[field] !== undefined) {
      throw new PolicyCompileError(
        `${path}.${field}`,
        'unsupported',
        `${field} is not supported: give the key with jws-jwk or jwks-url`,
      );
    }
  }
  if (block['jws-jwk'] === undefined && block['jwks-url'] === undefined) {
    throw new PolicyCompileError(path, 'required', 'jwt-validate needs a key: jws-jwk or jwks-url');
  }
}

/**
 * A claim pattern, searched anywhere in the claim as API Connect does (unanchored: `^…$` is the
 * provider's to write), on the linear engine: a claim is text from whoever the key trusts to
 * issue tokens (an identity provider may let its users shape it), matched on the gateway's thread.
 */
function pattern(block: PolicyBlock, key: string, path: string): LinearPattern | undefined {
  const source = optionalString(block, key, path);
  if (source === undefined || source === '') return undefined;
  try {
    return compileLinearPattern(source);
  } catch (error) {
    if (!(error instanceof PatternRefusal)) throw error;
    throw new PolicyCompileError(`${path}.${key}`, error.rule, `${key}: ${error.reason}`);
  }
}

function allowedAlgorithms(block: PolicyBlock, path: string): ReadonlySet<string> {
  const listed = optionalArray(block, 'jws-algorithms', path).map(String);
  for (const alg of listed) {
    if (!supportedAlgorithms.includes(alg)) {
      throw new PolicyCompileError(
        `${path}.jws-algorithms`,
        'enum',
        `${alg} is not an algorithm jwt-validate verifies (none never is)`,
      );
    }
  }
  return new Set(listed.length > 0 ? listed : supportedAlgorithms);
}

/** Where the keys are, as the block names them with one catalog's API property values. */
type KeyReference =
  { kind: 'remote'; url: URL } | { kind: 'variable'; name: string } | { kind: 'fixed'; value: string };

/**
 * Reads `jwks-url` (its `$(property)` substituted) or `jws-jwk` with a catalog's property values:
 * the check runs it with every catalog's values, the compiler with its own.
 * @throws PolicyCompileError `url` (not an http(s) URL) or `unknown-property` (`api.properties.<name>` the catalog lacks).
 */
function keyReference(block: PolicyBlock, properties: Readonly<Record<string, string>>, path: string): KeyReference {
  const url = optionalString(block, 'jwks-url', path);
  if (url !== undefined) {
    const resolved = url.replace(/\$\(([^)]+)\)/g, (_whole, name: string) =>
      Object.hasOwn(properties, name) ? properties[name] : '',
    );
    const parsed = /^https?:\/\/[^/]/i.test(resolved) && URL.canParse(resolved) ? new URL(resolved) : undefined;
    if (parsed === undefined)
      throw new PolicyCompileError(`${path}.jwks-url`, 'url', `jwks-url must be an http(s) URL, got ${resolved}`);
    return { kind: 'remote', url: parsed };
  }
  const name = optionalString(block, 'jws-jwk', path)!;
  if (!name.startsWith('api.properties.')) return { kind: 'variable', name };
  const property = name.slice('api.properties.'.length);
  if (!Object.hasOwn(properties, property))
    throw new PolicyCompileError(`${path}.jws-jwk`, 'unknown-property', `${name} is not an API property`);
  return { kind: 'fixed', value: properties[property] };
}

function keySource(block: PolicyBlock, api: CompiledApiInfo, path: string): KeySource {
  const reference = keyReference(block, api.properties, path);
  if (reference.kind === 'variable') return { kind: 'variable', name: reference.name, cache: new Map() };
  if (reference.kind === 'fixed') {
    const keys = importKeySet(reference.value);
    const fixed: KeySource & { kind: 'fixed' } = { kind: 'fixed', keys };
    // Imported once, from publish on; a key that does not import fails each call (keysFor logs why).
    keys.then((loaded) => (fixed.loaded = loaded)).catch(() => undefined);
    return fixed;
  }
  const profile = optionalString(block, 'tls-profile', path);
  // The profiles the API's org may use (a profile's `orgs`); own keys only.
  const profiles = { tlsProfiles: tlsProfilesOf(api.settings, api.catalog.orgName) };
  if (profile !== undefined && !Object.hasOwn(profiles.tlsProfiles, profile)) {
    throw new PolicyCompileError(
      `${path}.tls-profile`,
      'unknown-tls-profile',
      `TLS profile ${profile} is not configured`,
    );
  }
  const set = new RemoteKeySet(reference.url, dispatcherFor(profile, profiles), api.settings.jwks ?? defaultJwks);
  return { kind: 'remote', set };
}

function readToken(value: unknown, source: string, title: string): string {
  if (typeof value !== 'string' || value === '') throw invalid(title, `no JWT in ${source}`);
  // IBM: the Authorization header is `Bearer <jwt>`; any other variable holds the JWT itself.
  const match = /^Bearer +(\S+)$/i.exec(value);
  const token = match ? match[1] : value.trim();
  let parts = 1;
  for (let at = token.indexOf('.'); at >= 0; at = token.indexOf('.', at + 1)) parts++;
  if (parts === 5) throw invalid(title, 'encrypted JWTs (JWE) are not supported');
  if (parts !== 3) throw invalid(title, 'not a signed JWT (JWS compact serialization)');
  return token;
}

async function verify(
  token: string,
  source: KeySource,
  allowed: ReadonlySet<string>,
  ctx: FlowContext,
  title: string,
): Promise<{ claims: JWTPayload; key: VerificationKey }> {
  let header;
  try {
    header = decodeProtectedHeader(token);
  } catch {
    throw invalid(title, 'the JWT header cannot be read');
  }
  const alg = typeof header.alg === 'string' ? header.alg : 'none';
  if (!allowed.has(alg)) throw invalid(title, `algorithm ${alg} is not allowed`);
  const kid = typeof header.kid === 'string' ? header.kid : undefined;
  const keys = await keysFor(source, kid, alg, ctx, title);
  let lastError: unknown;
  for (const key of keys) {
    try {
      const { payload } = await jwtVerify(token, key.material, {
        algorithms: [alg],
        clockTolerance: clockToleranceSeconds,
      });
      return { claims: payload, key };
    } catch (error) {
      lastError = error;
    }
  }
  throw invalid(title, reasonOf(lastError));
}

async function keysFor(
  source: KeySource,
  kid: string | undefined,
  alg: string,
  ctx: FlowContext,
  title: string,
): Promise<VerificationKey[]> {
  try {
    if (source.kind === 'remote') return await source.set.keysFor(kid, alg);
    const all = source.kind === 'fixed' ? await source.keys : await variableKeys(source, ctx);
    const found = candidates(all, kid, alg);
    if (found.length === 0) throw new KeyLookupError('unknown-key', `no key has kid ${String(kid)} for ${alg}`);
    return found;
  } catch (error) {
    if (error instanceof KeyLookupError && error.kind === 'unavailable') {
      // The reason (the key URL, its network error) goes to the log with the cause, not to the consumer.
      const message = new PorticoError('GW_JWKS_UNAVAILABLE').message;
      throw new AssemblyError('ConnectionError', message, { status: 503, policy: title, cause: error });
    }
    if (error instanceof KeyLookupError) throw invalid(title, error.message);
    // A key that does not import says nothing to the consumer (its parse error quoted the key's
    // text, a shared secret's first characters among them); the provider finds why in the log.
    ctx.log.warn({ policy: title, reason: (error as Error).message }, 'jwt-validate: the key is not usable');
    throw invalid(title, 'the key is not usable');
  }
}

function variableKeys(source: KeySource & { kind: 'variable' }, ctx: FlowContext): Promise<VerificationKey[]> {
  const value = ctx.get(source.name);
  const text = typeof value === 'string' ? value : JSON.stringify(value ?? null);
  let keys = source.cache.get(text);
  if (keys === undefined) {
    keys = importKeySet(value);
    if (source.cache.size >= maxVariableKeySets) source.cache.delete(source.cache.keys().next().value as string);
    source.cache.set(text, keys);
  }
  return keys;
}

function checkClaim(value: unknown, expected: LinearPattern | undefined, claim: string, title: string): void {
  if (expected === undefined) return;
  const values = Array.isArray(value) ? value : [value];
  if (!values.some((entry) => typeof entry === 'string' && expected.test(entry))) {
    throw invalid(title, `the ${claim} claim does not match ${claim}-claim`);
  }
}

function reasonOf(error: unknown): string {
  const code = (error as { code?: string }).code;
  if (code === 'ERR_JWT_EXPIRED') return 'the JWT has expired';
  if (code === 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED') return 'the signature does not verify';
  if (code === 'ERR_JWT_CLAIM_VALIDATION_FAILED') return `claim check failed: ${(error as Error).message}`;
  return (error as Error).message;
}

/** IBM's error for a caller the gateway cannot authenticate, as a catch block names it. */
function invalid(title: string, reason: string): AssemblyError {
  const message = new PorticoError('GW_JWT_INVALID', { reason }).message;
  return new AssemblyError('UnauthorizedError', message, {
    status: 401,
    policy: title,
    headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
  });
}
