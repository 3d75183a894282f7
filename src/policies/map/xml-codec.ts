/**
 * The map policy's XML codec (IBM "map": `content: application/xml`): inputs are read as
 * xml-read.ts says, outputs written as xml-write.ts says; this file binds both to a port's
 * schema and options, and turns unreadable XML into the consumer's (400) or the backend's
 * (502) error. An output is bounded like json-to-xml's, by a multiple of the map's inputs
 * (ConversionBudget): past it, the consumer's 400 when an input was the request, else a 500.
 */
import { PorticoError } from '../../errors.ts';
import { DEFAULT_MAX_XML_BYTES, parseXml, XmlError } from '../../soap/xml.ts';
import type { XmlElement } from '../../soap/xml.ts';
import { ConversionBudget } from '../../soap/xml-budget.ts';
import { XmlWriter } from '../../soap/xml-serialize.ts';
import { faultOf, faultText } from '../../soap/soap-fault.ts';
import { compileXmlSchema, SchemaRefError } from '../../soap/xml-schema-node.ts';
import type { XmlSchemaNode } from '../../soap/xml-schema-node.ts';
import { AssemblyError, PolicyCompileError, RawBody } from '../types.ts';
import type { FlowContext } from '../types.ts';
import type { MapCodec, MapPort } from './codec.ts';
import { holdsRequestData, sizeOf } from './origin.ts';
import type { MapSource } from './origin.ts';
import { setOwn } from '../variable-names.ts';
import { readElement } from './xml-read.ts';
import { scalarText, writeElements } from './xml-write.ts';
import type { Scope } from './xml-write.ts';
import { variableRoot } from '../variable-names.ts';
import { requestXmlTooLarge, xmlBodyLimit } from '../xml-body-limit.ts';

interface Bound {
  node: XmlSchemaNode | undefined;
  /** The input variable, e.g. `financingOut.body` ('' when unbound). */
  variable: string;
  title: string;
  /** Whether the variable is under `request` (a value can also be the request body by identity: see decode). */
  fromRequest: boolean;
  /** The size limit of the consumer's request XML (the gateway's request limit). */
  requestLimit: number;
  /** The size limit of an XML input that is not the consumer's request. */
  backendLimit: number;
  includeEmpty: boolean;
  inherit: boolean;
}

function textOfValue(value: unknown): string | undefined {
  if (value instanceof RawBody) return value.bytes.toString('utf8');
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return typeof value === 'string' ? value : undefined;
}

/**
 * An XML input whose message holds the invoke's own connection-failure object instead of a
 * reply (invoke without ConnectionError in `stop-on-error` lets the flow go on, notes §10.4):
 * there is no XML to map, so the failure is raised here, as the 502/504 it was.
 */
function raiseFailedCall(value: unknown, ctx: FlowContext, bound: Bound): void {
  if (typeof value !== 'object' || value === null || !bound.variable.endsWith('.body')) return;
  const envelope = value as Record<string, unknown>;
  if (typeof envelope.httpCode !== 'string' || typeof envelope.moreInformation !== 'string') return;
  const holder = ctx.get(bound.variable.slice(0, -'.body'.length)) as { status?: { code?: unknown } } | undefined;
  const status = holder?.status?.code;
  if (typeof status !== 'number' || (status !== 502 && status !== 504)) return;
  throw new AssemblyError('ConnectionError', envelope.moreInformation, { status, policy: bound.title });
}

/** An unreadable XML input: the consumer's fault (400) or the backend's (502). */
function readFailure(error: XmlError, bound: Bound, fromRequest: boolean): AssemblyError {
  const { title } = bound;
  if (fromRequest && error.code === 'too-large') return requestXmlTooLarge(bound.requestLimit, title, error);
  if (fromRequest) {
    const reason = `${error.message} (policy ${title})`;
    const message = new PorticoError('GW_BAD_REQUEST_BODY', { reason }).message;
    return new AssemblyError('BadRequestError', message, { status: 400, policy: title, cause: error });
  }
  const message = new PorticoError('GW_BAD_BACKEND_RESPONSE', { policy: title, reason: error.message }).message;
  return new AssemblyError('TransformError', message, { status: 502, policy: title, cause: error });
}

