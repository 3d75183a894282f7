/**
 * Verification keys for jwt-validate: a JWK or JWK set given inline (a variable or an API
 * property), or a JWKS URL fetched with undici and kept. Keys are imported once, when the set is
 * read, never per request. Each key admits only the algorithms of its own type (RFC 7518 §3.1),
 * so an HS256 token can never be checked with an RSA public key as its secret, and `none` with
 * nothing at all.
 */
import { importJWK } from 'jose';
import type { JWK } from 'jose';
import type { Dispatcher } from 'undici';
import { fetchJson } from '../fetch-json.ts';
import type { JwksSettings } from '../types.ts';

/**
 * A key ready to verify one algorithm: imported material and that algorithm. A JWK that admits
 * several (an RSA key without `alg`) is one of these per algorithm, since WebCrypto binds an
 * imported key to one algorithm and hash: RSASSA-PKCS1-v1_5 with SHA-256 cannot check RS384 or PS256.
 */
export interface VerificationKey {
  kid: string | undefined;
  alg: string;
  material: CryptoKey | Uint8Array;
}

const byType: Record<string, readonly string[]> = {
  RSA: ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512'],
  oct: ['HS256', 'HS384', 'HS512'],
};
// EC and OKP keys sign with the algorithm of their curve (RFC 7518 §3.4, RFC 8037 §3.1); jose
// verifies EdDSA with Ed25519 only, and X25519 / X448 keys are for key agreement, not signatures.
const byCurve: Record<string, Record<string, readonly string[]>> = {
  EC: { 'P-256': ['ES256'], 'P-384': ['ES384'], 'P-521': ['ES512'] },
  OKP: { Ed25519: ['EdDSA', 'Ed25519'] },
};
/** Every JWS algorithm Portico signs or verifies with (RSA, EC, HMAC, OKP), from the tables above. */
export const joseAlgorithms: readonly string[] = [
  ...byType.RSA,
  ...Object.values(byCurve.EC).flat(),
  ...byType.oct,
  ...byCurve.OKP.Ed25519,
];
// A JWKS larger than this is not a key set a gateway should hold.
const maxKeys = 100;
const maxSetBytes = 256 * 1024;

/** Own entries only: a key set's `kty: "constructor"` must not find Object.prototype's members. */
function ownEntry<T>(table: Record<string, T>, key: unknown): T | undefined {
  return Object.hasOwn(table, String(key)) ? table[String(key)] : undefined;
}

/**
 * The algorithms a JWK may verify: its own `alg` if it names one of its type's, else every one
 * its type allows (many identity providers' JWKS leave `alg` out, RFC 7517 §4.4 makes it optional).
 */
export function keyAlgorithms(jwk: JWK): readonly string[] {
  const curves = ownEntry(byCurve, jwk.kty);
  const family = curves === undefined ? (ownEntry(byType, jwk.kty) ?? []) : (ownEntry(curves, jwk.crv) ?? []);
  if (typeof jwk.alg === 'string') return family.includes(jwk.alg) ? [jwk.alg] : [];
  return family;
}

/**
 * Imports every signing key of a JWK or JWK set (`{"keys": [...]}`), once per algorithm it
 * admits; keys for encryption are left out.
 */
export async function importKeySet(value: unknown): Promise<VerificationKey[]> {
  const parsed = typeof value === 'string' ? (JSON.parse(value) as unknown) : value;
  if (typeof parsed !== 'object' || parsed === null) throw new Error('not a JWK or JWK set');
  const record = parsed as Record<string, unknown>;
  const jwks = Array.isArray(record.keys) ? (record.keys as unknown[]) : [record];
  const keys: VerificationKey[] = [];
  for (const entry of jwks.slice(0, maxKeys)) {
    if (typeof entry !== 'object' || entry === null) continue;
    const jwk = entry as JWK;
    if (jwk.use === 'enc' || 'd' in jwk) continue;
    const kid = typeof jwk.kid === 'string' ? jwk.kid : undefined;
    for (const alg of keyAlgorithms(jwk)) {
      keys.push({ kid, alg, material: await importJWK({ ...jwk, ext: true }, alg) });
    }
  }
  if (keys.length === 0) throw new Error('no usable verification key');
  return keys;
}

