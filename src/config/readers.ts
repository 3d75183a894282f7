/** Readers of settings from the environment: each parses and checks one kind, and a bad value is a CONFIG_INVALID naming the setting. */
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { PorticoError } from '../errors.ts';
import type { TlsProfileSetting } from './config.ts';

/** The environment a setting is read from. */
export type Env = Record<string, string | undefined>;

/** An integer setting from `min` to `max`; unset or empty gives `fallback`. */
export function integer(env: Env, name: string, fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  return ranged(env, name, fallback, min, max, 'an integer', Number.isInteger);
}

/** A true/false setting (1, true, yes, on / 0, false, no, off); unset or empty gives `fallback`. */
export function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new PorticoError('CONFIG_INVALID', { setting: name, reason: `expected true or false, got "${raw}"` });
}

/** A number setting from `min` to `max`; unset or empty gives `fallback`. */
export function number(env: Env, name: string, fallback: number, min: number, max: number): number {
  return ranged(env, name, fallback, min, max, 'a number', Number.isFinite);
}

function ranged(
  env: Env,
  name: string,
  fallback: number,
  min: number,
  max: number,
  kind: string,
  valid: (value: number) => boolean,
): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!valid(value) || value < min || value > max) {
    throw new PorticoError('CONFIG_INVALID', {
      setting: name,
      reason: `expected ${kind} from ${min} to ${max}, got "${raw}"`,
    });
  }
  return value;
}

/** `PORTICO_TRUSTED_PROXIES`: comma-separated addresses or CIDR blocks, checked here so a typo stops the start. */
export function trustedProxies(env: Env): string[] {
  const entries = (env.PORTICO_TRUSTED_PROXIES ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const entry of entries) {
    const [address, bits, extra] = entry.split('/');
    const family = isIP(address);
    const maxBits = family === 6 ? 128 : 32;
    const badBits = bits !== undefined && (!/^\d+$/.test(bits) || Number(bits) > maxBits);
    if (family === 0 || badBits || extra !== undefined) {
      throw new PorticoError('CONFIG_INVALID', {
        setting: 'PORTICO_TRUSTED_PROXIES',
        reason: `"${entry}" is not an address or CIDR block`,
      });
    }
  }
  return entries;
}

function isOrgNameList(value: unknown): boolean {
  return Array.isArray(value) && value.length > 0 && value.every((org) => typeof org === 'string' && org.trim() !== '');
}

/** `PORTICO_TLS_PROFILES`: named TLS profiles for backends, as JSON. */
export function tlsProfiles(env: Env): Record<string, TlsProfileSetting> {
  const raw = env.PORTICO_TLS_PROFILES;
  if (raw === undefined || raw === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new PorticoError('CONFIG_INVALID', {
      setting: 'PORTICO_TLS_PROFILES',
      reason: `not JSON: ${(error as Error).message}`,
    });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new PorticoError('CONFIG_INVALID', {
      setting: 'PORTICO_TLS_PROFILES',
      reason: 'expected {"name": {"ca": "file.pem", …}}',
    });
  }
  for (const [name, profile] of Object.entries(value)) {
    const fields = profile as Record<string, unknown>;
    const wrong = Object.entries(fields ?? {}).find(([key, v]) =>
      key === 'rejectUnauthorized'
        ? typeof v !== 'boolean'
        : key === 'orgs'
          ? !isOrgNameList(v)
          : !['ca', 'cert', 'key'].includes(key) || typeof v !== 'string',
    );
    if (typeof profile !== 'object' || profile === null || wrong) {
      throw new PorticoError('CONFIG_INVALID', {
        setting: 'PORTICO_TLS_PROFILES',
        reason: `profile ${name}: fields are ca, cert, key (file paths), rejectUnauthorized (boolean) and orgs (a non-empty list of provider org names)`,
      });
    }
  }
  return value as Record<string, TlsProfileSetting>;
}

