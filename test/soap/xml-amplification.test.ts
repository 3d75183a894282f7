// issue-12 finding 5: XML namespace amplification. Every conversion's output is bounded by a
// multiple of its input (ConversionBudget), the namespace map is never copied per element, and
// the parser's cost stays linear however the prefixes are arranged.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { badgerfishToXml, xmlToBadgerfish } from '../../src/soap/badgerfish.ts';
import { readElement } from '../../src/policies/map/xml-read.ts';
import { DEFAULT_MAX_ATTRIBUTES, parseXml, XmlError } from '../../src/soap/xml.ts';
import { CONVERSION_OUTPUT_FACTOR, CONVERSION_OUTPUT_FLOOR, ConversionBudget } from '../../src/soap/xml-budget.ts';
import { nestedAmplifier, rootAmplifier } from './amplifiers.ts';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Heap in use after a full collection, in MB. */
function heapMb(): number {
  gc();
  return process.memoryUsage().heapUsed / 1e6;
}

/** The fastest of three runs: the machine is shared, so one slow run says little. */
function fastest(run: () => number): number {
  return Math.min(run(), run(), run());
}

function isXmlError(code: string) {
  return (error: unknown) => error instanceof XmlError && error.code === code;
}

describe('ConversionBudget', () => {
  it('allows 16 characters per input byte, at least 1 MiB, and refuses the first character past it', () => {
    assert.equal(CONVERSION_OUTPUT_FACTOR, 16);
    assert.equal(new ConversionBudget(10).limit, CONVERSION_OUTPUT_FLOOR);
    const budget = new ConversionBudget(1_000_000);
    assert.equal(budget.limit, 16_000_000);
    budget.spend(16_000_000);
    const past = /1000000-byte document.*16000000 characters/;
    const refused = (error: unknown) => isXmlError('too-expansive')(error) && past.test(`${error}`);
    assert.throws(() => budget.spend(1), refused);
  });
});

