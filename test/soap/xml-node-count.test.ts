// The node bound of every XML parse (src/soap/xml-node-count.ts): what the scan counts, and
// where parseXml draws the line (one node per 8 bytes, at least 65536), before it tokenises.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DefinitionError } from '../../src/errors.ts';
import { importWsdl } from '../../src/soap/wsdl-import.ts';
import { countXmlNodes, XML_NODE_FLOOR, xmlNodeLimit } from '../../src/soap/xml-node-count.ts';
import { parseXml, XmlError } from '../../src/soap/xml.ts';

describe('countXmlNodes', () => {
  const cases: Array<[string, string, number]> = [
    ['an empty element', '<r/>', 1],
    ['attributes, a quoted ">" and "=" included', `<r a="1" b='x>=y' xmlns:p="u"/>`, 4],
    ['text runs between tags, white space included', '<r>\n  <a>1</a>\n  <b/>\n</r>', 7],
    [
      'a comment, a CDATA section and a PI, markup inside them not counted',
      '<r><!-- <a b="1"> --><![CDATA[<x y=1>]]><?p a=b?></r>',
      4,
    ],
    ['the XML declaration and text after the root', '<?xml version="1.0"?>\n<r>t</r>\n', 5],
    ['nothing', '', 0],
  ];
  for (const [what, text, nodes] of cases) {
    it(`counts ${what}`, () => assert.equal(countXmlNodes(text, Infinity), nodes));
  }

  it('stops soon after the limit', () => {
    const text = `<r>${'<a/>'.repeat(1_000_000)}</r>`;
    const started = performance.now();
    assert.equal(countXmlNodes(text, 10), 11);
    assert.ok(performance.now() - started < 50);
  });
});

describe('parseXml node bound', () => {
  const isTooManyNodes = (error: unknown) => error instanceof XmlError && error.code === 'too-many-nodes';

  it('parses a document of exactly one node per 8 bytes, and refuses it with one node more', () => {
    // 100,000 elements of 8 bytes, a root and a run of white space: 800,016 bytes, 100,002 nodes.
    const elements = '<abcde/>'.repeat(100_000);
    const accepted = `<r>${' '.repeat(9)}${elements}</r>`;
    assert.equal(xmlNodeLimit(Buffer.byteLength(accepted)), 100_002);
    assert.equal(countXmlNodes(accepted, Infinity), 100_002);
    assert.equal(parseXml(accepted).children.length, 100_001);
    const refused = `<r>${' '.repeat(5)}<b/>${elements}</r>`;
    assert.equal(xmlNodeLimit(Buffer.byteLength(refused)), 100_002);
    assert.throws(() => parseXml(refused), isTooManyNodes);
  });

  it(`parses any document of at most ${XML_NODE_FLOOR} nodes, however dense`, () => {
    const xml = `<r>${'<a/>'.repeat(XML_NODE_FLOOR - 1)}</r>`;
    assert.equal(parseXml(xml).children.length, XML_NODE_FLOOR - 1);
    assert.throws(() => parseXml(`<r>${'<a/>'.repeat(XML_NODE_FLOOR)}</r>`), isTooManyNodes);
  });

  it('names the size and the bound, and says nothing of the document itself', () => {
    assert.throws(
      () => parseXml(`<r>${'<a b="secret"/>'.repeat(200_000)}</r>`),
      (error: unknown) =>
        isTooManyNodes(error) &&
        (error as Error).message ===
          'the 3000007-byte XML document has more than 375000 nodes (one per 8 bytes, at least 65536)',
    );
  });

  it('shares one frozen empty list between the elements that have no attributes or children', () => {
    const root = parseXml('<r><a/><b/></r>');
    const [a, b] = root.children as Array<ReturnType<typeof parseXml>>;
    assert.equal(a.attributes, b.children);
    assert.ok(Object.isFrozen(a.attributes) && Object.isFrozen(a.declarations));
  });

  it('refuses a WSDL as dense at import, naming the file and the rule xml-too-many-nodes', () => {
    const body = '<d/>'.repeat(100_000);
    const text = `<definitions xmlns="http://schemas.xmlsoap.org/wsdl/" targetNamespace="urn:x">${body}</definitions>`;
    assert.throws(
      () => importWsdl('dense.wsdl', { 'dense.wsdl': text }),
      (error: unknown) =>
        error instanceof DefinitionError &&
        error.file === 'dense.wsdl' &&
        error.problems[0].rule === 'xml-too-many-nodes',
    );
  });
});
