/**
 * Compiles one API of a snapshot, for one catalog: its definition normalised, its assembly into a
 * flow, its operations' parameters and security, and the `api.*` context its requests share.
 */
import { propertyValues } from '../definitions/api-properties.ts';
import { normaliseApi } from '../definitions/normalise-api.ts';
import type { ApiDefinition, OperationDef, ParameterDef } from '../definitions/types.ts';
import { rawOperations } from '../definitions/api-operations.ts';
import type { CatalogRegistries } from '../identity/verifiers.ts';
import type { CatalogProviders } from '../oauth/compile.ts';
import type { SnapshotApi, SnapshotData } from '../store/snapshot-data.ts';
import { defaultAssembly } from '../policies/default-assembly.ts';
import { compileAssembly } from './flow.ts';
import { compileParameter } from './parameters.ts';
import { apiRoutes } from './router.ts';
import { compileOperationSecurity, credentialNames } from './security/index.ts';
import type { CompiledApi, CompiledOperation, SnapshotOptions } from './snapshot.ts';

export function compileApi(
  row: SnapshotApi & { document: string },
  catalog: SnapshotData['catalogs'][number],
  options: SnapshotOptions,
  registries: CatalogRegistries,
  providers?: CatalogProviders,
): CompiledApi {
  const document = JSON.parse(row.document) as Record<string, unknown>;
  const openapi = document.swagger === '2.0' ? '2.0' : String(document.openapi ?? '').startsWith('3.1') ? '3.1' : '3.0';
  const definition = normaliseApi(document, openapi);
  const properties = propertyValues(definition, catalog.name);
  const flow = compileAssembly(
    definition.assembly ?? defaultAssembly(properties),
    {
      name: definition.name,
      version: definition.version,
      document,
      properties,
      catalog: { name: catalog.name, orgName: catalog.orgName },
      settings: options.settings,
      userRegistries: registries,
    },
    options.registry,
  );

  const contextApi = {
    id: row.id,
    name: definition.name,
    version: definition.version,
    title: definition.title,
    type: definition.type,
    root: definition.basePath,
    properties,
    org: { id: catalog.orgId, name: catalog.orgName },
    catalog: { id: catalog.id, name: catalog.name, path: `/${catalog.orgName}/${catalog.name}` },
  };
  const written = new Map(rawOperations(document).map((raw) => [`${raw.verb} ${raw.path}`, raw.operation]));
  const operations = definition.operations.map((operation): CompiledOperation => {
    const writtenOperation = written.get(`${operation.verb} ${operation.path}`) ?? {};
    const security = compileOperationSecurity(document, writtenOperation, {
      properties,
      org: catalog.orgName,
      settings: options.settings,
      registries,
      providers: providers?.byName,
    });
    if (security.refused) refusedOperation(options, catalog, definition, operation, security.reason);
    return {
      id: operation.id,
      verb: operation.verb.toUpperCase(),
      path: operation.path,
      parameters: operation.parameters.filter((p) => p.in !== 'body').map((p: ParameterDef) => compileParameter(p)),
      security,
      bodyRequired: operation.requestBodyRequired === true,
      contextApi: { ...contextApi, operation: { id: operation.id, path: operation.path } },
    };
  });

  return {
    id: row.id,
    name: definition.name,
    version: definition.version,
    title: definition.title,
    basePath: definition.basePath.replace(/\/$/, ''),
    orgName: catalog.orgName,
    catalogName: catalog.name,
    definition,
    properties,
    flow,
    ...apiRoutes(operations),
    productSubscriptions: [],
    credentialNames: credentialNames(document),
  };
}

/** An operation whose security cannot be enforced is served as a refusal; the provider learns why from the log. */
function refusedOperation(
  options: SnapshotOptions,
  catalog: SnapshotData['catalogs'][number],
  definition: ApiDefinition,
  operation: OperationDef,
  reason: string,
): void {
  const api = `${definition.name}:${definition.version}`;
  const where = {
    api,
    catalog: catalog.name,
    operation: `${operation.verb.toUpperCase()} ${operation.path}`,
  };
  options.logger.error({ ...where, reason }, 'operation refused: its security cannot be enforced');
}
