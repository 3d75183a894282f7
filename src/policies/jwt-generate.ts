/**
 * `jwt-generate` (IBM "jwt-generate"): signs a JWT and stores it in `jwt` (default
 * `generated.jwt`). Claims come from variables as API Connect names them (`iss-claim`,
 * `sub-claim`, `aud-claim`, `private-claims`), `exp-claim` is the lifetime in seconds (default
 * 3600), `jti-claim: true` adds a random id; `iat` is always set. The key is the private JWK
 * in the `jws-jwk` variable (`api.properties.*` read once at publish), `jws-alg` the algorithm.
 */
import { bool, oneOfStrings, policy, refused, str } from './schema-kit.ts';
import { definePolicy, problemsOf } from './policy.ts';
import { randomUUID } from 'node:crypto';
import { importJWK, SignJWT } from 'jose';
import type { JWK, JWTPayload } from 'jose';
import { PorticoError } from '../errors.ts';
import { joseAlgorithms, keyAlgorithms } from './jose/key-set.ts';
import { optionalString, readBlock, titleOf } from './policy-config.ts';
import type { PolicyBlock } from './policy-config.ts';
import { AssemblyError, PolicyCompileError } from './types.ts';
import type { CheckScope, CompiledApiInfo, FlowContext, PolicyType, Step } from './types.ts';

interface SigningKey {
  alg: string;
  kid: string | undefined;
  material: CryptoKey | Uint8Array;
}

// Registered claims a private-claims object may not override (they come from the policy).
const registered = new Set(['iss', 'sub', 'aud', 'exp', 'iat', 'jti', 'nbf']);

/** The jwt-generate policy. */
export const jwtGeneratePolicy: PolicyType = definePolicy<PolicyBlock>({
  name: 'jwt-generate',
  versions: ['1.0.0', '2.0.0'],
  description: 'Signs a JWT with claims taken from variables and stores it in jwt.',
  schema: policy(
    ['1.0.0', '2.0.0'],
    {
      jwt: str('Variable the signed JWT is written to.', 'generated.jwt'),
      'jti-claim': bool('Add a random jti claim.', false),
      'iss-claim': str('Variable holding the iss claim.', 'iss.claim'),
      'sub-claim': str('Variable holding the sub claim.'),
      'aud-claim': str('Variable holding the aud claim (a string or a list).'),
      'exp-claim': {
        type: ['integer', 'string'],
        default: 3600,
        description: 'Lifetime in seconds (exp = iat + this).',
      },
      'private-claims': str('Variable holding a JSON object of further claims (registered claims are not overridden).'),
      'jws-jwk': str('Variable holding the private signing JWK (api.properties.* is read once at publish).'),
      'jws-alg': oneOfStrings(
        // Ed25519 (RFC 9864's name) is verified when a token names it; signing uses EdDSA.
        joseAlgorithms.filter((alg) => alg !== 'Ed25519'),
        'Signing algorithm; default: the first the key type allows (RS256, ES256 by curve, HS256, EdDSA).',
      ),
      'jws-crypto': refused('DataPower crypto object: not supported by Portico (use jws-jwk).'),
      'jwe-crypto': refused('DataPower crypto object for JWE: not supported by Portico.'),
      'jwe-jwk': refused('JWK to encrypt the JWT: JWE is not supported by Portico.'),
      'jwe-enc-alg': refused('JWE content encryption: not supported by Portico.'),
      'jwe-alg': refused('JWE key management: not supported by Portico.'),
    },
    ['jws-jwk'],
  ),
  check: (config: PolicyBlock, _scope: CheckScope, path: string) =>
    problemsOf(() => lifetimeOf(config['exp-claim'], `${path}.exp-claim`)),
  compile(config: PolicyBlock, api: CompiledApiInfo, path: string): Step {
    const block = readBlock(config, jwtGeneratePolicy, path);
    for (const field of ['jws-crypto', 'jwe-crypto', 'jwe-jwk', 'jwe-enc-alg', 'jwe-alg']) {
      if (block[field] !== undefined)
        throw new PolicyCompileError(`${path}.${field}`, 'unsupported', `${field} is not supported: sign with jws-jwk`);
    }
    const output = optionalString(block, 'jwt', path) ?? 'generated.jwt';
    const lifetime = lifetimeOf(block['exp-claim'], `${path}.exp-claim`);
    const claimVariables = {
      iss: optionalString(block, 'iss-claim', path) ?? 'iss.claim',
      sub: optionalString(block, 'sub-claim', path),
      aud: optionalString(block, 'aud-claim', path),
    };
    const privateClaims = optionalString(block, 'private-claims', path);
    const withJti = block['jti-claim'] === true;
    const requestedAlg = optionalString(block, 'jws-alg', path);
    const jwkVariable = optionalString(block, 'jws-jwk', path);
    if (jwkVariable === undefined)
      throw new PolicyCompileError(path, 'required', 'jwt-generate needs a signing key: jws-jwk');
    const fixedKey = jwkVariable.startsWith('api.properties.')
      ? signingKey(api.properties[jwkVariable.slice(15)], requestedAlg)
      : undefined;
    fixedKey?.catch(() => undefined);
    const title = titleOf(block, 'jwt-generate');
    return async function jwtGenerate(ctx: FlowContext) {
      try {
        const key = await (fixedKey ?? signingKey(ctx.get(jwkVariable), requestedAlg));
        const claims = buildClaims(ctx, claimVariables, privateClaims, withJti);
        const now = Math.floor(Date.now() / 1000);
        const jwt = await new SignJWT(claims)
          .setProtectedHeader({
            alg: key.alg,
            typ: 'JWT',
            ...(key.kid === undefined ? {} : { kid: key.kid }),
          })
          .setIssuedAt(now)
          .setExpirationTime(now + lifetime)
          .sign(key.material);
        ctx.set(output, jwt);
      } catch (error) {
        if (error instanceof AssemblyError) throw error;
        const message = new PorticoError('GW_JWT_GENERATE_FAILED', { reason: (error as Error).message }).message;
        throw new AssemblyError('RuntimeError', message, { status: 500, policy: title, cause: error });
      }
    };
  },
});

