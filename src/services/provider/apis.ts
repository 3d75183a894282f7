/** API definitions: import (OpenAPI or WSDL), SOAP targets, online/offline, deletion. */
import { detectDocumentKind } from '../../definitions/index.ts';
import type { ApiDefinition } from '../../definitions/types.ts';
import { PorticoError } from '../../errors.ts';
import { addWsdlTarget as addTargetToDocument } from '../../soap/add-target.ts';
import { apiSourceFromWsdl } from '../../soap/wsdl-import.ts';
import * as apisRepo from '../../store/apis.ts';
import { listCatalogs, lockCatalogs } from '../../store/orgs.ts';
import type { ApiRow, ApiState } from '../../store/schema.ts';
import type { Db } from '../../store/store.ts';
import { change, notFound } from '../service-context.ts';
import { parseImportedApi } from './api-parse-pool.ts';
import { checkBasePaths } from './products.ts';
import { checkServedApiPlanLimits } from './plan-limit-check.ts';
import type { ServiceContext } from '../service-context.ts';

export interface ImportedApi {
  api: ApiRow;
  definition: ApiDefinition;
  created: boolean;
  changed: boolean;
}

export interface ApiImport {
  text: string;
  file: string;
  attachments?: Record<string, string>;
  replace?: boolean;
  state?: ApiState;
}

export interface WsdlFile {
  text: string;
  file: string;
  attachments?: Record<string, string>;
}

/**
 * Imports an API document (created offline). With `replace`, an existing name:version gets
 * the new document (its state kept); without it, a duplicate is a 409.
 */
export async function importApi(context: ServiceContext, orgId: string, input: ApiImport): Promise<ImportedApi> {
  const db = context.store.db;
  // A WSDL is imported as the REST API generated from it (src/soap/wsdl-import.ts).
  const isWsdl = input.text.trimStart().startsWith('<') && detectDocumentKind(input.text, input.file) === 'wsdl';
  const source = isWsdl ? apiSourceFromWsdl(input) : input;
  // Off the main thread when large, so a gateway in this process keeps answering (api-parse-pool.ts).
  const definition = await parseImportedApi(source.text, source.file, orgId);
  const existing = await apisRepo.findApi(db, orgId, definition.name, definition.version);
  if (existing && !input.replace) {
    const reason = `API ${definition.name}:${definition.version} already exists (${input.file})`;
    throw new PorticoError('MGMT_CONFLICT', { reason });
  }
  const content = {
    title: definition.title,
    basePath: definition.basePath,
    document: definition.document,
    attachments: source.attachments,
  };
  if (existing) {
    const newState = input.state !== undefined && input.state !== existing.state;
    if (existing.document === JSON.stringify(definition.document) && !newState) {
      return { api: existing, definition, created: false, changed: false };
    }
    await change(context, 'api', async (trx) => {
      if (content.basePath !== existing.base_path) await checkServedBasePath(context, trx, existing, content.basePath);
      await checkServedApiPlanLimits(trx, context.store.dialect, existing, definition.document, source.file);
      await apisRepo.replaceApiDocument(trx, existing.id, content);
      if (input.state !== undefined) await apisRepo.setApiState(trx, existing.id, input.state);
    });
    return { api: (await apisRepo.findApiById(db, existing.id))!, definition, created: false, changed: true };
  }
  const row = {
    orgId,
    name: definition.name,
    version: definition.version,
    ...content,
    state: input.state ?? 'offline',
  };
  try {
    const api = await change(context, 'api', (trx) => apisRepo.insertApi(trx, row));
    return { api, definition, created: true, changed: true };
  } catch (error) {
    // The same name:version imported by a concurrent request: the unique key refused this one.
    if (!(await apisRepo.findApi(db, orgId, definition.name, definition.version))) throw error;
    const reason = `API ${definition.name}:${definition.version} already exists (${input.file})`;
    throw new PorticoError('MGMT_CONFLICT', { reason });
  }
}

/**
 * A served API's new base path must stay free in every catalog that serves it (the rule a
 * publish checks, which a replace skipped before: a review moved a live API onto another's).
 */
async function checkServedBasePath(context: ServiceContext, trx: Db, api: ApiRow, basePath: string): Promise<void> {
  // Every catalog of the org, so that a publish making the API served elsewhere waits too.
  const all = await listCatalogs(trx, api.org_id);
  await lockCatalogs(
    trx,
    context.store.dialect,
    all.map((c) => c.id),
  );
  const catalogIds = await apisRepo.catalogsServingApi(trx, api.id);
  for (const catalogId of catalogIds) {
    await checkBasePaths(trx, catalogId, [{ ...api, base_path: basePath }], undefined);
  }
}

/**
 * Adds a WSDL service to an existing API as an `x-ibm-configuration.targets` entry (mode b
 * of the WSDL import); the result is validated like any import before it is stored.
 */
export async function addWsdlTarget(
  context: ServiceContext,
  orgId: string,
  name: string,
  version: string,
  wsdl: WsdlFile,
): Promise<{ api: ApiRow; service: string }> {
  const current = await api(context, orgId, name, version);
  const { document, service } = addTargetToDocument(JSON.parse(current.document) as Record<string, unknown>, wsdl);
  const definition = await parseImportedApi(JSON.stringify(document), `${name}:${version}`, orgId);
  const attachments = {
    ...(JSON.parse(current.attachments) as Record<string, string>),
    ...wsdl.attachments,
    [wsdl.file.split(/[\\/]/).pop() ?? wsdl.file]: wsdl.text,
  };
  const content = {
    title: definition.title,
    basePath: definition.basePath,
    document: definition.document,
    attachments,
  };
  await change(context, 'api', (trx) => apisRepo.replaceApiDocument(trx, current.id, content));
  return { api: (await apisRepo.findApiById(context.store.db, current.id))!, service };
}

export async function api(context: ServiceContext, orgId: string, name: string, version: string): Promise<ApiRow> {
  const found = await apisRepo.findApi(context.store.db, orgId, name, version);
  if (!found) throw notFound('API', `${name}:${version}`);
  return found;
}

export async function setApiState(
  context: ServiceContext,
  orgId: string,
  name: string,
  version: string,
  state: ApiState,
): Promise<ApiRow> {
  const current = await api(context, orgId, name, version);
  if (current.state === state) return current;
  await change(context, 'api-state', (trx) => apisRepo.setApiState(trx, current.id, state));
  return { ...current, state };
}

export async function deleteApi(context: ServiceContext, orgId: string, name: string, version: string): Promise<void> {
  const current = await api(context, orgId, name, version);
  const users = await apisRepo.productsUsingApi(context.store.db, current.id);
  if (users.length > 0) {
    const products = users.map((p) => `${p.name}:${p.version}`).join(', ');
    throw new PorticoError('MGMT_CONFLICT', {
      reason: `API ${name}:${version} is used by product ${products}`,
    });
  }
  await change(context, 'api-delete', (trx) => apisRepo.deleteApi(trx, current.id));
}
