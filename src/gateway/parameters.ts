/**
 * Operation parameters, checked before the assembly runs: a required one missing, or one of
 * the wrong type, is a 400 in API Connect's envelope ("One or more required API parameters
 * are missing in the API request."). Each parameter compiles once into a reader that finds
 * the raw value and converts it to its schema type. The phase runs after security: a caller who
 * is not let in never learns the parameter rules from a 400.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { ParameterDef } from '../definitions/types.ts';
import { compileLinearPattern } from '../definitions/linear-pattern.ts';
import { PorticoError } from '../errors.ts';
import { prototypeFree } from '../policies/variable-names.ts';

export interface CompiledParameter {
  name: string;
  in: ParameterDef['in'];
  required: boolean;
  /** Converts a raw value; returns the value or throws an Error whose message is the reason. */
  convert(raw: string): unknown;
  defaultValue: unknown;
}

type Schema = Record<string, unknown>;

const integerText = /^[+-]?\d+$/;
// One way to read each digit string: `\d+\.?\d*` had two (where the first run ends), so a long
// run of digits followed by a letter took quadratic time (140 ms for 8 000 digits).
const numberText = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

function numberConverter(schema: Schema, integer: boolean): (raw: string) => number {
  const min = typeof schema.minimum === 'number' ? schema.minimum : undefined;
  const max = typeof schema.maximum === 'number' ? schema.maximum : undefined;
  const int32 = schema.format === 'int32';
  return function toNumber(raw: string): number {
    const text = raw.trim();
    if (text === '' || !(integer ? integerText : numberText).test(text)) {
      throw new Error(`expected ${integer ? 'an integer' : 'a number'}, got "${raw}"`);
    }
    const value = Number(text);
    if (!Number.isFinite(value)) throw new Error(`expected a finite number, got "${raw}"`);
    if (int32 && (value < -2_147_483_648 || value > 2_147_483_647)) throw new Error('is outside the int32 range');
    if (min !== undefined && value < min) throw new Error(`must be at least ${min}`);
    if (max !== undefined && value > max) throw new Error(`must be at most ${max}`);
    return value;
  };
}

function stringConverter(schema: Schema): (raw: string) => string {
  const values = Array.isArray(schema.enum) ? new Set(schema.enum.map(String)) : undefined;
  // On the linear engine: a provider's pattern never backtracks on a consumer's value. The
  // import refused what it cannot run (pattern-problems.ts); a stored one throws here, and the API
  // stays out of the snapshot.
  const pattern = typeof schema.pattern === 'string' ? compileLinearPattern(schema.pattern) : undefined;
  const maxLength = typeof schema.maxLength === 'number' ? schema.maxLength : undefined;
  const minLength = typeof schema.minLength === 'number' ? schema.minLength : undefined;
  return function toString(raw: string): string {
    if (values && !values.has(raw)) throw new Error(`must be one of ${[...values].join(', ')}`);
    // The lengths first: the pattern's cost grows with the value's length (linearly now; a review
    // measured 5 s for 31 characters against ^([A-Za-z0-9]+ ?)*$ when V8 matched it).
    if (maxLength !== undefined && raw.length > maxLength) throw new Error(`must be at most ${maxLength} characters`);
    if (minLength !== undefined && raw.length < minLength) throw new Error(`must be at least ${minLength} characters`);
    if (pattern && !pattern.test(raw)) throw new Error(`does not match the pattern ${schema.pattern}`);
    return raw;
  };
}

function converterFor(schema: Schema): (raw: string) => unknown {
  switch (schema.type) {
    case 'number':
      return numberConverter(schema, false);
    case 'integer':
      return numberConverter(schema, true);
    case 'boolean':
      return function toBoolean(raw: string): boolean {
        if (raw === 'true') return true;
        if (raw === 'false') return false;
        throw new Error(`expected true or false, got "${raw}"`);
      };
    case 'array': {
      const item = converterFor((schema.items as Schema | undefined) ?? {});
      const separator =
        schema.collectionFormat === 'pipes'
          ? '|'
          : schema.collectionFormat === 'ssv'
            ? ' '
            : schema.collectionFormat === 'tsv'
              ? '\t'
              : ',';
      return function toArray(raw: string): unknown[] {
        return raw === '' ? [] : raw.split(separator).map(item);
      };
    }
    default:
      return stringConverter(schema);
  }
}

/** Compiles one parameter's reader. */
export function compileParameter(parameter: ParameterDef): CompiledParameter {
  const schema = parameter.schema ?? {};
  return {
    name: parameter.name,
    in: parameter.in,
    // OpenAPI: path parameters are always required.
    required: parameter.required || parameter.in === 'path',
    convert: converterFor(schema),
    defaultValue: schema.default,
  };
}

/**
 * Reads and converts the operation's query, path and header parameters (defaults filled in).
 * @throws PorticoError `GW_MISSING_PARAMETER` or `GW_INVALID_PARAMETER` (400).
 */
export function readParameters(
  parameters: readonly CompiledParameter[],
  headers: IncomingHttpHeaders,
  query: URLSearchParams | undefined,
  pathParams: Readonly<Record<string, string>>,
): Record<string, unknown> {
  // Null prototype and own lookups: a document's parameter named `__proto__` or `constructor` is a
  // name like any other, never Object.prototype's member (Node's header object has the usual prototype).
  const values = prototypeFree();
  for (const parameter of parameters) {
    let raw: string | undefined;
    if (parameter.in === 'query') raw = query?.get(parameter.name) ?? undefined;
    else if (parameter.in === 'path')
      raw = Object.hasOwn(pathParams, parameter.name) ? pathParams[parameter.name] : undefined;
    else if (parameter.in === 'header') {
      const key = parameter.name.toLowerCase();
      const value = Object.hasOwn(headers, key) ? headers[key] : undefined;
      raw = Array.isArray(value) ? value[0] : value;
    } else continue;
    if (raw === undefined) {
      if (parameter.required)
        throw new PorticoError('GW_MISSING_PARAMETER', { name: parameter.name, in: parameter.in });
      if (parameter.defaultValue !== undefined) values[parameter.name] = parameter.defaultValue;
      continue;
    }
    try {
      values[parameter.name] = parameter.convert(raw);
    } catch (error) {
      const reason = (error as Error).message;
      throw new PorticoError('GW_INVALID_PARAMETER', { name: parameter.name, in: parameter.in, reason });
    }
  }
  return values;
}