function bind(bound: Bound): MapCodec {
  return {
    contentType: 'application/xml',
    decode(value, ctx, source) {
      const text = textOfValue(value);
      if (text === undefined) {
        if (ctx !== undefined) raiseFailedCall(value, ctx, bound);
        return value;
      }
      if (text.trim() === '') return undefined;
      // `message.body` is still the consumer's request until a backend replaces it.
      const fromRequest =
        bound.fromRequest ||
        (source?.fromRequest ?? (ctx !== undefined && bound.variable !== '' && holdsRequestData(ctx, bound.variable)));
      let root: XmlElement;
      try {
        root = parseXml(text, { maxBytes: fromRequest ? bound.requestLimit : bound.backendLimit });
      } catch (error) {
        if (!(error instanceof XmlError)) throw error;
        throw readFailure(error, bound, fromRequest);
      }
      // A Fault in a reply answered with HTTP 2xx (invoke raises SOAPError itself for 4xx/5xx).
      const fault = faultOf(root);
      if (fault !== undefined)
        throw new AssemblyError('SOAPError', faultText(fault), { status: 500, policy: bound.title });
      const key = bound.node?.elements.get(root.local) ?? root.local;
      const tree: Record<string, unknown> = {};
      try {
        const budget = new ConversionBudget(Buffer.byteLength(text));
        setOwn(tree, key, readElement(root, bound.node?.properties.get(key), budget));
      } catch (error) {
        if (error instanceof XmlError) throw readFailure(error, bound, fromRequest);
        throw error;
      }
      return tree;
    },
    encode(tree, source?: MapSource) {
      if (tree === undefined || typeof tree === 'string' || Buffer.isBuffer(tree)) return tree;
      if (typeof tree !== 'object' || tree === null || Array.isArray(tree)) return scalarText(tree);
      const keys = Object.keys(tree).filter((key) => (tree as Record<string, unknown>)[key] !== undefined);
      if (keys.length !== 1) {
        throw new AssemblyError(
          'TransformError',
          `map ${bound.title}: an XML output needs exactly one root element, the actions built ${keys.length} (${keys.join(', ')})`,
          { status: 500, policy: bound.title },
        );
      }
      const top: Scope = { namespace: '', prefix: '', prefixes: new Map() };
      const writer = new XmlWriter(new ConversionBudget(source?.inputBytes ?? sizeOf(tree)));
      const options = { includeEmpty: bound.includeEmpty, inherit: bound.inherit, writer };
      try {
        const value = (tree as Record<string, unknown>)[keys[0]];
        writeElements(keys[0], value, bound.node?.properties.get(keys[0]), top, options);
        return writer.complete ? writer.toString() : undefined;
      } catch (error) {
        if (!(error instanceof XmlError)) throw error;
        // Output made from the consumer's request is a bad request; anything else the flow built stays a 500.
        if (source?.fromRequest === true) throw readFailure(error, bound, true);
        throw new AssemblyError('TransformError', `map ${bound.title}: ${error.message}`, {
          status: 500,
          policy: bound.title,
          cause: error,
        });
      }
    },
  };
}

/** `application/xml` for the map policy; {@link MapCodec.forPort} binds it to a port's schema and options. */
export const xmlCodec: MapCodec = {
  ...bind({
    node: undefined,
    variable: '',
    title: 'map',
    fromRequest: false,
    requestLimit: DEFAULT_MAX_XML_BYTES,
    backendLimit: DEFAULT_MAX_XML_BYTES,
    includeEmpty: false,
    inherit: true,
  }),
  forPort(port: MapPort): MapCodec {
    let node: XmlSchemaNode | undefined;
    try {
      node = compileXmlSchema(port.schema, port.api.document);
    } catch (error) {
      if (error instanceof SchemaRefError) throw new PolicyCompileError(port.path, 'unresolved-ref', error.message);
      // A pointer whose escapes do not decode (`#/definitions/%zz`) leads nowhere either.
      if (error instanceof URIError) throw new PolicyCompileError(port.path, 'unresolved-ref', error.message);
      throw error;
    }
    const fromRequest = variableRoot(port.variable) === 'request';
    return bind({
      node,
      variable: port.variable,
      title: port.title,
      fromRequest,
      requestLimit: xmlBodyLimit(port.api.settings, true),
      backendLimit: xmlBodyLimit(port.api.settings, false),
      includeEmpty: port.options.includeEmptyXMLElements === true,
      inherit: port.options.namespaceInheritance !== false,
    });
  },
};
