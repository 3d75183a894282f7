/**
 * YAML text to a JavaScript value within {@link documentLimits}. The `yaml` library's own
 * `parseDocument` + `toJS` spends ~0.7 KB and ~5 µs per node before anything can count them,
 * checks unique keys by comparing each key with every earlier key of its map (60,000 paths: 287 s),
 * resolves each alias by scanning every anchor before it, and turns `&a [*a]` into a cyclic
 * value. Here the lexer's tokens are counted first, the syntax tree's depth is bounded while it
 * is built, and the value is built without recursion: keys checked for duplicates in constant
 * time, aliases expanded only within the node and depth limits, a recursive alias refused.
 */
import { Composer, CST, isAlias, isMap, isScalar, Lexer, Parser } from 'yaml';
import type { Document, Node, YAMLMap, YAMLSeq } from 'yaml';
import { documentLimits, TextProblem, tooDeep, tooManyNodes } from './document-limits.ts';

// Tokens that each are a node (a scalar, an alias, a flow collection), and tokens that each bring
// one (an item, a key or a value, which may be empty): either count is at most the nodes'.
const valueTokens = new Set<string>([
  'scalar',
  'single-quoted-scalar',
  'double-quoted-scalar',
  'alias',
  'flow-map-start',
  'flow-seq-start',
]);
const entryTokens = new Set<string>(['seq-item-ind', 'explicit-key-ind', 'map-value-ind', 'comma']);

/**
 * Reads one YAML 1.2 document (core schema, whatever a `%YAML` directive says).
 * @throws TextProblem for the first syntax error or limit crossed, with its offset.
 */
export function readYaml(text: string): unknown {
  const document = composeDocument(text);
  const error = document.errors[0];
  if (error !== undefined) throw new TextProblem(error.message.split('\n')[0], error.pos[0]);
  return buildValue(document.contents);
}

function composeDocument(text: string): Document.Parsed {
  // Lexing twice costs less than keeping the lexemes, and refuses a flood before any tree exists.
  let values = 0;
  let entries = 0;
  let offset = 0;
  let atScalar = false;
  for (const lexeme of new Lexer().lex(text)) {
    // The text after a scalar marker is the scalar's own (`-`, `?`), whatever it looks like.
    const type: string = atScalar ? 'scalar-text' : (CST.tokenType(lexeme) ?? '');
    atScalar = type === 'scalar';
    if (valueTokens.has(type)) values++;
    else if (entryTokens.has(type)) entries++;
    if (values > documentLimits.maxNodes || entries > documentLimits.maxNodes)
      throw new TextProblem(tooManyNodes, offset);
    // Markers the lexer adds hold no text of the source.
    if (type !== 'scalar' && type !== 'doc-mode' && type !== 'flow-error-end') offset += lexeme.length;
  }
  // The composer recurses once per level: bound the depth while the syntax tree is still flat tokens.
  const parser = new Parser();
  const tokens: CST.Token[] = [];
  for (const lexeme of new Lexer().lex(text)) {
    for (const token of parser.next(lexeme)) tokens.push(token);
    if (parser.stack.length > documentLimits.maxDepth + 2) throw new TextProblem(tooDeep, parser.offset);
  }
  for (const token of parser.end()) tokens.push(token);
  const composer = new Composer({ schema: 'core', uniqueKeys: false });
  let document: Document.Parsed | undefined;
  for (const composed of composer.compose(tokens, true, text.length)) {
    if (document === undefined) document = composed;
    else if (document.errors.length > 0) break;
    else throw new TextProblem('more than one YAML document (a second ---): a file holds one', composed.range[0]);
  }
  return document!;
}

interface Built {
  value: unknown;
  /** Nodes of the value with its aliases expanded, and its depth. */
  size: number;
  height: number;
}

interface Open {
  node: YAMLMap | YAMLSeq;
  depth: number;
  /** The node count when the collection was entered, and the deepest level reached inside it. */
  start: number;
  deepest: number;
}