/** The keys that may verify a token with header `kid` and `alg`. */
export function candidates(keys: readonly VerificationKey[], kid: string | undefined, alg: string): VerificationKey[] {
  return keys.filter((key) => (kid === undefined || key.kid === undefined || key.kid === kid) && key.alg === alg);
}

/** Why no key could be had: `unavailable` → 503 (fail closed), `unknown-key` → 401. */
export class KeyLookupError extends Error {
  constructor(
    readonly kind: 'unavailable' | 'unknown-key',
    message: string,
  ) {
    super(message);
  }
}

/**
 * A JWKS URL's key set. Refreshed in the background once older than `refreshMs` (the old keys
 * serve meanwhile); a `kid` it does not have triggers at most one fetch per
 * `unknownKidIntervalMs`, so a flood of made-up kids cannot make the gateway hammer the URL;
 * keys not refreshed for `maxStaleMs` (the URL is down) are dropped.
 */
export class RemoteKeySet {
  private keys: VerificationKey[] | undefined;
  private fetchedAt = 0;
  private lastAttempt = -Infinity;
  private inflight: Promise<void> | undefined;
  private lastError = 'not fetched yet';
  /** Fetches started (for tests and metrics). */
  fetches = 0;

  constructor(
    readonly url: URL,
    private readonly dispatcher: Dispatcher,
    private readonly settings: JwksSettings,
  ) {}

  /** The keys that may verify a token with this `kid` and `alg`. @throws KeyLookupError */
  async keysFor(kid: string | undefined, alg: string): Promise<VerificationKey[]> {
    const now = Date.now();
    if (this.loaded(now) === undefined) await this.fetchIfAllowed(now);
    if (this.keys === undefined)
      throw new KeyLookupError('unavailable', `${this.url.origin}${this.url.pathname}: ${this.lastError}`);
    let found = candidates(this.keys, kid, alg);
    if (found.length === 0 && kid !== undefined && !this.keys.some((key) => key.kid === kid)) {
      await this.fetchIfAllowed(now);
      found = candidates(this.keys ?? [], kid, alg);
    }
    if (found.length === 0)
      throw new KeyLookupError('unknown-key', `no key of the key set has kid ${String(kid)} for ${alg}`);
    return found;
  }

  /**
   * The keys in use now, without waiting: undefined once they are `maxStaleMs` old (or were never
   * fetched); a set older than `refreshMs` is fetched again in the background.
   */
  loaded(now = Date.now()): readonly VerificationKey[] | undefined {
    if (this.keys !== undefined && now - this.fetchedAt > this.settings.maxStaleMs) this.keys = undefined;
    else if (this.keys !== undefined && now - this.fetchedAt > this.settings.refreshMs && this.inflight === undefined)
      void this.refresh();
    return this.keys;
  }

  private async fetchIfAllowed(now: number): Promise<void> {
    if (this.inflight !== undefined) return this.inflight;
    if (now - this.lastAttempt < this.settings.unknownKidIntervalMs) return;
    return this.refresh();
  }

  private refresh(): Promise<void> {
    this.lastAttempt = Date.now();
    this.fetches++;
    this.inflight = this.load().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  private async load(): Promise<void> {
    try {
      const { timeoutMs } = this.settings;
      const answer = await fetchJson(this.url, this.dispatcher, {
        method: 'GET',
        timeoutMs,
        maxBytes: maxSetBytes,
      });
      if (answer.status !== 200) throw new Error(`the JWKS URL answered HTTP ${answer.status}`);
      this.keys = await importKeySet(answer.value);
      this.fetchedAt = Date.now();
    } catch (error) {
      // The keys fetched before stay in use until they are maxStaleMs old.
      this.lastError = (error as Error).message;
    }
  }
}
