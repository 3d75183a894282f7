/**
 * The demo's fixed facts (org, catalog, users, ports, examples folder), in a module of their
 * own so the CLI can print them without loading the demo and its sample backends.
 */
import { fileURLToPath } from 'node:url';

export const demo = {
  org: 'demo',
  catalog: 'sandbox',
  provider: { username: 'admin', password: 'portico-demo-1', email: 'admin@example.com' },
  developer: {
    email: 'developer@example.com',
    password: 'portico-demo-1',
    name: 'Demo Developer',
    org: 'Demo Developers',
  },
  appTitle: 'Demo App',
  examples: fileURLToPath(new URL('../../examples/accessories/', import.meta.url)),
  /** The OAuth-secured warehouse API and its product; its provider file is in `providers/`. */
  oauthExamples: fileURLToPath(new URL('../../examples/oauth/', import.meta.url)),
  oauthProviderFile: fileURLToPath(new URL('../../examples/oauth/providers/demo-oauth.yaml', import.meta.url)),
  /** The sample services' addresses as the example files write them. */
  samplePorts: { financing: 9081, shipping: 9082, geocoder: 9083, inventory: 9084 },
};
