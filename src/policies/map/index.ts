/**
 * `map` (IBM "map"): builds outputs from inputs. Inputs are read from context variables and
 * decoded by their `content` codec; actions copy, convert and default values into the outputs;
 * each output is then written to its variable, converted to the types its schema declares.
 * `value` is a JSONata expression over the action's source (see docs/policies.md).
 */
import { policy } from '../schema-kit.ts';
import { mapAction, mapIo, mapOptions } from './schema.ts';
import { definePolicy, problemsOf } from '../policy.ts';
import { PolicyCompileError } from '../types.ts';
import type { CheckScope, CompiledApiInfo, FlowContext, JSONSchema, PolicyType, Step } from '../types.ts';
import { optionalObject, readBlock, refFor, resolveRef, titleOf } from '../policy-config.ts';
import type { DocumentOnly, PolicyBlock } from '../policy-config.ts';
import { DEFAULT_MAX_XML_BYTES } from '../../soap/xml.ts';
import { codecFor } from './codec.ts';
import type { MapApi, MapCodec } from './codec.ts';
import { compileActions, runActions } from './actions.ts';
import type { MapAction, MapScope } from './actions.ts';
import { sourceOf } from './origin.ts';
import type { MapSource } from './origin.ts';
import { prototypeSegment, splitPath } from '../variable-names.ts';

export interface MapVariable {
  variable: string;
  schema?: JSONSchema;
  $ref?: string;
  type?: string;
  content?: string;
}

export interface MapConfig {
  version?: string;
  title?: string;
  inputs?: Record<string, MapVariable>;
  outputs?: Record<string, MapVariable>;
  actions?: unknown[];
  options?: Record<string, unknown>;
}

interface Port {
  name: string;
  variable: string;
  codec: MapCodec;
  /** As written: a `$ref` stays a ref, so it resolves where it was written (a target's refs in the target). */
  schema: JSONSchema | undefined;
}

/** The map policy. */
export const mapPolicy: PolicyType = definePolicy<MapConfig>({
  name: 'map',
  versions: ['1.0.0', '2.0.0', '2.1.0'],
  description: 'Builds outputs (e.g. message.body) from named inputs with set/from/value actions.',
  schema: policy(
    ['1.0.0', '2.0.0', '2.1.0'],
    {
      inputs: mapIo,
      outputs: mapIo,
      actions: {
        type: 'array',
        default: [],
        description: 'Mapping actions, in order.',
        items: { $ref: '#/definitions/action' },
      },
      options: mapOptions,
    },
    [],
    { definitions: { action: mapAction } },
  ),
  // The map is read as the compiler reads it (ports, schemas, every action and value), at import too.
  check: (config: MapConfig, scope: CheckScope, path: string) =>
    problemsOf(() =>
      readMap(readBlock(config, mapPolicy, path), { document: scope.document, settings: importLimits }, path),
    ),
  compile(config: MapConfig, api: CompiledApiInfo, path: string): Step {
    const { inputs, outputs, actions } = readMap(readBlock(config, mapPolicy, path), api, path);
    function writeOutputs(ctx: FlowContext, built: Record<string, unknown>, source: MapSource): void {
      for (const output of outputs) {
        if (Object.hasOwn(built, output.name))
          ctx.set(output.variable, output.codec.encode(built[output.name], source));
      }
    }
    return function mapStep(ctx: FlowContext) {
      // Port names come from the definition: holders without a prototype take any of them.
      const values = Object.create(null) as Record<string, unknown>;
      // What the outputs are made of: the consumer's data or not, and how much (an XML output's bound).
      const source: MapSource = { fromRequest: false, inputBytes: 0 };
      for (const input of inputs) {
        // Looked at before the read, which parses a raw body in place into a new object.
        const origin = sourceOf(ctx, input.variable);
        source.fromRequest ||= origin.fromRequest;
        source.inputBytes += origin.inputBytes;
        // A missing input variable leaves its input undefined: actions reading it fall back to `default`.
        values[input.name] = input.codec.decode(ctx.get(input.variable), ctx, origin);
      }
      const scope: MapScope = { ctx, inputs: values, item: undefined };
      const built = Object.create(null) as Record<string, unknown>;
      const pending = runActions(actions, scope, built);
      if (pending !== undefined) return pending.then(() => writeOutputs(ctx, built, source));
      writeOutputs(ctx, built, source);
    };
  },
});