describe('xml-to-json namespace amplification (issue-12 finding 5)', () => {
  it('refuses the 87 KB reproduction (300 prefixes on the root over 20,000 <a/>) before converting it', () => {
    const xml = rootAmplifier(300, 20_000);
    assert.ok(xml.length > 85_000 && xml.length < 90_000);
    const budget = new ConversionBudget(xml.length);
    assert.throws(
      () => xmlToBadgerfish(parseXml(xml), 'badgerFish', budget),
      (error: unknown) => {
        assert.ok(error instanceof XmlError);
        assert.equal(error.code, 'too-many-attributes');
        const limit = `more than the limit of ${DEFAULT_MAX_ATTRIBUTES}`;
        assert.match(error.message, new RegExp(`element <r> has 300 attributes and namespace declarations, ${limit}`));
        return true;
      },
    );
  });

  it('refuses 300 prefixes spread over three elements in < 200 ms of conversion, holding the heap', () => {
    const xml = nestedAmplifier(300, 20_000);
    const root = parseXml(xml);
    const before = heapMb();
    const started = performance.now();
    const budget = new ConversionBudget(xml.length);
    assert.throws(() => xmlToBadgerfish(root, 'badgerFish', budget), isXmlError('too-expansive'));
    const elapsed = performance.now() - started;
    assert.ok(elapsed < 200, `conversion refused after ${elapsed.toFixed(0)} ms`);
    assert.ok(heapMb() - before < 20, 'no amplified JSON kept');
  });

  it('refuses the 623 KB reproduction before tokenising it: 154,000 <a/> are more nodes than its size allows', () => {
    const xml = nestedAmplifier(300, 154_000);
    assert.ok(xml.length > 620_000 && xml.length < 630_000, String(xml.length));
    assert.throws(() => parseXml(xml), isXmlError('too-many-nodes'));
  });

  it('keeps the process alive and its heap bounded on the same amplification within the node bound', () => {
    const xml = nestedAmplifier(300, 154_000, '<abcdefg/>');
    assert.ok(xml.length > 1_540_000 && xml.length < 1_560_000, String(xml.length));
    const before = heapMb();
    let peak = 0;
    assert.throws(() => {
      const root = parseXml(xml);
      peak = process.memoryUsage().heapUsed / 1e6;
      xmlToBadgerfish(root, 'badgerFish', new ConversionBudget(xml.length));
    }, isXmlError('too-expansive'));
    assert.ok(peak - before < 400, `parse tree ${(peak - before).toFixed(0)} MB`);
    assert.ok(heapMb() - before < 20, 'nothing kept after the refusal');
  });

  it('converts the same namespaces over few elements, output within the bound', () => {
    const xml = nestedAmplifier(300, 50);
    const json = JSON.stringify(xmlToBadgerfish(parseXml(xml), 'badgerFish', new ConversionBudget(xml.length)));
    assert.ok(json.length <= Math.max(CONVERSION_OUTPUT_FLOOR, CONVERSION_OUTPUT_FACTOR * xml.length));
    const listings = (json.match(/"n299":"urn:299"/g) ?? []).length;
    assert.equal(listings, 51, 'the innermost wrapper and each <a/> list all 300 prefixes');
  });

  it('shares one @xmlns object between the elements of one namespace scope', () => {
    const xml = '<r xmlns:p="urn:p"><a/><a/><b xmlns:q="urn:q"><c/></b></r>';
    const json = xmlToBadgerfish(parseXml(xml)) as { r: Record<string, Record<string, unknown>> };
    const [first, second] = json.r.a as unknown as Array<Record<string, unknown>>;
    assert.equal(first['@xmlns'], json.r['@xmlns']);
    assert.equal(second['@xmlns'], json.r['@xmlns']);
    assert.deepEqual(json.r.b['@xmlns'], { p: 'urn:p', q: 'urn:q' });
    assert.equal((json.r.b.c as Record<string, unknown>)['@xmlns'], json.r.b['@xmlns']);
  });

  it('counts exactly what JSON.stringify writes for an ordinary document', () => {
    const xml = '<r xmlns="urn:d" xmlns:p="urn:p"><p:a x="1">t&quot;</p:a><a>u</a><a>v</a><b/></r>';
    const json = xmlToBadgerfish(parseXml(xml));
    // The budget is spent per property with a trailing comma: at most one extra character per object.
    const counted = new ConversionBudget(0);
    xmlToBadgerfish(parseXml(xml), 'badgerFish', counted);
    const written = JSON.stringify(json).length;
    assert.ok(counted.used >= written && counted.used <= written + 10, `counted ${counted.used}, written ${written}`);
  });

  it('relaxedBadgerFish writes @xmlns only where declared, so the same attack converts small', () => {
    const xml = nestedAmplifier(300, 20_000);
    const json = JSON.stringify(xmlToBadgerfish(parseXml(xml), 'relaxedBadgerFish', new ConversionBudget(xml.length)));
    assert.ok(json.length < 2 * xml.length, `${json.length} characters from ${xml.length} bytes`);
  });

  it('keeps elements and attributes named like Object.prototype members, as own properties and unrenamed', () => {
    const xml = '<r toString="1"><valueOf>y</valueOf><valueOf>z</valueOf><hasOwnProperty/></r>';
    const json = xmlToBadgerfish(parseXml(xml));
    assert.equal(JSON.stringify(json), '{"r":{"valueOf":[{"$":"y"},{"$":"z"}],"hasOwnProperty":{},"@toString":"1"}}');
  });

  it('refuses elements named __proto__ or constructor (the tokeniser does)', () => {
    assert.throws(() => parseXml('<r><__proto__>x</__proto__></r>'), isXmlError('malformed'));
    assert.throws(() => parseXml('<r><constructor>x</constructor></r>'), isXmlError('malformed'));
  });
});