type Step = { node: unknown; depth: number } | Open;

/** Builds the JavaScript value depth-first with a stack of its own, children before their parent. */
function buildValue(root: unknown): unknown {
  const values: unknown[] = [];
  const anchors = new Map<string, Node>();
  const built = new Map<Node, Built>();
  const open: Open[] = [];
  const steps: Step[] = [{ node: root, depth: 1 }];
  let nodes = 0;
  const reach = (depth: number, at: Node | undefined) => {
    if (depth > documentLimits.maxDepth) throw new TextProblem(tooDeep, at?.range?.[0]);
    const parent = open[open.length - 1];
    if (parent !== undefined && depth > parent.deepest) parent.deepest = depth;
  };
  while (steps.length > 0) {
    const step = steps.pop()!;
    if ('start' in step) {
      open.pop();
      const value = isMap(step.node)
        ? mapValue(step.node, values)
        : values.splice(values.length - step.node.items.length);
      values.push(value);
      const height = step.deepest - step.depth + 1;
      reach(step.deepest, undefined);
      if (step.node.anchor !== undefined) built.set(step.node, { value, size: nodes - step.start + 1, height });
      continue;
    }
    const node = step.node as Node | null;
    if (++nodes > documentLimits.maxNodes) throw new TextProblem(tooManyNodes, node?.range?.[0]);
    reach(step.depth, node ?? undefined);
    if (node === null || node === undefined) {
      values.push(null);
    } else if (isAlias(node)) {
      const target = anchors.get(node.source);
      const expanded = target === undefined ? undefined : built.get(target);
      if (expanded === undefined) throw new TextProblem(aliasReason(node.source, target), node.range?.[0]);
      nodes += expanded.size - 1;
      if (nodes > documentLimits.maxNodes) throw new TextProblem(`aliases expand to ${tooManyNodes}`, node.range?.[0]);
      reach(step.depth + expanded.height - 1, node);
      values.push(expanded.value);
    } else {
      if (node.anchor !== undefined) anchors.set(node.anchor, node);
      if (isScalar(node)) {
        values.push(node.value);
        if (node.anchor !== undefined) built.set(node, { value: node.value, size: 1, height: 1 });
      } else {
        const entered: Open = { node, depth: step.depth, start: nodes, deepest: step.depth };
        open.push(entered);
        steps.push(entered);
        for (const child of children(node).reverse()) steps.push({ node: child, depth: step.depth + 1 });
      }
    }
  }
  return values[0];
}

// A map's children are its keys and values in order (`yaml` makes `[a: 1]` a sequence of one map).
function children(node: YAMLMap | YAMLSeq): unknown[] {
  return isMap(node) ? node.items.flatMap((pair) => [pair.key, pair.value]) : [...node.items];
}

function mapValue(node: YAMLMap, values: unknown[]): Record<string, unknown> {
  const entries = values.splice(values.length - 2 * node.items.length);
  const map: Record<string, unknown> = {};
  node.items.forEach((pair, index) => {
    const key = entries[2 * index];
    const at = (pair.key as Node | null)?.range?.[0] ?? node.range?.[0];
    if (typeof key === 'object' && key !== null) throw new TextProblem('a map key must be a scalar', at);
    const name = key === null ? '' : String(key);
    if (Object.hasOwn(map, name)) throw new TextProblem('Map keys must be unique', at);
    const value = entries[2 * index + 1];
    // As `yaml` does: `__proto__` is a key like any other, never the object's prototype.
    if (name === '__proto__')
      Object.defineProperty(map, name, { value, writable: true, enumerable: true, configurable: true });
    else map[name] = value;
  });
  return map;
}

function aliasReason(source: string, target: Node | undefined): string {
  if (target === undefined) return `alias *${source} has no anchor &${source} before it`;
  return `alias *${source} is inside the node it refers to (a recursive structure)`;
}
