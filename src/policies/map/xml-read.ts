/**
 * The map policy's XML inputs, read as the actions see them.
 *
 * Reading (an input): the XML text is parsed safely (src/soap/xml.ts) into a tree of local
 * names, prefixes dropped, so `input.Envelope.Body.financingResult.paymentAmount` reads a SOAP
 * reply whatever prefixes the backend chose. A repeated element becomes a list (always a list
 * where the schema says `type: array`); an attribute the schema declares (`xml: {attribute:
 * true}`) reads under its property name, any other as `@name`; an element with attributes keeps
 * its text under `$`; `xsi:nil="true"` reads as null. Leaf values are typed by the input schema
 * (`number`, `integer`, `boolean`); without a schema they stay strings.
 */
import { childElements, textOf } from '../../soap/xml.ts';
import type { XmlElement } from '../../soap/xml.ts';
import { ConversionBudget } from '../../soap/xml-budget.ts';
import type { XmlSchemaNode } from '../../soap/xml-schema-node.ts';
import { setOwn } from '../variable-names.ts';

const XSI_NAMESPACE = 'http://www.w3.org/2001/XMLSchema-instance';

/** Turns a value typed by the schema: '299.71' → 299.71 for `number`; unconvertible text stays text. */
function typed(text: string, node: XmlSchemaNode | undefined): unknown {
  switch (node?.type) {
    case 'number':
    case 'integer': {
      const trimmed = text.trim();
      const number = trimmed === '' ? NaN : Number(trimmed);
      return Number.isNaN(number) ? text : number;
    }
    case 'boolean': {
      const trimmed = text.trim();
      if (trimmed === 'true' || trimmed === '1') return true;
      if (trimmed === 'false' || trimmed === '0') return false;
      return text;
    }
    default:
      return text;
  }
}

// Element and attribute names come from the message: `<__proto__>` is kept as an own field
// (as JSON.parse keeps `"__proto__"`), never assigned, which would replace the tree's prototype.
function addValue(tree: Record<string, unknown>, key: string, value: unknown, asList: boolean): void {
  const existing = tree[key];
  if (!Object.hasOwn(tree, key)) setOwn(tree, key, asList ? [value] : value);
  else if (Array.isArray(existing)) existing.push(value);
  else setOwn(tree, key, [existing, value]);
}

/** A leaf value: typed by its schema, counted against the budget. */
function leaf(text: string, node: XmlSchemaNode | undefined, budget: ConversionBudget): unknown {
  budget.spend(text.length + '"",'.length);
  return typed(text, node);
}

/**
 * One element as the map's actions read it. Prefixes and namespaces are dropped, so the tree is
 * about as long as the XML; the budget checks that.
 */
export function readElement(
  xml: XmlElement,
  node: XmlSchemaNode | undefined,
  budget = new ConversionBudget(0),
): unknown {
  if (
    xml.attributes.some(
      (attribute) =>
        attribute.namespace === XSI_NAMESPACE && attribute.local === 'nil' && attribute.value.trim() === 'true',
    )
  )
    return null;
  const tree: Record<string, unknown> = {};
  for (const attribute of xml.attributes) {
    if (attribute.namespace === XSI_NAMESPACE) continue;
    // A declared attribute reads under its property name; any other as `@name`.
    const key = node?.attributes.get(attribute.local) ?? `@${attribute.local}`;
    budget.spend(key.length + '"":'.length);
    const declared = node?.attributes.has(attribute.local) ? node.properties.get(key) : undefined;
    setOwn(tree, key, leaf(attribute.value, declared, budget));
  }
  const children = childElements(xml);
  for (const child of children) {
    const key = node?.elements.get(child.local) ?? child.local;
    const childNode = node?.properties.get(key);
    const isList = childNode?.type === 'array';
    budget.spend(key.length + '"":{}'.length);
    addValue(tree, key, readElement(child, isList ? childNode?.items : childNode, budget), isList);
  }
  const text = textOf(xml);
  if (children.length === 0 && Object.keys(tree).length === 0) return leaf(text, node, budget);
  if (text.trim() === '') return tree;
  tree.$ = children.length === 0 ? leaf(text, node, budget) : leaf(text.trim(), undefined, budget);
  return tree;
}
