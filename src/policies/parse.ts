/**
 * `parse` (IBM "parse", API Gateway): turns a message's raw body into a parsed value so later
 * policies read structure rather than bytes. JSON parses to a value; XML is checked for
 * well-formedness and kept as text until the SOAP work item brings an XML tree. A body that
 * does not parse raises `ParseError` (status 400: the request's payload is at fault).
 */
import { bool, policy, str } from './schema-kit.ts';
import { definePolicy } from './policy.ts';
import { parseXml, XmlError } from '../soap/xml.ts';
import { AssemblyError, RawBody } from './types.ts';
import type { CompiledApiInfo, FlowContext, PolicyType, Step } from './types.ts';
import { optionalString, readBlock, titleOf } from './policy-config.ts';

export interface ParseConfig {
  version?: string;
  title?: string;
  input?: string;
  output?: string;
  'use-content-type'?: boolean;
  'warn-on-empty-input'?: boolean;
  'parse-settings-reference'?: Record<string, unknown>;
}

type Format = 'json' | 'xml' | 'detect';

function formatOf(contentType: string | undefined): Format {
  const type = (contentType ?? '').toLowerCase();
  if (type.includes('json')) return 'json';
  if (type.includes('xml')) return 'xml';
  return 'detect';
}

function textOf(body: unknown): string | undefined {
  if (body instanceof RawBody) return body.bytes.toString('utf8');
  if (Buffer.isBuffer(body)) return body.toString('utf8');
  if (typeof body === 'string') return body;
  return undefined;
}

/** The parse policy. */
export const parsePolicy: PolicyType = definePolicy<ParseConfig>({
  name: 'parse',
  versions: ['1.0.0', '2.0.0', '2.1.0', '2.2.0'],
  description: 'Parses a message body (JSON, XML, GraphQL) into a tree, with limits.',
  schema: policy(['1.0.0', '2.0.0', '2.1.0', '2.2.0'], {
    'parse-settings-reference': {
      type: 'object',
      description: 'Parse settings: by name (default), url or inline (literal, parse-settings).',
      default: { default: 'apic-default-parsesettings' },
      additionalProperties: false,
      properties: {
        default: str('Name of a parse settings object of the gateway.', 'apic-default-parsesettings'),
        url: str('URL of parse settings.'),
        literal: str('Parse settings as XML or JSON text.'),
        'parse-settings': {
          type: 'object',
          default: {},
          description: 'Inline DataPower parse settings (document_type, limits).',
        },
      },
    },
    input: str('Message to parse.', 'message'),
    output: str('Message receiving the parsed tree; default the input.'),
    'use-content-type': bool('Choose the parser from the Content-Type header.', false),
    'warn-on-empty-input': bool('Log instead of failing on an empty body.', false),
  }),
  compile(config: ParseConfig, _api: CompiledApiInfo, path: string): Step {
    const block = readBlock(config, parsePolicy, path);
    const input = optionalString(block, 'input', path) || 'message';
    const output = optionalString(block, 'output', path) || input;
    const useContentType = block['use-content-type'] === true;
    const warnOnEmpty = block['warn-on-empty-input'] === true;
    const title = titleOf(block, 'parse');
    const contentTypeVariable = `${input}.headers.content-type`;
    const outputVariable = `${output}.body`;
    return function parseStep(ctx: FlowContext) {
      // Read the raw form without FlowContext.get, which would parse (and swallow errors) itself.
      const raw = (ctx.get(input) as { body?: unknown } | undefined)?.body;
      const text = textOf(raw);
      if (text === undefined) {
        if (raw === undefined && warnOnEmpty) ctx.log.warn({ policy: title }, 'parse: empty input');
        if (output !== input) ctx.set(outputVariable, raw);
        return;
      }
      if (text.trim() === '') {
        if (warnOnEmpty) ctx.log.warn({ policy: title }, 'parse: empty input');
        ctx.set(outputVariable, '');
        return;
      }
      const declared = raw instanceof RawBody ? raw.contentType : (ctx.get(contentTypeVariable) as string | undefined);
      let format = useContentType ? formatOf(declared) : 'detect';
      if (format === 'detect') format = text.trimStart().startsWith('<') ? 'xml' : 'json';
      ctx.set(outputVariable, format === 'json' ? parseJson(text, title) : checkXml(text, title));
    };
  },
});

function parseJson(text: string, title: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new AssemblyError('ParseError', `The body is not valid JSON: ${(error as Error).message}`, {
      status: 400,
      reason: 'Bad Request',
      policy: title,
    });
  }
}

function checkXml(text: string, title: string): string {
  // The safe parser (src/soap/xml.ts) also refuses DTDs and entities (XXE, entity expansion).
  try {
    parseXml(text, { maxBytes: Number.MAX_SAFE_INTEGER });
  } catch (error) {
    if (!(error instanceof XmlError)) throw error;
    throw new AssemblyError('ParseError', `The body is not well-formed XML: ${error.message}`, {
      status: 400,
      reason: 'Bad Request',
      policy: title,
    });
  }
  return text;
}
