/**
 * The real platform for tests: a temporary SQLite store (or a fresh PostgreSQL database),
 * every server on a free port, a provider org `acme` with user `admin`, nothing mocked.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { loadSettings } from '../../src/config/config.ts';
import type { Settings } from '../../src/config/config.ts';
import { startPlatform } from '../../src/platform.ts';
import type { Platform, Role } from '../../src/platform.ts';

export const adminPassword = 'admin-pass-123';

export interface TestPlatform {
  platform: Platform;
  orgId: string;
  dataDir: string;
  management: string;
  gateway: string;
  /** The gateway's status listener (`/health`, `/ready`, `/metrics`). */
  status: string;
  /** A bearer token for `admin`. */
  token(): Promise<string>;
  /** Calls the management API as `admin`; returns status and parsed body. */
  call(
    method: string,
    path: string,
    body?: unknown,
    token?: string | null,
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read whatever JSON the API answers
  ): Promise<{ status: number; body: any }>;
  close(): Promise<void>;
}

export async function startTestPlatform(
  options: { role?: Role; env?: Record<string, string>; overrides?: Partial<Settings> } = {},
): Promise<TestPlatform> {
  const dataDir = mkdtempSync(join(tmpdir(), 'portico-platform-'));
  const settings = loadSettings(
    // No drain on close: a test that drains says so.
    {
      PORTICO_GATEWAY_PORT: '0',
      PORTICO_PORTAL_PORT: '0',
      PORTICO_MANAGEMENT_PORT: '0',
      PORTICO_ANALYTICS_FLUSH_MS: '50',
      PORTICO_DRAIN_SECONDS: '0',
      ...options.env,
    },
    { dataDir, ...options.overrides },
  );
  const platform = await startPlatform(
    settings,
    pino({ level: process.env.PORTICO_TEST_LOG ?? 'silent' }),
    options.role ?? 'all',
  );
  const { orgId } = await platform.services.ensureOrg('acme', 'Acme');
  await platform.services.addProviderUser(orgId, {
    username: 'admin',
    email: 'admin@example.com',
    password: adminPassword,
  });
  let cached: string | undefined;
  const management = platform.urls.management ?? '';
  const self: TestPlatform = {
    platform,
    orgId,
    dataDir,
    management,
    gateway: platform.urls.gateway ?? '',
    status: platform.urls.status ?? '',
    async token() {
      if (cached) return cached;
      const answer = await fetch(`${management}/api/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'admin', password: adminPassword }),
      });
      cached = ((await answer.json()) as { token: string }).token;
      return cached;
    },
    async call(method, path, body, token) {
      const headers: Record<string, string> = {};
      const bearer = token === null ? undefined : (token ?? (await self.token()));
      if (bearer) headers.authorization = `Bearer ${bearer}`;
      if (body !== undefined) headers['content-type'] = 'application/json';
      const response = await fetch(`${management}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : undefined };
    },
    async close() {
      await platform.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return self;
}
