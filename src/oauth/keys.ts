/**
 * Signing keys and access tokens. Access tokens are JWTs in the RFC 9068 profile (`typ:
 * at+jwt`), signed ES256 with the provider's current key and verified by every gateway node
 * from the snapshot alone, synchronously (node:crypto, no promise, no database): a call with a
 * token costs one ECDSA verification. A rotated key keeps verifying until the tokens it signed
 * have expired; the JWKS lists every key that still verifies.
 */
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID, sign, verify } from 'node:crypto';
import type { JsonWebKey, KeyObject } from 'node:crypto';

/** A key as the snapshot holds it. */
export interface SigningKey {
  kid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** The public JWK as the JWKS endpoint lists it. */
  jwk: Record<string, unknown>;
}

/** The claims of an access token Portico issued (RFC 9068 §2.2). */
export interface AccessClaims {
  iss: string;
  sub: string;
  aud: string;
  exp: number;
  iat: number;
  jti: string;
  client_id: string;
  scope: string;
  /** The grant the token belongs to: revoking the grant (a replayed code, a reused refresh token) revokes it. */
  grant_id: string;
  username?: string;
}

/** A new ES256 key pair: its kid and the private JWK to store. */
export function newSigningKey(): { kid: string; privateJwk: string } {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return { kid: randomUUID(), privateJwk: JSON.stringify(privateKey.export({ format: 'jwk' })) };
}

/** Imports a stored key. */
export function signingKey(kid: string, privateJwk: string): SigningKey {
  const privateKey = createPrivateKey({ key: JSON.parse(privateJwk) as JsonWebKey, format: 'jwk' });
  const publicKey = createPublicKey(privateKey);
  const { kty, crv, x, y } = publicKey.export({ format: 'jwk' });
  return { kid, privateKey, publicKey, jwk: { kty, crv, x, y, kid, use: 'sig', alg: 'ES256' } };
}

const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Signs an access token with `key`. */
export function signAccessToken(claims: AccessClaims, key: SigningKey): string {
  const input = `${encode({ alg: 'ES256', typ: 'at+jwt', kid: key.kid })}.${encode(claims)}`;
  const signature = sign('sha256', Buffer.from(input), { key: key.privateKey, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}

// Three base64url parts; a bearer token longer than this is not one of ours.
const jwtPattern = /^([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/;
const maxTokenLength = 4096;

function parseJson(part: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The claims of a token signed by one of `keys`, or undefined: a wrong shape, `alg` other than
 * ES256 (no `none`, no algorithm confusion), `typ` other than at+jwt (RFC 9068 §4), an unknown
 * kid or a bad signature. Expiry, issuer and revocation are the caller's checks.
 */
export function verifySignature(token: string, keys: ReadonlyMap<string, SigningKey>): AccessClaims | undefined {
  if (token.length > maxTokenLength) return undefined;
  const parts = jwtPattern.exec(token);
  if (parts === null) return undefined;
  const header = parseJson(parts[1]);
  if (header?.alg !== 'ES256' || header.typ !== 'at+jwt' || typeof header.kid !== 'string') return undefined;
  const key = keys.get(header.kid);
  if (key === undefined) return undefined;
  const signature = Buffer.from(parts[3], 'base64url');
  const signed = Buffer.from(`${parts[1]}.${parts[2]}`);
  if (!verify('sha256', signed, { key: key.publicKey, dsaEncoding: 'ieee-p1363' }, signature)) return undefined;
  const claims = parseJson(parts[2]);
  if (claims === undefined || typeof claims.exp !== 'number' || typeof claims.jti !== 'string') return undefined;
  if (typeof claims.client_id !== 'string' || typeof claims.scope !== 'string' || typeof claims.grant_id !== 'string')
    return undefined;
  return claims as unknown as AccessClaims;
}
