/**
 * `json-to-xml` (IBM "json-to-xml"): converts `<input>.body` from BadgerFish (or plain) JSON
 * to XML and writes it to `<output>.body` with `content-type: application/xml`. A JSON with
 * one top-level property becomes that root element; otherwise the result is wrapped in
 * `root-element-name` (default `json`), always so with `always-output-root-element`; list
 * items without a name are `unnamed-element-name` (default `element`). Plain JSON
 * (`{"a": "hello"}` → `<a>hello</a>`) converts too, as IBM's note says.
 */
import { bool, oneOfStrings, policy, str } from './schema-kit.ts';
import { definePolicy } from './policy.ts';
import { badgerfishToXml } from '../soap/badgerfish.ts';
import { XmlError } from '../soap/xml.ts';
import { ConversionBudget } from '../soap/xml-budget.ts';
import { AssemblyError, PolicyCompileError } from './types.ts';
import type { CompiledApiInfo, FlowContext, PolicyType, Step } from './types.ts';
import { optionalString, readBlock, titleOf } from './policy-config.ts';
import { bodyText, xmlFailure } from './xml-to-json.ts';

export interface JsonToXmlConfig {
  version?: string;
  title?: string;
  input?: string;
  output?: string;
  'conversion-type': string;
  'root-element-name'?: string;
  'always-output-root-element'?: boolean;
  'unnamed-element-name'?: string;
  'compile-settings'?: Record<string, unknown>;
}

const conventions = ['badgerFish', 'relaxedBadgerFish', 'apicv5'];

function parseJsonText(text: string, title: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new AssemblyError(
      'TransformError',
      `json-to-xml ${title}: the body is not JSON: ${(error as Error).message}`,
      { status: 500, policy: title, cause: error },
    );
  }
}

/** The size of a body that is already a tree, as JSON text: what the conversion's bound is a multiple of. */
function jsonLength(value: unknown): number {
  return JSON.stringify(value)?.length ?? 0;
}

/** The json-to-xml policy. */
export const jsonToXmlPolicy: PolicyType = definePolicy<JsonToXmlConfig>({
  name: 'json-to-xml',
  versions: ['1.0.0', '2.0.0'],
  description: 'Converts a JSON message body to XML.',
  schema: policy(['1.0.0', '2.0.0'], {
    input: str('Message converted.', 'message'),
    output: str('Message receiving the result; default the input.'),
    'conversion-type': oneOfStrings(
      ['badgerFish', 'relaxedBadgerFish', 'apicv5'],
      'Convention: badgerFish, relaxedBadgerFish or apicv5 (read as badgerFish).',
      'badgerFish',
    ),
    'root-element-name': str('Root element wrapped around the result when needed.', 'json'),
    'always-output-root-element': bool('Always wrap the result in root-element-name.', false),
    'unnamed-element-name': str('Element name for array items without a name.', 'element'),
    'compile-settings': {
      type: 'object',
      default: {},
      description: 'Conversion compile settings (DataPower).',
    },
  }),
  compile(config: JsonToXmlConfig, _api: CompiledApiInfo, path: string): Step {
    const block = readBlock(config, jsonToXmlPolicy, path);
    const title = titleOf(block, 'json-to-xml');
    const input = optionalString(block, 'input', path) || 'message';
    const output = optionalString(block, 'output', path) || input;
    const type = config['conversion-type'];
    if (!conventions.includes(type))
      throw new PolicyCompileError(
        `${path}.conversion-type`,
        'enum',
        `conversion-type "${type}" is not one of ${conventions.join(', ')}`,
      );
    const options = {
      rootElementName: optionalString(block, 'root-element-name', path) || 'json',
      alwaysOutputRootElement: block['always-output-root-element'] === true,
      unnamedElementName: optionalString(block, 'unnamed-element-name', path) || 'element',
    };
    return function jsonToXml(ctx: FlowContext) {
      const { text, value, fromRequest } = bodyText(ctx, input);
      const json = text === undefined ? value : text.trim() === '' ? undefined : parseJsonText(text, title);
      if (json === undefined) return;
      const inputBytes = text === undefined ? jsonLength(json) : Buffer.byteLength(text);
      let xml: string;
      try {
        xml = badgerfishToXml(json, options, new ConversionBudget(inputBytes));
      } catch (error) {
        if (!(error instanceof XmlError)) throw error;
        // The consumer's own JSON is a bad request; anything else the flow (or its backend) produced stays a 500.
        if (fromRequest) throw xmlFailure(error, title, true);
        const message = `json-to-xml ${title}: ${error.message}`;
        throw new AssemblyError('TransformError', message, { status: 500, policy: title, cause: error });
      }
      ctx.set(`${output}.body`, xml);
      ctx.set(`${output}.headers.content-type`, 'application/xml');
    };
  },
});
