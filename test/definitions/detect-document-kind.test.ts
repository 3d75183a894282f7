import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { detectDocumentKind } from '../../src/definitions/index.ts';
import { fixture } from './fixtures.ts';

describe('detectDocumentKind', () => {
  it('reads a product: document as a product', () => {
    assert.equal(detectDocumentKind(fixture('accessories-product.yaml'), 'a.yaml'), 'product');
  });

  it('reads swagger and openapi documents, YAML or JSON, as APIs', () => {
    assert.equal(detectDocumentKind(fixture('logistics.yaml'), 'l.yaml'), 'api');
    assert.equal(detectDocumentKind(fixture('orders-oas30.yaml'), 'o.yaml'), 'api');
    assert.equal(detectDocumentKind(fixture('geocoder-oas31.json'), 'g.json'), 'api');
  });

  it('reads a WSDL 1.1 definitions document as wsdl', () => {
    const wsdl = readFileSync(new URL('../../examples/accessories/financing.wsdl', import.meta.url), 'utf8');
    assert.equal(detectDocumentKind(wsdl, 'financing.wsdl'), 'wsdl');
  });

  it('reads a WSDL 2.0 description as wsdl', () => {
    assert.equal(
      detectDocumentKind('<?xml version="1.0"?>\n<description xmlns="http://www.w3.org/ns/wsdl"/>', 'x.wsdl'),
      'wsdl',
    );
  });

  it('refuses other XML as a parse error', () => {
    assert.throws(() => detectDocumentKind('<note><to>Tove</to></note>', 'note.xml'), {
      code: 'DEF_PARSE',
      params: {
        file: 'note.xml',
        format: 'WSDL',
        reason: 'XML document without a WSDL definitions (or description) element',
      },
    });
  });

  it('refuses a document that is none of the kinds', () => {
    assert.throws(() => detectDocumentKind('name: something\n', 'x.yaml'), {
      code: 'DEF_INVALID',
      problems: [
        {
          path: '$',
          rule: 'document-kind',
          reason: 'not an API (swagger: or openapi:), a product (product:) or a WSDL document',
        },
      ],
    });
  });

  it('passes YAML syntax errors on as DEF_PARSE', () => {
    assert.throws(() => detectDocumentKind('a: [1,\n', 'x.yaml'), { code: 'DEF_PARSE' });
  });
});
