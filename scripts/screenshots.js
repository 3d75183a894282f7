#!/usr/bin/env node
// Regenerates docs/screenshots/*.png (product list, API page, app page, usage, console
// analytics) at 1280 px by running the account-email Playwright walk against a fresh demo
// with PORTICO_SCREENSHOTS set. Usage: node scripts/screenshots.js [folder]
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';

const folder = resolve(process.argv[2] ?? 'docs/screenshots');
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=1', 'test/portal/account-email-walk.test.ts'],
  { stdio: 'inherit', env: { ...process.env, PORTICO_SCREENSHOTS: folder } },
);
if (result.status === 0) console.log(`screenshots written to ${folder}`);
process.exit(result.status ?? 1);
