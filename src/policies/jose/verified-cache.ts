/**
 * jwt-validate's cache of tokens it has accepted, one per compiled policy (so never shared
 * between APIs, or policies with other keys, issuers or audiences). An RSA or ECDSA check costs
 * tens of µs; a client sends the same token for minutes, so a repeat is answered from here:
 * the claims of the token string it verified, re-parsed for each request (no object is shared
 * between requests), `exp` and `nbf` checked against the clock again, and only while the key
 * that verified it is still in the policy's current key set (a JWKS refresh that drops the key
 * ends the entry at once). Entries live until the token's `exp` or `ttlMs`, whichever is first;
 * the cache is bounded in entries and bytes, oldest evicted first. Only accepted tokens are kept.
 */
import type { JWTPayload } from 'jose';
import type { VerificationKey } from './key-set.ts';

/** Bounds of one policy's cache. */
export interface VerifiedCacheSettings {
  /** Longest an entry is used, however long the token lives. */
  ttlMs: number;
  maxEntries: number;
  /** Token and claims text, summed over entries. */
  maxBytes: number;
}

interface Entry {
  /** The verified claims as JSON text: each hit parses its own copy. */
  claims: string;
  exp: number | undefined;
  nbf: number | undefined;
  /** The key that verified the token: the entry serves only while it is in the current key set. */
  key: VerificationKey;
  /** Epoch ms after which the entry is not used. */
  until: number;
  bytes: number;
}

// Accounting for the Map slot and the entry object, beyond the two strings.
const entryOverheadBytes = 160;

export class VerifiedTokenCache {
  private readonly entries = new Map<string, Entry>();
  private totalBytes = 0;

  constructor(
    private readonly settings: VerifiedCacheSettings,
    /** RFC 7519 §4.1.4 / §4.1.5 leeway, the same jose applies on a miss. */
    private readonly clockToleranceSeconds: number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  get bytes(): number {
    return this.totalBytes;
  }

  /** A fresh copy of the claims of `token` if it was accepted and still holds at `nowMs` with `keys`. */
  get(token: string, keys: readonly VerificationKey[], nowMs: number): JWTPayload | undefined {
    const entry = this.entries.get(token);
    if (entry === undefined) return undefined;
    if (nowMs >= entry.until || !keys.includes(entry.key)) {
      this.remove(token, entry);
      return undefined;
    }
    // jose's own checks (jwt_claims_set.js), so a hit accepts exactly what a miss would.
    const now = Math.floor(nowMs / 1000);
    if (entry.nbf !== undefined && entry.nbf > now + this.clockToleranceSeconds) return undefined;
    if (entry.exp !== undefined && entry.exp <= now - this.clockToleranceSeconds) return undefined;
    return JSON.parse(entry.claims) as JWTPayload;
  }

  /** Keeps `token`, verified by `key`, with its claims. */
  set(token: string, claims: JWTPayload, key: VerificationKey, nowMs: number): void {
    const text = JSON.stringify(claims);
    const bytes = 2 * (token.length + text.length) + entryOverheadBytes;
    // One token may not take more than a sixteenth of the cache.
    if (bytes * 16 > this.settings.maxBytes) return;
    const exp = typeof claims.exp === 'number' ? claims.exp : undefined;
    const until = Math.min(nowMs + this.settings.ttlMs, exp === undefined ? Infinity : exp * 1000);
    if (until <= nowMs) return;
    const nbf = typeof claims.nbf === 'number' ? claims.nbf : undefined;
    const old = this.entries.get(token);
    if (old !== undefined) this.remove(token, old);
    while (
      this.entries.size > 0 &&
      (this.entries.size >= this.settings.maxEntries || this.totalBytes + bytes > this.settings.maxBytes)
    ) {
      const [oldest, entry] = this.entries.entries().next().value as [string, Entry];
      this.remove(oldest, entry);
    }
    this.entries.set(token, { claims: text, exp, nbf, key, until, bytes });
    this.totalBytes += bytes;
  }

  private remove(token: string, entry: Entry): void {
    this.entries.delete(token);
    this.totalBytes -= entry.bytes;
  }
}
