/**
 * Native OAuth providers as provider resources (IBM "Configuring a native OAuth provider"): an
 * org creates them from a provider file, a catalog enables the ones its APIs may name, and each
 * has a signing key created with it and rotated on demand. Every change reaches the gateways
 * through the change bus, as an API publish does.
 */
import { PorticoError } from '../errors.ts';
import { newSigningKey } from '../oauth/keys.ts';
import { checkProviderFile, providerConfig } from '../oauth/provider-config.ts';
import { change } from './service-context.ts';
import type { ChangeKind } from '../store/changes.ts';
import * as oauth from '../store/oauth.ts';
import type { OAuthProviderRow } from '../store/schema.ts';
import type { Db } from '../store/store.ts';
import type { ProviderServices } from './provider-services.ts';

/** A provider as the management API shows it: the stored file with its timestamps. */
export type ProviderSummary = Record<string, unknown> & {
  name: string;
  title: string;
  created_at: string;
  updated_at: string;
};

export function providerSummary(row: OAuthProviderRow): ProviderSummary {
  const file = JSON.parse(row.configuration) as Record<string, unknown>;
  return {
    ...file,
    name: row.name,
    title: row.title,
    created_at: row.created_at,
    updated_at: row.updated_at,
  };
}

export class OAuthProviders {
  constructor(private readonly services: ProviderServices) {}

  get db(): Db {
    return this.services.store.db;
  }

  /** One announced change (service-context.ts): recorded in the change feed, then told in process. */
  private change<T>(kind: ChangeKind, work: (trx: Db) => Promise<T>): Promise<T> {
    return change(this.services, kind, work);
  }

  async create(orgId: string, input: unknown): Promise<ProviderSummary> {
    const { file, config } = checkProviderFile(input);
    if (await oauth.findProvider(this.db, orgId, config.name)) {
      throw new PorticoError('MGMT_CONFLICT', { reason: `OAuth provider ${config.name} already exists` });
    }
    const row = await this.change('oauth-provider', async (trx) => {
      const created = await oauth.insertProvider(trx, {
        orgId,
        name: config.name,
        title: config.title,
        configuration: file,
      });
      const key = newSigningKey();
      await oauth.addKey(trx, created.id, key.kid, key.privateJwk, Date.now());
      return created;
    });
    return providerSummary(row);
  }

  async list(orgId: string): Promise<ProviderSummary[]> {
    return (await oauth.listProviders(this.db, orgId)).map(providerSummary);
  }

  async row(orgId: string, name: string): Promise<OAuthProviderRow> {
    const row = await oauth.findProvider(this.db, orgId, name);
    if (!row) throw new PorticoError('MGMT_NOT_FOUND', { kind: 'OAuth provider', id: name });
    return row;
  }

  async get(orgId: string, name: string): Promise<ProviderSummary> {
    return providerSummary(await this.row(orgId, name));
  }

  /** Replaces the provider file; the name stays. */
  async update(orgId: string, name: string, input: Record<string, unknown>): Promise<ProviderSummary> {
    const row = await this.row(orgId, name);
    if (input.name !== undefined && input.name !== name)
      throw new PorticoError('MGMT_VALIDATION', { field: 'name', reason: 'cannot change' });
    const { created_at: _created, updated_at: _updated, ...written } = input;
    const { file, config } = checkProviderFile({ ...written, name });
    await this.change('oauth-provider', (trx) =>
      oauth.updateProvider(trx, row.id, { title: config.title, configuration: file }),
    );
    return this.get(orgId, name);
  }

  async delete(orgId: string, name: string): Promise<void> {
    const row = await this.row(orgId, name);
    await this.change('oauth-provider-delete', (trx) => oauth.deleteProvider(trx, row.id));
  }

  /** A new signing key; the old one keeps verifying the tokens it signed until they expire. */
  async rotateKey(orgId: string, name: string): Promise<{ kid: string }> {
    const row = await this.row(orgId, name);
    const key = newSigningKey();
    await this.change('oauth-key', (trx) => oauth.addKey(trx, row.id, key.kid, key.privateJwk, Date.now()));
    return { kid: key.kid };
  }

  async listInCatalog(orgId: string, catalogName: string): Promise<ProviderSummary[]> {
    const catalog = await this.services.catalog(orgId, catalogName);
    return (await oauth.listCatalogProviders(this.db, catalog.id)).map(providerSummary);
  }

  async enable(orgId: string, catalogName: string, name: string): Promise<void> {
    const catalog = await this.services.catalog(orgId, catalogName);
    const row = await this.row(orgId, name);
    const basePath = providerConfig(JSON.parse(row.configuration) as Record<string, unknown>).basePath;
    for (const other of await oauth.listCatalogProviders(this.db, catalog.id)) {
      const otherPath = providerConfig(JSON.parse(other.configuration) as Record<string, unknown>).basePath;
      if (other.id !== row.id && otherPath === basePath) {
        throw new PorticoError('MGMT_CONFLICT', {
          reason: `OAuth provider ${other.name} already uses base path ${basePath} in ${catalogName}`,
        });
      }
    }
    await this.change('oauth-provider', (trx) => oauth.enableInCatalog(trx, catalog.id, row.id));
  }

  async disable(orgId: string, catalogName: string, name: string): Promise<void> {
    const catalog = await this.services.catalog(orgId, catalogName);
    const row = await this.row(orgId, name);
    await this.change('oauth-provider', (trx) => oauth.disableInCatalog(trx, catalog.id, row.id));
  }
}
