/**
 * Hashing of what the store must never keep in clear: passwords (argon2id, slow on purpose)
 * and high-entropy tokens — client secrets and session tokens — (SHA-256: they are 256-bit
 * random values, so a fast hash is as safe and keeps the gateway's per-request check cheap).
 */
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { hash, verify } from '@node-rs/argon2';

// OWASP's argon2id baseline: m=19 MiB, t=2, p=1. Algorithm 2 = argon2id in @node-rs/argon2.
const argonOptions = { algorithm: 2, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export function hashPassword(password: string): Promise<string> {
  return hash(password, argonOptions);
}

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, password);
  } catch {
    return false;
  }
}

/** SHA-256 hex of a token or secret. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** Constant-time comparison of a presented secret with a stored SHA-256 hex. */
export function secretMatches(presented: string, storedHash: string): boolean {
  const a = Buffer.from(hashToken(presented), 'hex');
  const b = Buffer.from(storedHash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A random token, URL-safe, 256 bits. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** A client id in the hexadecimal 32-character form API Connect issues. */
export function newClientId(): string {
  return randomBytes(16).toString('hex');
}

export function newId(): string {
  return randomUUID();
}

export function now(): string {
  return new Date().toISOString();
}
