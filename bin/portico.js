#!/usr/bin/env node
// The `portico` command. TypeScript sources run through tsx's loader, so a clone works
// without a build step; the loader transpiles each file once and caches it.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