/** `PORTICO_PORTAL_CATALOG`: the `org/catalog` the portal shows. */
export function portalCatalog(env: Env): string | undefined {
  const raw = env.PORTICO_PORTAL_CATALOG;
  if (raw === undefined || raw === '') return undefined;
  if (!/^[^/\s]+\/[^/\s]+$/.test(raw))
    throw new PorticoError('CONFIG_INVALID', {
      setting: 'PORTICO_PORTAL_CATALOG',
      reason: `expected org/catalog, got "${raw}"`,
    });
  return raw;
}

/** A JSON object of name → "count/interval" strings (named rate limits). */
export function jsonObject(env: Env, name: string): Record<string, string> {
  const raw = env[name];
  if (raw === undefined || raw === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (error) {
    throw new PorticoError('CONFIG_INVALID', {
      setting: name,
      reason: `not JSON: ${(error as Error).message}`,
    });
  }
  if (
    typeof value !== 'object' ||
    value === null ||
    Array.isArray(value) ||
    Object.values(value).some((v) => typeof v !== 'string')
  ) {
    throw new PorticoError('CONFIG_INVALID', {
      setting: name,
      reason: 'expected a JSON object of name → "count/interval" strings',
    });
  }
  return value as Record<string, string>;
}

/** `PORTICO_SMTP_URL`: checked here so a typo stops the start rather than the first sign-up's mail. */
export function smtpUrl(env: Env): string | undefined {
  const raw = env.PORTICO_SMTP_URL;
  if (raw === undefined || raw === '') return undefined;
  const invalid = (reason: string) => new PorticoError('CONFIG_INVALID', { setting: 'PORTICO_SMTP_URL', reason });
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw invalid('expected smtp://[user:password@]host[:port] or smtps://…');
  }
  if (url.protocol !== 'smtp:' && url.protocol !== 'smtps:') {
    throw invalid(`expected smtp:// or smtps://, got ${url.protocol}//`);
  }
  if (url.hostname === '') throw invalid('the URL names no host');
  if (url.password !== '' && url.username === '') throw invalid('a password needs a user name');
  return raw;
}

/** `PORTICO_MAIL_FROM`: an address, or `Name <address>`. */
export function mailFrom(env: Env): string {
  const raw = env.PORTICO_MAIL_FROM;
  if (raw === undefined || raw === '') return 'Portico <portico@localhost>';
  if (!/^(?:[^<>\r\n]*<[^\s@<>]+@[^\s@<>]+>|[^\s@<>]+@[^\s@<>]+)$/.test(raw.trim())) {
    const reason = `expected an address or Name <address>, got "${raw}"`;
    throw new PorticoError('CONFIG_INVALID', { setting: 'PORTICO_MAIL_FROM', reason });
  }
  return raw.trim();
}

/** A public base URL (`http(s)://host[:port]`), without a trailing slash. */
export function publicUrl(env: Env, name: string): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (!/^https?:\/\/[^/\s]+\/?$/.test(raw)) {
    throw new PorticoError('CONFIG_INVALID', {
      setting: name,
      reason: `expected http(s)://host[:port], got "${raw}"`,
    });
  }
  return raw.replace(/\/$/, '');
}

/** `PORTICO_DATABASE_URL`, by default a SQLite file in the data folder. */
export function databaseUrl(env: Env, dataDir: string): string {
  const raw = env.PORTICO_DATABASE_URL;
  if (raw === undefined || raw === '') return `sqlite:${resolve(dataDir, 'portico.db')}`;
  if (/^postgres(ql)?:\/\//.test(raw) || raw.startsWith('sqlite:')) return raw;
  throw new PorticoError('CONFIG_INVALID', {
    setting: 'PORTICO_DATABASE_URL',
    reason: `expected postgres://… or sqlite:<file>, got "${raw}"`,
  });
}

/** A secret setting of at least `minLength` characters; unset or empty gives undefined. */
export function secret(env: Env, name: string, minLength: number): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  if (raw.length < minLength)
    throw new PorticoError('CONFIG_INVALID', { setting: name, reason: `must be at least ${minLength} characters` });
  return raw;
}