// At import the codecs are bound only to be checked, never run: the gateway's body limits play no part.
const importLimits = { maxBackendBodyBytes: DEFAULT_MAX_XML_BYTES };

/**
 * The map as the compiler reads it: ports bound to their codecs, schemas resolved, actions and
 * their JSONata values compiled; the check reads it at import, the compiler at publish.
 * @throws PolicyCompileError naming the port or action.
 */
function readMap(
  block: PolicyBlock,
  api: MapApi,
  path: string,
): { inputs: Port[]; outputs: Port[]; actions: MapAction[] } {
  const title = titleOf(block, 'map');
  const options = optionalObject(block, 'options', path);
  const inputs = compilePorts(optionalObject(block, 'inputs', path), `${path}.inputs`, api, 'input', {
    title,
    options,
  });
  const outputs = compilePorts(optionalObject(block, 'outputs', path), `${path}.outputs`, api, 'output', {
    title,
    options,
  });
  const actions = compileActions(block.actions, `${path}.actions`, {
    api,
    title,
    inputs: new Set(inputs.map((input) => input.name)),
    outputs: new Map(outputs.map((output) => [output.name, output.schema])),
    element: undefined,
  });
  return { inputs, outputs, actions };
}

function compilePorts(
  entries: Record<string, unknown>,
  at: string,
  api: MapApi,
  kind: 'input' | 'output',
  policy: { title: string; options: Record<string, unknown> },
): Port[] {
  return Object.entries(entries).map(([name, raw]) => {
    const path = `${at}.${name}`;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
      throw new PolicyCompileError(path, 'type', `an ${kind} must be an object`);
    const port = raw as Record<string, unknown>;
    if (typeof port.variable !== 'string' || port.variable === '') {
      throw new PolicyCompileError(`${path}.variable`, 'required', `an ${kind} needs a context \`variable\``);
    }
    // IBM "map": an input's name must not be its context variable's name (it would shadow it).
    if (kind === 'input' && (name === port.variable || name === port.variable.split('.')[0])) {
      throw new PolicyCompileError(
        `${path}`,
        'input-name-is-variable',
        `input "${name}" must not be named like its context variable "${port.variable}"`,
      );
    }
    const reached = prototypeSegment(splitPath(port.variable));
    if (reached !== undefined) {
      throw new PolicyCompileError(
        `${path}.variable`,
        'variable-name',
        `the segment "${reached}" of ${port.variable} would reach a prototype`,
      );
    }
    const content = port.content === undefined ? undefined : String(port.content);
    const codec = codecFor(content);
    if (codec === undefined)
      throw new PolicyCompileError(
        `${path}.content`,
        'content-type',
        `content type "${content}" is not supported (application/json, application/xml)`,
      );
    const schema = writtenSchema(port, schemaOf(port, path, api));
    const bound =
      codec.forPort?.({
        schema,
        api,
        path,
        title: policy.title,
        variable: port.variable,
        options: policy.options,
      }) ?? codec;
    return { name, variable: port.variable, codec: bound, schema };
  });
}

/** The schema as written: a `$ref` stays a ref, so a codec can resolve it where it was written. */
function writtenSchema(port: Record<string, unknown>, resolved: JSONSchema | undefined): JSONSchema | undefined {
  if (typeof port.$ref === 'string') return { $ref: refFor(port.$ref) };
  if (typeof port.schema === 'object' && port.schema !== null) return port.schema as JSONSchema;
  return resolved;
}

function schemaOf(port: Record<string, unknown>, path: string, api: DocumentOnly): JSONSchema | undefined {
  if (typeof port.$ref === 'string') return resolveRef(refFor(port.$ref), api, `${path}.$ref`);
  if (typeof port.schema === 'object' && port.schema !== null) {
    const schema = port.schema as JSONSchema;
    return typeof schema.$ref === 'string' ? resolveRef(schema.$ref, api, `${path}.schema.$ref`) : schema;
  }
  if (typeof port.type === 'string') return { type: port.type };
  return undefined;
}
