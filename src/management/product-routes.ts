/** The management API's catalogs and the products in them, with the product lifecycle (stage, publish, deprecate, retire, archive). */
import type { FastifyRequest } from 'fastify';
import type { ProviderServices } from '../services/provider-services.ts';
import type { ProductState } from '../store/schema.ts';
import { orgId, param, productDocumentBody, productSummary, queryParam, stringField } from './route-spec.ts';
import type { RouteSpec } from './route-spec.ts';

/** The body of a product create or update. */
interface ProductBody {
  document: string;
  file?: string;
  state?: 'staged' | 'published';
  attachments?: Record<string, string>;
  activate?: boolean;
}

/** The catalog and product routes. */
export function productRoutes(services: ProviderServices): RouteSpec[] {
  const moveProduct = async (request: FastifyRequest, state: ProductState) => {
    // `?activate=false` refuses to publish a product whose APIs are offline (default: brings them online).
    const activate = queryParam(request, 'activate') !== 'false';
    const [catalog, name, version] = ['catalog', 'name', 'version'].map((key) => param(request, key));
    const moved = await services.setProductState(orgId(request), catalog, name, version, state, activate);
    return { ...productSummary(moved), activated: moved.activated };
  };

  return [
    {
      method: 'GET',
      url: '/api/catalogs',
      summary: 'List catalogs',
      tag: 'catalogs',
      permission: 'catalogs:view',
      handler: async (request) => {
        return (await services.listCatalogs(orgId(request))).map((c) => ({ name: c.name, title: c.title }));
      },
    },
    {
      method: 'POST',
      url: '/api/catalogs',
      summary: 'Create a catalog',
      tag: 'catalogs',
      permission: 'catalogs:manage',
      status: 201,
      body: {
        type: 'object',
        required: ['name'],
        additionalProperties: false,
        properties: {
          name: stringField('Catalog name, used in gateway URLs'),
          title: stringField('Display title'),
        },
      },
      handler: async (request) => {
        const body = request.body as { name: string; title?: string };
        const catalog = await services.createCatalog(orgId(request), body.name, body.title ?? body.name);
        return { name: catalog.name, title: catalog.title };
      },
    },
    {
      method: 'GET',
      url: '/api/catalogs/:catalog/products',
      summary: 'List the products of a catalog',
      tag: 'products',
      permission: 'products:view',
      handler: async (request) =>
        (await services.listProducts(orgId(request), param(request, 'catalog'))).map(productSummary),
    },
    {
      method: 'POST',
      url: '/api/catalogs/:catalog/products',
      summary: 'Create or update a product from its YAML; `state: published` publishes it and brings its APIs online',
      tag: 'products',
      permission: 'products:manage',
      status: 201,
      body: productDocumentBody,
      handler: async (request, reply) => {
        const body = request.body as ProductBody;
        const { document: text, file = 'product', state, attachments, activate } = body;
        const result = await services.putProduct(orgId(request), param(request, 'catalog'), {
          text,
          file,
          state,
          attachments,
          activate,
        });
        if (!result.created) reply.status(200);
        const { created, changed, activated } = result;
        return { ...productSummary(result.product), created, changed, activated };
      },
    },
    {
      method: 'GET',
      url: '/api/catalogs/:catalog/products/:name/:version',
      summary: 'Get a product with its plans and APIs',
      tag: 'products',
      permission: 'products:view',
      handler: async (request) => {
        const product = await services.product(
          orgId(request),
          param(request, 'catalog'),
          param(request, 'name'),
          param(request, 'version'),
        );
        const plans = await services.productPlans(product.id);
        const apis = await services.productApis(product.id);
        return {
          ...productSummary(product),
          document: JSON.parse(product.document),
          plans: plans.map((p) => ({
            name: p.name,
            title: p.title,
            description: p.description,
            approval: p.approval === 1,
            rateLimits: JSON.parse(p.rate_limits),
            burstLimits: JSON.parse(p.burst_limits),
          })),
          apis: apis.map((a) => ({
            key: a.api_key,
            name: a.name,
            version: a.version,
            title: a.title,
            state: a.state,
            basePath: a.base_path,
          })),
        };
      },
    },
    {
      method: 'POST',
      url: '/api/catalogs/:catalog/products/:name/:version/publish',
      summary: 'Publish a product, bringing its offline APIs online (`?activate=false` refuses instead)',
      tag: 'products',
      permission: 'products:manage',
      handler: (r) => moveProduct(r, 'published'),
    },
    {
      method: 'POST',
      url: '/api/catalogs/:catalog/products/:name/:version/deprecate',
      summary: 'Deprecate a product (existing subscribers only)',
      tag: 'products',
      permission: 'products:manage',
      handler: (r) => moveProduct(r, 'deprecated'),
    },
    {
      method: 'POST',
      url: '/api/catalogs/:catalog/products/:name/:version/retire',
      summary: 'Retire a product (ends its subscriptions)',
      tag: 'products',
      permission: 'products:manage',
      handler: (r) => moveProduct(r, 'retired'),
    },
    {
      method: 'POST',
      url: '/api/catalogs/:catalog/products/:name/:version/archive',
      summary: 'Archive a retired product',
      tag: 'products',
      permission: 'products:manage',
      handler: (r) => moveProduct(r, 'archived'),
    },
    {
      method: 'POST',
      url: '/api/catalogs/:catalog/products/:name/:version/stage',
      summary: 'Stage a product (back from retired, or a staged product again)',
      tag: 'products',
      permission: 'products:manage',
      handler: (r) => moveProduct(r, 'staged'),
    },
  ];
}