describe('the parser with many prefixes (issue-12 finding 5)', () => {
  it('parses 1,000 prefixes in scope over 40,000 children that each declare one in linear time', () => {
    const child = '<a xmlns:b="urn:b"/>';
    const plain = `<r>${child.repeat(40_000)}</r>`;
    const prefixed = nestedAmplifier(1000, 40_000, child);
    const time = (xml: string) => {
      const started = performance.now();
      parseXml(xml);
      return performance.now() - started;
    };
    const baseline = fastest(() => time(plain));
    const measured = fastest(() => time(prefixed));
    const report = `${measured.toFixed(0)} ms with 1,000 prefixes in scope, ${baseline.toFixed(0)} ms without`;
    assert.ok(measured < 3 * baseline + 100, report);
  });

  it('resolves prefixes in the scope of each element after a sibling redeclared them', () => {
    const root = parseXml('<r xmlns:p="urn:1"><p:a xmlns:p="urn:2"><p:b/></p:a><p:c q="1" p:q="2"/></r>');
    const [a, c] = root.children as Array<ReturnType<typeof parseXml>>;
    assert.equal(a.namespace, 'urn:2');
    assert.equal((a.children[0] as ReturnType<typeof parseXml>).namespace, 'urn:2');
    assert.equal(c.namespace, 'urn:1');
    assert.deepEqual(
      c.attributes.map((attribute) => attribute.namespace),
      ['', 'urn:1'],
    );
  });

  it(`refuses an element with more than ${DEFAULT_MAX_ATTRIBUTES} attributes`, () => {
    const many = Array.from({ length: DEFAULT_MAX_ATTRIBUTES + 1 }, (_, i) => ` a${i}=""`).join('');
    assert.throws(() => parseXml(`<r${many}/>`), isXmlError('too-many-attributes'));
    assert.equal(parseXml(`<r${many.slice(0, many.lastIndexOf(' '))}/>`).attributes.length, DEFAULT_MAX_ATTRIBUTES);
  });
});

describe('json-to-xml from hostile JSON (issue-12 finding 5)', () => {
  const options = { rootElementName: 'json', alwaysOutputRootElement: false, unnamedElementName: 'element' };

  it('refuses a long key repeated over a list: each item writes the name twice', () => {
    const text = JSON.stringify({ r: { [`k${'x'.repeat(1000)}`]: Array.from({ length: 2000 }, () => 1) } });
    const started = performance.now();
    const budget = new ConversionBudget(text.length);
    assert.throws(() => badgerfishToXml(JSON.parse(text), options, budget), isXmlError('too-expansive'));
    assert.ok(performance.now() - started < 200);
  });

  it('counts the serialised text exactly, escaping included', () => {
    const budget = new ConversionBudget(0);
    const xml = badgerfishToXml({ r: { '@q': '"<>"', $: '&&<', a: [1, 2] } }, options, budget);
    assert.equal(xml, '<r q="&quot;&lt;&gt;&quot;">&amp;&amp;&lt;<a>1</a><a>2</a></r>');
    assert.equal(budget.used, xml.length);
  });

  it('refuses arrays nested deeper than 1000', () => {
    const text = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    const budget = new ConversionBudget(text.length);
    assert.throws(() => badgerfishToXml(JSON.parse(text), options, budget), isXmlError('too-deep'));
  });

  it('resolves many declared prefixes over many elements in linear time', () => {
    const xmlns = Object.fromEntries(Array.from({ length: 1000 }, (_, i) => [`n${i}`, `urn:${i}`]));
    const items = Array.from({ length: 10_000 }, (_, i) => ({ '@xmlns': { b: `urn:b${i}` }, 'b:x': '1' }));
    const time = (value: unknown) => {
      const text = JSON.stringify(value);
      const started = performance.now();
      badgerfishToXml(value, options, new ConversionBudget(text.length));
      return performance.now() - started;
    };
    const baseline = fastest(() => time({ r: { a: items } }));
    const measured = fastest(() => time({ r: { '@xmlns': xmlns, a: items } }));
    const report = `${measured.toFixed(0)} ms with 1000 root prefixes, ${baseline.toFixed(0)} ms without`;
    assert.ok(measured < 3 * baseline + 100, report);
  });
});

describe('map XML reading (issue-12 finding 5)', () => {
  it('reads the namespace attack at about its own size: prefixes are dropped', () => {
    const xml = nestedAmplifier(300, 20_000);
    const tree = readElement(parseXml(xml), undefined, new ConversionBudget(xml.length));
    assert.ok(JSON.stringify(tree).length < xml.length);
  });

  it('refuses a tree longer than its budget', () => {
    const xml = `<r>${'<a>x</a>'.repeat(1000)}</r>`;
    const budget = new ConversionBudget(0);
    budget.spend(budget.limit - 1000);
    assert.throws(() => readElement(parseXml(xml), undefined, budget), isXmlError('too-expansive'));
  });
});
