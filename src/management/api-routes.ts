/** The management API's APIs of an org: import (OpenAPI or WSDL), read, add SOAP targets, bring online or take offline, delete. */
import type { ProviderServices } from '../services/provider-services.ts';
import { apiDocumentBody, apiParams, apiSummary, orgId } from './route-spec.ts';
import type { RouteSpec } from './route-spec.ts';

/** The API routes. */
export function apiRoutes(services: ProviderServices): RouteSpec[] {
  return [
    {
      method: 'GET',
      url: '/api/apis',
      summary: 'List APIs',
      tag: 'apis',
      permission: 'apis:view',
      handler: async (request) => (await services.listApis(orgId(request))).map(apiSummary),
    },
    {
      method: 'POST',
      url: '/api/apis',
      summary: 'Import an API document (created offline)',
      tag: 'apis',
      permission: 'apis:manage',
      status: 201,
      body: apiDocumentBody,
      handler: async (request, reply) => {
        const body = request.body as {
          document: string;
          file?: string;
          attachments?: Record<string, string>;
          replace?: boolean;
          state?: 'online' | 'offline';
        };
        const result = await services.importApi(orgId(request), {
          text: body.document,
          file: body.file ?? 'document',
          attachments: body.attachments,
          replace: body.replace,
          state: body.state,
        });
        if (!result.created) reply.status(200);
        return { ...apiSummary(result.api), created: result.created, changed: result.changed };
      },
    },
    {
      method: 'GET',
      url: '/api/apis/:name/:version',
      summary: 'Get an API with its definition document',
      tag: 'apis',
      permission: 'apis:view',
      handler: async (request) => {
        const api = await services.api(orgId(request), ...apiParams(request));
        return { ...apiSummary(api), document: JSON.parse(api.document) };
      },
    },
    {
      method: 'POST',
      url: '/api/apis/:name/:version/targets',
      summary: 'Add a SOAP service from a WSDL to the API as an x-ibm-configuration.targets entry',
      tag: 'apis',
      permission: 'apis:manage',
      body: apiDocumentBody,
      handler: async (request) => {
        const body = request.body as {
          document: string;
          file?: string;
          attachments?: Record<string, string>;
        };
        const result = await services.addWsdlTarget(orgId(request), ...apiParams(request), {
          text: body.document,
          file: body.file ?? 'service.wsdl',
          attachments: body.attachments,
        });
        return { ...apiSummary(result.api), target: result.service };
      },
    },
    {
      method: 'POST',
      url: '/api/apis/:name/:version/activate',
      summary: 'Bring an API online',
      tag: 'apis',
      permission: 'apis:manage',
      handler: async (request) =>
        apiSummary(await services.setApiState(orgId(request), ...apiParams(request), 'online')),
    },
    {
      method: 'POST',
      url: '/api/apis/:name/:version/deactivate',
      summary: 'Take an API offline',
      tag: 'apis',
      permission: 'apis:manage',
      handler: async (request) =>
        apiSummary(await services.setApiState(orgId(request), ...apiParams(request), 'offline')),
    },
    {
      method: 'DELETE',
      url: '/api/apis/:name/:version',
      summary: 'Delete an API no product uses',
      tag: 'apis',
      permission: 'apis:manage',
      status: 204,
      handler: async (request) => {
        await services.deleteApi(orgId(request), ...apiParams(request));
        return null;
      },
    },
  ];
}
