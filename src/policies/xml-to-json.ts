/**
 * `xml-to-json` (IBM "xml-to-json"): converts `<input>.body` from XML to JSON by the
 * BadgerFish convention and writes it to `<output>.body` with `content-type:
 * application/json`. `input` defaults to `message`, `output` to the input (API Gateway
 * fields); `conversion-type` is `badgerFish` (default), `relaxedBadgerFish`, or `apicv5`
 * (read as badgerFish). The XML goes through the safe parser: no DTDs, no entities, bounded
 * size, depth and attributes; the JSON is bounded by a multiple of the XML (ConversionBudget).
 * The size cap is the request limit for the consumer's request, else the backend limit
 * (xml-body-limit.ts): past it, the request limit's own 413 for a request, else 502.
 * Malformed or amplifying XML is a 400 when it came from the consumer's request, else 502.
 */
import { oneOfStrings, policy, str } from './schema-kit.ts';
import { definePolicy } from './policy.ts';
import { PorticoError } from '../errors.ts';
import { xmlToBadgerfish } from '../soap/badgerfish.ts';
import type { Convention } from '../soap/badgerfish.ts';
import { parseXml, XmlError } from '../soap/xml.ts';
import { ConversionBudget } from '../soap/xml-budget.ts';
import { AssemblyError, PolicyCompileError, RawBody } from './types.ts';
import type { CompiledApiInfo, FlowContext, PolicyType, Step } from './types.ts';
import { optionalString, readBlock, titleOf } from './policy-config.ts';
import { variableRoot } from './variable-names.ts';
import { requestXmlTooLarge, xmlBodyLimit } from './xml-body-limit.ts';

export interface XmlToJsonConfig {
  version?: string;
  title?: string;
  input?: string;
  output?: string;
  'conversion-type': string;
  'compile-settings'?: Record<string, unknown>;
}

const conventions: Record<string, Convention> = {
  badgerFish: 'badgerFish',
  apicv5: 'badgerFish',
  relaxedBadgerFish: 'relaxedBadgerFish',
};

/** The body as text, and whether it is still the consumer's request body. */
export function bodyText(
  ctx: FlowContext,
  input: string,
): { text: string | undefined; fromRequest: boolean; value: unknown } {
  const holder = ctx.get(input) as { body?: unknown } | undefined;
  const raw = holder?.body;
  const requestBody = ctx.request.body;
  const requestText = requestBody instanceof RawBody ? undefined : requestBody;
  const fromRequest =
    variableRoot(input) === 'request' ||
    (raw !== undefined && (raw === requestBody || (typeof raw === 'string' && raw === requestText)));
  if (raw instanceof RawBody)
    return { text: raw.bytes.toString('utf8'), fromRequest: fromRequest || raw === requestBody, value: raw };
  if (Buffer.isBuffer(raw)) return { text: raw.toString('utf8'), fromRequest, value: raw };
  return { text: typeof raw === 'string' ? raw : undefined, fromRequest, value: raw };
}

/** An XML problem as the consumer sees it: the request's fault (400) or the backend's (502). */
export function xmlFailure(error: XmlError, title: string, fromRequest: boolean): AssemblyError {
  return fromRequest
    ? new AssemblyError(
        'BadRequestError',
        new PorticoError('GW_BAD_REQUEST_BODY', { reason: `${error.message} (policy ${title})` }).message,
        { status: 400, policy: title, cause: error },
      )
    : new AssemblyError(
        'TransformError',
        new PorticoError('GW_BAD_BACKEND_RESPONSE', { policy: title, reason: error.message }).message,
        { status: 502, policy: title, cause: error },
      );
}

/** The xml-to-json policy. */
export const xmlToJsonPolicy: PolicyType = definePolicy<XmlToJsonConfig>({
  name: 'xml-to-json',
  versions: ['1.0.0', '2.0.0'],
  description: 'Converts an XML message body to JSON.',
  schema: policy(['1.0.0', '2.0.0'], {
    input: str('Message converted.', 'message'),
    output: str('Message receiving the result; default the input.'),
    'conversion-type': oneOfStrings(
      ['badgerFish', 'relaxedBadgerFish', 'apicv5'],
      'Convention: badgerFish, relaxedBadgerFish or apicv5 (read as badgerFish).',
      'badgerFish',
    ),
    'compile-settings': {
      type: 'object',
      default: {},
      description: 'Conversion compile settings (DataPower).',
    },
  }),
  compile(config: XmlToJsonConfig, api: CompiledApiInfo, path: string): Step {
    const block = readBlock(config, xmlToJsonPolicy, path);
    const title = titleOf(block, 'xml-to-json');
    const input = optionalString(block, 'input', path) || 'message';
    const output = optionalString(block, 'output', path) || input;
    const type = config['conversion-type'];
    const convention = conventions[type];
    if (convention === undefined)
      throw new PolicyCompileError(
        `${path}.conversion-type`,
        'enum',
        `conversion-type "${type}" is not one of ${Object.keys(conventions).join(', ')}`,
      );
    const requestLimit = xmlBodyLimit(api.settings, true);
    const backendLimit = xmlBodyLimit(api.settings, false);
    return function xmlToJson(ctx: FlowContext) {
      const { text, fromRequest, value } = bodyText(ctx, input);
      if (text === undefined) {
        // Already a tree (e.g. JSON parsed earlier): nothing to convert.
        if (output !== input) ctx.set(`${output}.body`, value);
        return;
      }
      if (text.trim() === '') {
        ctx.set(`${output}.body`, {});
        ctx.set(`${output}.headers.content-type`, 'application/json');
        return;
      }
      let json: Record<string, unknown>;
      try {
        const root = parseXml(text, { maxBytes: fromRequest ? requestLimit : backendLimit });
        json = xmlToBadgerfish(root, convention, new ConversionBudget(Buffer.byteLength(text)));
      } catch (error) {
        if (!(error instanceof XmlError)) throw error;
        if (fromRequest && error.code === 'too-large') throw requestXmlTooLarge(requestLimit, title, error);
        throw xmlFailure(error, title, fromRequest);
      }
      ctx.set(`${output}.body`, json);
      ctx.set(`${output}.headers.content-type`, 'application/json');
    };
  },
});