function lifetimeOf(value: unknown, path: string): number {
  if (value === undefined || value === null || value === '') return 3600;
  const seconds = Number(value);
  if (!Number.isInteger(seconds) || seconds < 1 || seconds > 10 * 365 * 86_400) {
    throw new PolicyCompileError(path, 'range', 'exp-claim is the lifetime in seconds (1 to ten years)');
  }
  return seconds;
}

async function signingKey(value: unknown, requestedAlg: string | undefined): Promise<SigningKey> {
  const jwk = (typeof value === 'string' ? JSON.parse(value) : value) as JWK | undefined;
  if (typeof jwk !== 'object' || jwk === null) throw new Error('jws-jwk holds no JWK');
  const allowed = keyAlgorithms(jwk);
  const alg = requestedAlg ?? allowed[0];
  if (alg === undefined || !allowed.includes(alg))
    throw new Error(`the key (kty ${String(jwk.kty)}) cannot sign ${String(alg)}`);
  if (jwk.kty !== 'oct' && jwk.d === undefined)
    throw new Error('jws-jwk holds a public key: signing needs the private key');
  const material = await importJWK(jwk, alg);
  return { alg, kid: typeof jwk.kid === 'string' ? jwk.kid : undefined, material };
}

function buildClaims(
  ctx: FlowContext,
  variables: { iss: string; sub: string | undefined; aud: string | undefined },
  privateClaims: string | undefined,
  withJti: boolean,
): JWTPayload {
  const claims: JWTPayload = Object.create(null) as JWTPayload;
  if (privateClaims !== undefined) {
    const raw = ctx.get(privateClaims);
    const extra = typeof raw === 'string' ? (JSON.parse(raw) as unknown) : raw;
    if (extra !== undefined && (typeof extra !== 'object' || extra === null || Array.isArray(extra))) {
      throw new Error(`${privateClaims} does not hold a JSON object of claims`);
    }
    for (const [name, value] of Object.entries(extra ?? {})) if (!registered.has(name)) claims[name] = value;
  }
  for (const [claim, variable] of Object.entries(variables)) {
    if (variable === undefined) continue;
    const value = ctx.get(variable);
    if (value === undefined || value === null || value === '') continue;
    claims[claim] = claim === 'aud' && Array.isArray(value) ? value.map(String) : String(value);
  }
  if (withJti) claims.jti = randomUUID();
  return { ...claims };
}
