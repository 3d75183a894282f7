/**
 * The management REST routes a provider scripts onboarding with (as API Connect's platform API
 * does): one consumer organization, its apps with their credentials, and subscriptions of an
 * app to a product's plan.
 */
import type { FastifyRequest } from 'fastify';
import type { ConsumerOrgRef, NewConsumerOrg, ProviderServices } from '../services/provider-services.ts';
import type { ProviderSubscription } from '../services/provider-services.ts';
import type { App, AppCredential, ConsumerOrg } from '../store/schema.ts';
import { orgId, param, stringField } from './route-spec.ts';
import type { RouteSpec } from './route-spec.ts';

const appBody = {
  type: 'object',
  required: ['title'],
  additionalProperties: false,
  properties: { title: stringField('Title, 1-100 characters'), description: stringField('Description') },
};

const subscriptionBody = {
  type: 'object',
  required: ['product', 'version', 'plan'],
  additionalProperties: false,
  properties: {
    product: stringField('Product name in the catalog', { minLength: 1 }),
    version: stringField('Product version', { minLength: 1 }),
    plan: stringField('Plan name; a plan needing approval gives a pending subscription', { minLength: 1 }),
  },
};

const orgSummary = (o: ConsumerOrg) => ({ id: o.id, name: o.name, title: o.title, createdAt: o.created_at });

const appSummary = (app: App, org: ConsumerOrg) => ({
  id: app.id,
  title: app.title,
  description: app.description,
  consumerOrg: org.name,
  createdAt: app.created_at,
});

const credentialSummary = (c: AppCredential) => ({
  id: c.id,
  clientId: c.client_id,
  description: c.description,
  createdAt: c.created_at,
});

export function consumerRoutes(services: ProviderServices): RouteSpec[] {
  const tag = 'consumers';
  const orgUrl = '/api/catalogs/:catalog/consumer-orgs/:consumerOrg';
  const appUrl = `${orgUrl}/apps/:app`;
  /** The consumer organization the route names. */
  const where = (r: FastifyRequest): ConsumerOrgRef => ({
    orgId: orgId(r),
    catalog: param(r, 'catalog'),
    name: param(r, 'consumerOrg'),
  });
  return [
    {
      method: 'GET',
      url: '/api/catalogs/:catalog/consumer-orgs',
      summary: 'List consumer organizations',
      tag: 'consumers',
      permission: 'consumers:view',
      handler: async (request) => {
        const catalog = await services.catalog(orgId(request), param(request, 'catalog'));
        return (await services.listConsumerOrgs(catalog.id)).map(orgSummary);
      },
    },
    {
      method: 'POST',
      url: '/api/catalogs/:catalog/consumer-orgs',
      summary: 'Create a consumer organization with a chosen name (the one a custom visibility lists) and its owner',
      tag: 'consumers',
      permission: 'consumers:manage',
      status: 201,
      body: {
        type: 'object',
        required: ['name', 'owner'],
        additionalProperties: false,
        properties: {
          name: stringField('Organization name, as products list it in custom visibility'),
          title: stringField('Display title'),
          owner: {
            type: 'object',
            required: ['email', 'password'],
            additionalProperties: false,
            description: 'The portal user who owns the organization and signs in with this email',
            properties: {
              email: stringField('Email'),
              password: stringField('Initial password'),
              name: stringField('Name'),
            },
          },
        },
      },
      handler: async (request) => {
        const body = request.body as NewConsumerOrg;
        const { org, user } = await services.createConsumerOrg(orgId(request), param(request, 'catalog'), body);
        return {
          id: org.id,
          name: org.name,
          title: org.title,
          owner: { email: user.email, name: user.name },
        };
      },
    },
    {
      method: 'GET',
      url: '/api/catalogs/:catalog/apps',
      summary: 'List applications with their consumer organization',
      tag: 'consumers',
      permission: 'consumers:view',
      handler: async (request) => {
        const catalog = await services.catalog(orgId(request), param(request, 'catalog'));
        return services.listApps(catalog.id);
      },
    },
    {
      method: 'GET',
      url: orgUrl,
      summary: 'One consumer organization with its apps',
      tag,
      permission: 'consumers:view',
      handler: async (r) => {
        const org = await services.consumerOrg(where(r));
        const apps = await services.consumerOrgApps(org.id);
        return { ...orgSummary(org), apps: apps.map((a) => appSummary(a, org)) };
      },
    },
    {
      method: 'DELETE',
      url: orgUrl,
      summary: 'Delete a consumer organization with its users, apps, credentials and subscriptions',
      tag,
      permission: 'consumers:manage',
      status: 204,
      handler: async (r) => {
        await services.deleteConsumerOrg(where(r));
        return null;
      },
    },
    {
      method: 'GET',
      url: `${orgUrl}/apps`,
      summary: 'The apps of a consumer organization',
      tag,
      permission: 'consumers:view',
      handler: async (r) => {
        const org = await services.consumerOrg(where(r));
        return (await services.consumerOrgApps(org.id)).map((a) => appSummary(a, org));
      },
    },
    {
      method: 'POST',
      url: `${orgUrl}/apps`,
      summary: 'Create an app with its first credential pair; the client secret is in this answer only',
      tag,
      permission: 'consumers:manage',
      status: 201,
      body: appBody,
      handler: async (r) => {
        const created = await services.createApp(where(r), r.body as { title: string; description?: string });
        const credential = { clientId: created.credential.client_id, clientSecret: created.clientSecret };
        return { ...appSummary(created.app, created.org), ...credential };
      },
    },
    {
      method: 'GET',
      url: appUrl,
      summary: 'An app with its credentials (client ids) and subscriptions',
      tag,
      permission: 'consumers:view',
      handler: async (r) => {
        const { app, org, credentials, subscriptions } = await services.app(where(r), param(r, 'app'));
        return { ...appSummary(app, org), credentials: credentials.map(credentialSummary), subscriptions };
      },
    },
    {
      method: 'DELETE',
      url: appUrl,
      summary: 'Delete an app with its credentials and subscriptions',
      tag,
      permission: 'consumers:manage',
      status: 204,
      handler: async (r) => {
        await services.deleteApp(where(r), param(r, 'app'));
        return null;
      },
    },
    {
      method: 'POST',
      url: `${appUrl}/subscriptions`,
      summary: 'Subscribe the app to a plan of a published product (pending when the plan needs approval)',
      tag,
      permission: 'subscriptions:manage',
      status: 201,
      body: subscriptionBody,
      handler: async (r) => {
        const created = await services.subscribeApp(where(r), param(r, 'app'), r.body as ProviderSubscription);
        return services.subscription(orgId(r), param(r, 'catalog'), created.id);
      },
    },
    {
      method: 'GET',
      url: '/api/catalogs/:catalog/subscriptions/:id',
      summary: 'One subscription with its app, consumer organization, product and plan',
      tag: 'subscriptions',
      permission: 'subscriptions:view',
      handler: async (r) => services.subscription(orgId(r), param(r, 'catalog'), param(r, 'id')),
    },
  ];
}
