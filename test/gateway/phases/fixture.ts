/**
 * A small published catalog for the phase tests, compiled by the real snapshot compiler with the
 * real policy registry: org `acme`, catalog `sandbox`, API `shop` (base path `/shop`) in product
 * `shop-product`, plan `silver` (`limit` calls per hour), one app with client id `client-1`
 * subscribed to it. No store and no listener: the same data a gateway reads from the database.
 */
import pino from 'pino';
import { compileSnapshot } from '../../../src/gateway/snapshot.ts';
import type { Snapshot } from '../../../src/gateway/snapshot.ts';
import { policyRegistry } from '../../../src/policies/registry.ts';
import type { PolicySettings } from '../../../src/policies/types.ts';
import { createMemoryCounterStore } from '../../../src/ratelimit/memory.ts';
import type { SnapshotData } from '../../../src/store/snapshot-data.ts';

export const clientId = 'client-1';

export const shopDocument = {
  swagger: '2.0',
  info: { title: 'Shop', version: '1.0.0', 'x-ibm-name': 'shop' },
  basePath: '/shop',
  securityDefinitions: { clientId: { type: 'apiKey', in: 'header', name: 'X-IBM-Client-Id' } },
  security: [{ clientId: [] }],
  paths: {
    '/items': {
      get: {
        operationId: 'listItems',
        parameters: [{ name: 'limit', in: 'query', type: 'integer', required: true, maximum: 100 }],
        responses: { 200: { description: 'ok' } },
      },
      post: {
        operationId: 'addItem',
        parameters: [{ name: 'item', in: 'body', required: true, schema: { type: 'object' } }],
        responses: { 201: { description: 'created' } },
      },
    },
    '/items/count': { get: { operationId: 'countItems', responses: { 200: { description: 'ok' } } } },
    '/items/{id}': {
      get: {
        operationId: 'getItem',
        parameters: [{ name: 'id', in: 'path', type: 'string', required: true }],
        responses: { 200: { description: 'ok' } },
      },
      delete: { operationId: 'deleteItem', responses: { 204: { description: 'gone' } } },
    },
  },
  'x-ibm-configuration': {
    cors: { enabled: true },
    assembly: {
      execute: [{ 'set-variable': { version: '2.0.0', actions: [{ set: 'message.body', value: 'ok' }] } }],
    },
  },
};

const now = '2026-01-01T00:00:00.000Z';

/** The store's rows for the catalog above, with a plan of `limit` calls per hour (and another API document). */
export function shopData(limit = 3, document: object = shopDocument): SnapshotData {
  return {
    change: 1,
    catalogs: [{ id: 'cat-1', name: 'sandbox', orgId: 'org-1', orgName: 'acme' }],
    products: [
      {
        id: 'prod-1',
        catalog_id: 'cat-1',
        name: 'shop-product',
        version: '1.0.0',
        title: 'Shop product',
        state: 'published',
        view_type: 'public',
        subscribe_type: 'authenticated',
        view_orgs: '[]',
        subscribe_orgs: '[]',
        document: JSON.stringify({ product: '1.0.0', plans: { silver: {} } }),
        created_at: now,
        updated_at: now,
      },
    ],
    plans: [
      {
        id: 'plan-1',
        product_id: 'prod-1',
        name: 'silver',
        title: 'Silver',
        description: '',
        approval: 0,
        rate_limits: JSON.stringify([
          {
            name: 'default',
            unlimited: false,
            count: limit,
            windowMs: 3_600_000,
            value: `${limit}/1hour`,
            hardLimit: true,
          },
        ]),
        burst_limits: '[]',
        position: 0,
      },
    ],
    productApis: [{ product_id: 'prod-1', api_id: 'api-1', api_key: 'shop' }],
    apis: [
      {
        id: 'api-1',
        org_id: 'org-1',
        name: 'shop',
        version: '1.0.0',
        title: 'Shop',
        base_path: '/shop',
        state: 'online',
        document: JSON.stringify(document),
        created_at: now,
        updated_at: now,
      },
    ],
    apps: [
      { id: 'app-1', title: 'App', consumer_org_id: 'co-1', consumer_org_name: 'buyers', consumer_org_title: 'Buyers' },
    ],
    credentials: [{ client_id: clientId, secret_hash: 'unused', app_id: 'app-1' }],
    subscriptions: [{ id: 'sub-1', app_id: 'app-1', product_id: 'prod-1', plan_id: 'plan-1', state: 'active' }],
  } as SnapshotData;
}

export const logger = pino({ level: 'silent' });

export function policySettings(): PolicySettings {
  return {
    maxBackendBodyBytes: 1 << 20,
    tlsProfiles: {},
    script: { timeoutMs: 200, memoryBytes: 1 << 24 },
    counters: createMemoryCounterStore(),
  };
}

/** The catalog compiled into a snapshot, as a gateway holds it. */
export async function shopSnapshot(limit = 3): Promise<Snapshot> {
  const snapshot = await compileSnapshot(shopData(limit), {
    registry: policyRegistry,
    settings: policySettings(),
    logger,
  });
  if (snapshot.failures.length > 0) throw new Error(`fixture does not compile: ${JSON.stringify(snapshot.failures)}`);
  return snapshot;
}
