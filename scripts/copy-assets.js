#!/usr/bin/env node
// `npm run build` compiles TypeScript to dist/; this copies what the compiled code reads at
// run time from beside itself: the portal's static files and the demo's example definitions.
import { cpSync } from 'node:fs';

cpSync('src/web/static', 'dist/src/web/static', { recursive: true });
cpSync('examples', 'dist/examples', { recursive: true });
