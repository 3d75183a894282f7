/**
 * The CLI's connection to a management server: the server URL and token come from
 * `PORTICO_SERVER`/`PORTICO_TOKEN`, else from the file `portico login` wrote (readable by its
 * owner only), like `apic` and decK keep theirs.
 */
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { PorticoError } from '../errors.ts';

export interface Credentials {
  server: string;
  token: string;
}

/** `$PORTICO_CONFIG` or `~/.config/portico/credentials.json`. */
export function credentialsFile(): string {
  return (
    process.env.PORTICO_CONFIG ??
    join(process.env.XDG_CONFIG_HOME ?? join(homedir(), '.config'), 'portico', 'credentials.json')
  );
}

export function saveCredentials(credentials: Credentials): string {
  const file = credentialsFile();
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  writeFileSync(file, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return file;
}

export function loadCredentials(): Credentials {
  const server = process.env.PORTICO_SERVER;
  const token = process.env.PORTICO_TOKEN;
  if (server && token) return { server, token };
  let stored: Partial<Credentials> = {};
  try {
    stored = JSON.parse(readFileSync(credentialsFile(), 'utf8')) as Partial<Credentials>;
  } catch {
    // No file yet: fall through to the error below unless the environment filled both.
  }
  const merged = { server: server ?? stored.server, token: token ?? stored.token };
  if (!merged.server || !merged.token) throw new PorticoError('CLI_NOT_LOGGED_IN');
  return merged as Credentials;
}

/** Thrown for an error answer of the server; `body.error` is the server's error. */
export class ServerError extends Error {
  constructor(
    readonly status: number,
    readonly body: {
      error?: {
        code?: string;
        message?: string;
        problems?: Array<{ path: string; rule: string; reason: string }>;
        /** Every problem found, when `problems` lists only the first 100. */
        problemCount?: number;
        file?: string;
      };
    },
  ) {
    super(body.error?.message ?? `the server answered ${status}`);
    this.name = 'ServerError';
  }
}

/** Calls the management API; returns the parsed JSON answer (undefined for 204). */
export async function callServer(
  server: string,
  method: string,
  path: string,
  options: { token?: string; body?: unknown } = {},
): Promise<unknown> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(new URL(path, server), {
      method,
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
      signal: AbortSignal.timeout(60_000),
    });
  } catch (error) {
    const cause = (error as { cause?: { code?: string; message?: string } }).cause;
    throw new PorticoError('CLI_SERVER_UNREACHABLE', {
      server,
      reason: cause?.code ?? cause?.message ?? (error as Error).message,
    });
  }
  if (response.status === 204) return undefined;
  const text = await response.text();
  let body: unknown;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = { error: { message: text.slice(0, 200) } };
  }
  if (!response.ok) throw new ServerError(response.status, (body ?? {}) as ServerError['body']);
  return body;
}

/** Calls the management server the CLI is logged in to. */
export function callManagement(method: string, path: string, body?: unknown): Promise<unknown> {
  const { server, token } = loadCredentials();
  return callServer(server, method, path, { token, body });
}

/** `/api/catalogs/{catalog}` followed by `rest`, each segment encoded. */
export function catalogPath(catalog: string, ...rest: string[]): string {
  return ['/api/catalogs', catalog, ...rest].map((s, i) => (i === 0 ? s : encodeURIComponent(s))).join('/');
}

export function printLine(line: string): void {
  process.stdout.write(`${line}\n`);
}

/** What `--json` prints: the server's answer as it came, indented. */
export function printJson(value: unknown): void {
  printLine(JSON.stringify(value, null, 2));
}
