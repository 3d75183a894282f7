/**
 * API properties (`x-ibm-configuration.properties`) and their catalog overrides
 * (`x-ibm-configuration.catalogs.<name>.properties`), read in one place: for the normalised
 * definition, for the gateway (the values one catalog compiles the API with) and for the import
 * check (every set of values the API can be compiled with, since it is not yet known which
 * catalogs it will be published to).
 */
import { isRecord } from './json-path.ts';
import type { ApiDefinition, ApiProperty } from './types.ts';

type Properties = Pick<ApiDefinition, 'properties' | 'catalogProperties'>;

/** `x-ibm-configuration.properties`: each property's value as text ('' when absent). */
export function apiProperties(value: unknown): Record<string, ApiProperty> {
  if (!isRecord(value)) return {};
  const properties: Record<string, ApiProperty> = {};
  for (const [name, written] of Object.entries(value)) {
    const entry = isRecord(written) ? written : {};
    const property: ApiProperty = {
      value: entry.value === undefined || entry.value === null ? '' : String(entry.value),
    };
    if (typeof entry.description === 'string') property.description = entry.description;
    if (typeof entry.encoded === 'boolean') property.encoded = entry.encoded;
    properties[name] = property;
  }
  return properties;
}

/** `x-ibm-configuration.catalogs`: each catalog's overriding values. */
export function catalogProperties(value: unknown): Record<string, Record<string, string>> {
  if (!isRecord(value)) return {};
  const catalogs: Record<string, Record<string, string>> = {};
  for (const [catalog, written] of Object.entries(value)) {
    const properties = isRecord(written) && isRecord(written.properties) ? written.properties : {};
    catalogs[catalog] = Object.fromEntries(Object.entries(properties).map(([name, text]) => [name, String(text)]));
  }
  return catalogs;
}

/**
 * The values the API is compiled with in `catalog`: the document's own, overridden by those the
 * document gives that catalog (none for a catalog it does not name, or `undefined`).
 */
export function propertyValues(definition: Properties, catalog: string | undefined): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [name, property] of Object.entries(definition.properties)) values[name] = property.value;
  if (catalog !== undefined && Object.hasOwn(definition.catalogProperties, catalog))
    Object.assign(values, definition.catalogProperties[catalog]);
  return values;
}

/**
 * Every set of values the API can be compiled with, in any catalog: the document's own first
 * (a catalog it does not name), then one per catalog it names; a set equal to an earlier one once.
 */
export function possiblePropertyValues(document: Record<string, unknown>): Record<string, string>[] {
  const ibm = isRecord(document['x-ibm-configuration']) ? document['x-ibm-configuration'] : {};
  const definition: Properties = {
    properties: apiProperties(ibm.properties),
    catalogProperties: catalogProperties(ibm.catalogs),
  };
  const sets = new Map<string, Record<string, string>>();
  for (const catalog of [undefined, ...Object.keys(definition.catalogProperties)]) {
    const values = propertyValues(definition, catalog);
    const key = JSON.stringify(Object.entries(values).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    if (!sets.has(key)) sets.set(key, values);
  }
  return [...sets.values()];
}
