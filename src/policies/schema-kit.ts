/**
 * Builders for the policies' JSON schemas, with API Connect's field names (IBM "Policies"
 * reference for DataPower API Gateway, v10; v5 forms where they differ). Every property has a
 * type, a default where API Connect has one, and a description; unknown fields are refused
 * (`additionalProperties: false`), except that each schema lists the fields API Connect writes
 * even where Portico does not act on them, so exported documents validate as they are.
 *
 * Defaults are applied once, when a block is read (policy.ts), so a compiler sees them set: a
 * field whose default depends on another field (validate's `validate-against`) has none here
 * and says so in its description.
 */
import type { JSONSchema } from '../definitions/json-schema.ts';

export function str(description: string, defaultValue?: string, extra: JSONSchema = {}): JSONSchema {
  return {
    type: 'string',
    description,
    ...(defaultValue === undefined ? {} : { default: defaultValue }),
    ...extra,
  };
}

export function bool(description: string, defaultValue: boolean): JSONSchema {
  return { type: 'boolean', default: defaultValue, description };
}

export function int(description: string, defaultValue?: number, extra: JSONSchema = {}): JSONSchema {
  return {
    type: 'integer',
    description,
    ...(defaultValue === undefined ? {} : { default: defaultValue }),
    ...extra,
  };
}

export function oneOfStrings(values: string[], description: string, defaultValue?: string): JSONSchema {
  return str(description, defaultValue, { enum: values });
}

/** A field API Connect writes that Portico refuses at import (`not: {}` matches nothing). */
export function refused(description: string): JSONSchema {
  return { type: 'string', description, not: {} };
}

/** A nested `execute` list; the assembly check and the flow compiler read each entry with its own policy. */
export const executeList: JSONSchema = {
  type: 'array',
  default: [],
  description: 'Policies to run, in order; each entry is a one-key object naming its policy.',
  items: { type: 'object' },
};

/** What activity-log and log may record. */
export const contentLevels = ['none', 'activity', 'header', 'payload'];

/** A policy schema: the common fields (version, title, description) plus `properties`. */
export function policy(
  versions: readonly string[],
  properties: Record<string, JSONSchema>,
  required: string[] = [],
  extra: JSONSchema = {},
): JSONSchema {
  return {
    type: 'object',
    additionalProperties: false,
    required,
    properties: {
      version: str(`Policy version: ${versions.join(', ')}.`, versions[0]),
      title: str('Name shown in the assembly editor, logs and error messages.'),
      description: str('Free text about the step.', ''),
      ...properties,
    },
    ...extra,
  };
}

/** An allow or block list of names (invoke's header-control and parameter-control). */
export function accessControl(description: string, defaultType: 'blocklist' | 'allowlist'): JSONSchema {
  return {
    type: 'object',
    description,
    default: { type: defaultType, values: [] },
    additionalProperties: false,
    properties: {
      // API Connect wrote blacklist/whitelist before v10.0.1; both spellings are accepted.
      type: oneOfStrings(
        ['blocklist', 'allowlist', 'blacklist', 'whitelist'],
        'blocklist removes the listed names; allowlist keeps only them.',
        defaultType,
      ),
      values: {
        type: 'array',
        default: [],
        description: 'Names or regular expressions to match.',
        items: { type: 'string' },
      },
    },
  };
}
