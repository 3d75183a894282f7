/**
 * Tells an API document, a product document and a WSDL apart by their content, so a directory
 * of API Connect files can be imported without naming each file's kind.
 */
import { DefinitionError, PorticoError } from '../errors.ts';
import { isRecord } from './json-path.ts';
import { parseText } from './parse-text.ts';

export type DocumentKind = 'api' | 'product' | 'wsdl';

// WSDL 1.1 <definitions xmlns="http://schemas.xmlsoap.org/wsdl/"> and WSDL 2.0 <description xmlns="http://www.w3.org/ns/wsdl">.
const wsdlRoot = /<(?:[\w.-]+:)?(?:definitions|description)[\s>]/;
const wsdlNamespace = /(?:schemas\.xmlsoap\.org\/wsdl\/|www\.w3\.org\/ns\/wsdl)/;

/**
 * The kind of a definition file: `product:` key → product, `swagger`/`openapi` → api, XML WSDL → wsdl.
 * @throws PorticoError `DEF_PARSE` when the text cannot be read; {@link DefinitionError} (rule `document-kind`) when it is none of these.
 */
export function detectDocumentKind(text: string, file: string): DocumentKind {
  const trimmed = text.replace(/^\uFEFF/, '').trimStart();
  if (trimmed.startsWith('<')) {
    if (wsdlRoot.test(trimmed) && wsdlNamespace.test(trimmed)) return 'wsdl';
    throw new PorticoError('DEF_PARSE', {
      file,
      format: 'WSDL',
      reason: 'XML document without a WSDL definitions (or description) element',
    });
  }
  const { value } = parseText(text, file);
  if (isRecord(value)) {
    if ('product' in value) return 'product';
    if ('swagger' in value || 'openapi' in value) return 'api';
  }
  throw new DefinitionError(file, [
    {
      path: '$',
      rule: 'document-kind',
      reason: 'not an API (swagger: or openapi:), a product (product:) or a WSDL document',
    },
  ]);
}
