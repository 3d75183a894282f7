/**
 * `json-to-xml` (IBM "json-to-xml"): converts `<input>.body` from BadgerFish (or plain) JSON
 * to XML and writes it to `<output>.body` with `content-type: application/xml`. A JSON with
 * one top-level property becomes that root element; otherwise the result is wrapped in
 * `root-element-name` (default `json`), always so with `always-output-root-element`; list
 * items without a name are `unnamed-element-name` (default `element`). Plain JSON
 * (`{"a": "hello"}` → `<a>hello</a>`) converts too, as IBM's note says.
 */
import { declaredPolicy } from './policy-config.ts';
import { badgerfishToXml } from '../soap/badgerfish.ts';
import { serializeXml, XmlError } from '../soap/xml.ts';
import { AssemblyError, PolicyCompileError } from './types.ts';
import type { CompiledApiInfo, FlowContext, PolicyType, Step } from './types.ts';
import { optionalString, readBlock, titleOf } from './policy-config.ts';
import { bodyText } from './xml-to-json.ts';

export interface JsonToXmlConfig {
  version?: string;
  title?: string;
  input?: string;
  output?: string;
  'conversion-type'?: string;
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
    throw new AssemblyError('TransformError', `json-to-xml ${title}: the body is not JSON: ${(error as Error).message}`, { status: 500, policy: title, cause: error });
  }
}

/** The json-to-xml policy. */
export const jsonToXmlPolicy: PolicyType<JsonToXmlConfig> = {
  name: 'json-to-xml',
  ...declaredPolicy('json-to-xml'),
  compile(config: JsonToXmlConfig, _api: CompiledApiInfo, path: string): Step {
    const block = readBlock(config, jsonToXmlPolicy, path);
    const title = titleOf(block, 'json-to-xml');
    const input = optionalString(block, 'input', path) || 'message';
    const output = optionalString(block, 'output', path) || input;
    const type = optionalString(block, 'conversion-type', path) ?? 'badgerFish';
    if (!conventions.includes(type)) throw new PolicyCompileError(`${path}.conversion-type`, 'enum', `conversion-type "${type}" is not one of ${conventions.join(', ')}`);
    const options = {
      rootElementName: optionalString(block, 'root-element-name', path) || 'json',
      alwaysOutputRootElement: block['always-output-root-element'] === true,
      unnamedElementName: optionalString(block, 'unnamed-element-name', path) || 'element',
    };
    return function jsonToXml(ctx: FlowContext) {
      const { text, value } = bodyText(ctx, input);
      const json = text === undefined ? value : text.trim() === '' ? undefined : parseJsonText(text, title);
      if (json === undefined) return;
      let xml: string;
      try {
        xml = serializeXml(badgerfishToXml(json, options));
      } catch (error) {
        if (error instanceof XmlError) throw new AssemblyError('TransformError', `json-to-xml ${title}: ${error.message}`, { status: 500, policy: title, cause: error });
        throw error;
      }
      ctx.set(`${output}.body`, xml);
      ctx.set(`${output}.headers.content-type`, 'application/xml');
    };
  },
};
