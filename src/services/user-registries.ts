/**
 * User registries as provider resources (IBM "Working with user registries"): an org creates
 * them, a catalog enables the ones its APIs may name (API Connect's catalog "API user
 * registries"), and every change reaches the gateways through the change bus. The LDAP bind
 * password is stored as given (the gateway needs it in clear to bind) and never returned.
 */
import { PorticoError } from '../errors.ts';
import { checkConfiguration, checkRegistryInput, publicConfiguration } from '../identity/registry-config.ts';
import type { RegistryConfiguration } from '../identity/registry-config.ts';
import type { ProviderServices } from './provider-services.ts';
import { change } from './service-context.ts';
import type { UserRegistryRow } from '../store/schema.ts';
import type { Db } from '../store/store.ts';
import * as registries from '../store/user-registries.ts';
import type { ChangeKind } from '../store/changes.ts';

/** A registry as the management API shows it (no secrets). */
export interface RegistrySummary {
  name: string;
  title: string;
  registry_type: UserRegistryRow['registry_type'];
  configuration: Record<string, unknown>;
  created_at: string;
  updated_at: string;
}

export function registrySummary(row: UserRegistryRow): RegistrySummary {
  const configuration = publicConfiguration(JSON.parse(row.configuration) as RegistryConfiguration);
  const { name, title, registry_type, created_at, updated_at } = row;
  return { name, title, registry_type, configuration, created_at, updated_at };
}

export class UserRegistries {
  constructor(private readonly services: ProviderServices) {}

  get db(): Db {
    return this.services.store.db;
  }

  /** One announced change (service-context.ts): recorded in the change feed, then told in process. */
  private change<T>(kind: ChangeKind, work: (trx: Db) => Promise<T>): Promise<T> {
    return change(this.services, kind, work);
  }

  async create(orgId: string, input: unknown): Promise<RegistrySummary> {
    const checked = checkRegistryInput(input);
    if (await registries.findUserRegistry(this.db, orgId, checked.name)) {
      throw new PorticoError('MGMT_CONFLICT', { reason: `user registry ${checked.name} already exists` });
    }
    const row = await this.change('user-registry', (trx) =>
      registries.insertUserRegistry(trx, {
        orgId,
        name: checked.name,
        title: checked.title,
        registryType: checked.registry_type,
        configuration: checked.configuration as unknown as Record<string, unknown>,
      }),
    );
    return registrySummary(row);
  }

  async list(orgId: string): Promise<RegistrySummary[]> {
    return (await registries.listUserRegistries(this.db, orgId)).map(registrySummary);
  }

  async row(orgId: string, name: string): Promise<UserRegistryRow> {
    const row = await registries.findUserRegistry(this.db, orgId, name);
    if (!row) throw new PorticoError('MGMT_NOT_FOUND', { kind: 'user registry', id: name });
    return row;
  }

  async get(orgId: string, name: string): Promise<RegistrySummary> {
    return registrySummary(await this.row(orgId, name));
  }

  /**
   * Replaces the title and configuration (the type and name stay). An LDAP update that leaves
   * out `admin_password` keeps the stored one, so a file read back from the API can be resent.
   */
  async update(orgId: string, name: string, input: Record<string, unknown>): Promise<RegistrySummary> {
    const row = await this.row(orgId, name);
    if (input.registry_type !== undefined && input.registry_type !== row.registry_type) {
      throw new PorticoError('MGMT_VALIDATION', {
        field: 'registry_type',
        reason: 'cannot change; delete and create the registry',
      });
    }
    const stored = JSON.parse(row.configuration) as Record<string, unknown>;
    const written = { ...((input.configuration ?? {}) as Record<string, unknown>) };
    delete written.admin_password_set;
    if (row.registry_type === 'ldap' && written.admin_dn !== undefined && written.admin_password === undefined) {
      written.admin_password = stored.admin_password;
    }
    const configuration = checkConfiguration(row.registry_type, written);
    const title = typeof input.title === 'string' && input.title !== '' ? input.title : row.title;
    const values = { title, configuration: configuration as unknown as Record<string, unknown> };
    await this.change('user-registry', (trx) => registries.updateUserRegistry(trx, row.id, values));
    return this.get(orgId, name);
  }

  async delete(orgId: string, name: string): Promise<void> {
    const row = await this.row(orgId, name);
    await this.change('user-registry-delete', (trx) => registries.deleteUserRegistry(trx, row.id));
  }

  async listInCatalog(orgId: string, catalogName: string): Promise<RegistrySummary[]> {
    const catalog = await this.services.catalog(orgId, catalogName);
    return (await registries.listCatalogUserRegistries(this.db, catalog.id)).map(registrySummary);
  }

  async enable(orgId: string, catalogName: string, name: string): Promise<void> {
    const catalog = await this.services.catalog(orgId, catalogName);
    const row = await this.row(orgId, name);
    await this.change('user-registry', (trx) => registries.enableInCatalog(trx, catalog.id, row.id));
  }

  async disable(orgId: string, catalogName: string, name: string): Promise<void> {
    const catalog = await this.services.catalog(orgId, catalogName);
    const row = await this.row(orgId, name);
    await this.change('user-registry', (trx) => registries.disableInCatalog(trx, catalog.id, row.id));
  }
}
