/**
 * A real platform with one API `sec:1.0.0` (base path `/sec`, no backend: the assembly answers
 * `served`) published in a product, and apps subscribed to it (or not), for the security tests.
 * `store()` writes a document straight to the store, bypassing import, as a document stored
 * before the fail-closed rule would be.
 */
import * as apisRepo from '../../src/store/apis.ts';
import { findConsumerOrgByName } from '../../src/store/consumers.ts';
import { startTestPlatform } from './platform.ts';
import type { TestPlatform } from './platform.ts';

export type Doc = Record<string, unknown>;

/** The assembly of every test API: no backend, the body names what answered. */
export const servedAssembly = {
  execute: [{ 'set-variable': { actions: [{ set: 'message.body', value: 'served' }] } }],
};

/** An API document `sec:1.0.0` with the given schemes and requirements, one operation per path. */
export function secApi(options: {
  openapi?: '2.0' | '3.0.3' | '3.1.0';
  schemes: Doc;
  security?: unknown;
  operations?: Record<string, { security?: unknown }>;
  ibm?: Doc;
}): Doc {
  const swagger = (options.openapi ?? '2.0') === '2.0';
  const paths: Doc = {};
  for (const [path, operation] of Object.entries(options.operations ?? { '/thing': {} })) {
    const parameter = swagger
      ? { name: 'n', in: 'query', required: true, type: 'integer' }
      : { name: 'n', in: 'query', required: true, schema: { type: 'integer' } };
    paths[path] = {
      get: {
        operationId: path.slice(1),
        parameters: [parameter],
        responses: { 200: { description: 'ok' } },
        ...operation,
      },
    };
  }
  const head = swagger
    ? { swagger: '2.0', basePath: '/sec', securityDefinitions: options.schemes }
    : {
        openapi: options.openapi,
        servers: [{ url: '/sec' }],
        components: { securitySchemes: options.schemes },
      };
  return {
    ...head,
    info: { title: 'Sec', version: '1.0.0', 'x-ibm-name': 'sec' },
    ...(options.security === undefined ? {} : { security: options.security }),
    paths,
    'x-ibm-configuration': { assembly: servedAssembly, ...options.ibm },
  };
}

export const clientIdScheme = { type: 'apiKey', in: 'header', name: 'X-IBM-Client-Id' };
export const clientSecretScheme = { type: 'apiKey', in: 'header', name: 'X-IBM-Client-Secret' };

export interface TestApp {
  clientId: string;
  clientSecret: string;
  /** The developer who owns the app (password `dev-pass-1234`). */
  email: string;
  subscriptionId?: string;
}

export interface SecurityPlatform {
  t: TestPlatform;
  /** `http://127.0.0.1:PORT/acme/sandbox/sec` */
  base: string;
  /** Imports (validated) and publishes `document` as `sec:1.0.0`. */
  publish(document: Doc): Promise<void>;
  /** Writes `document` over `sec:1.0.0` in the store, bypassing import, and reloads the gateway. */
  store(document: Doc): Promise<void>;
  /** A new app; subscribed to the product's plan `default` (or `gold`, which needs approval) unless `plan` is undefined. */
  newApp(plan?: 'default' | 'gold'): Promise<TestApp>;
  close(): Promise<void>;
}

const product = `product: 1.0.0
info: { name: sec, title: Sec, version: 1.0.0 }
plans:
  default: { title: Default }
  gold: { title: Gold, approval: true }
apis: { sec: { name: 'sec:1.0.0' } }
`;

let counter = 0;

export async function startSecurityPlatform(env: Record<string, string> = {}): Promise<SecurityPlatform> {
  const t = await startTestPlatform({ env });
  const services = t.platform.services;
  const consumerServices = t.platform.consumerServices;
  const { sandbox } = await services.ensureOrg('acme');
  const gateway = t.platform.gateway!;
  return {
    t,
    base: `${t.gateway}/acme/sandbox/sec`,
    async publish(document) {
      await services.importApi(t.orgId, {
        text: JSON.stringify(document),
        file: 'sec.json',
        replace: true,
        state: 'online',
      });
      await services.putProduct(t.orgId, 'sandbox', {
        text: product,
        file: 'sec-product.yaml',
        state: 'published',
      });
      await gateway.reload();
    },
    async store(document) {
      const api = await services.api(t.orgId, 'sec', '1.0.0');
      await apisRepo.replaceApiDocument(services.store.db, api.id, {
        title: 'Sec',
        basePath: '/sec',
        document,
      });
      await gateway.reload();
    },
    async newApp(plan) {
      counter++;
      const title = `Sec Devs ${counter} ${process.pid}`;
      const email = `sec${counter}-${process.pid}@example.com`;
      await consumerServices.signUp(sandbox.id, { email, password: 'dev-pass-1234', orgTitle: title });
      const org = (await findConsumerOrgByName(
        services.store.db,
        sandbox.id,
        title.toLowerCase().replace(/[^a-z0-9]+/g, '-'),
      ))!;
      const { app, credential, clientSecret } = await consumerServices.createApp(org.id, {
        title: `App ${counter}`,
      });
      if (plan === undefined) {
        await gateway.reload();
        return { clientId: credential.client_id, clientSecret, email };
      }
      const published = await services.product(t.orgId, 'sandbox', 'sec', '1.0.0');
      const subscription = await consumerServices.subscribe(org.id, {
        appId: app.id,
        productId: published.id,
        planName: plan,
      });
      await gateway.reload();
      return { clientId: credential.client_id, clientSecret, email, subscriptionId: subscription.id };
    },
    close: () => t.close(),
  };
}
