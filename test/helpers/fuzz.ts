/**
 * Deterministic material for the fuzz tests: a seeded generator (mulberry32), variable names
 * built from hostile segments, and a snapshot of the intrinsics a prototype-pollution attempt
 * would change.
 */

/** A seeded generator of floats in [0, 1): the same seed gives the same run. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return function next() {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)];
}

const segments = [
  '__proto__',
  '__PROTO__',
  'constructor',
  'prototype',
  'Constructor',
  'toString',
  'valueOf',
  'hasOwnProperty',
  'length',
  'request',
  'message',
  'api',
  'properties',
  'headers',
  'body',
  'status',
  'code',
  'client',
  'plan',
  'x-tier',
  'Content-Type',
  'a',
  'b',
  '0',
  '1',
  '4294967294',
  '-1',
  '',
  ' ',
  'é',
  '日本',
  '😀',
  '\u0000',
  'a.b',
  "it's",
  'say "hi"',
  '[',
  ']',
  '.',
];

/** A variable name: hostile and ordinary segments in dot and bracket notation, now and then huge. */
export function variableName(random: () => number): string {
  const roll = random();
  if (roll < 0.02) return 'x'.repeat(1000 + Math.floor(random() * 200_000));
  if (roll < 0.04) return `message.headers.${'h'.repeat(1020 + Math.floor(random() * 10))}`;
  const count = 1 + Math.floor(random() * 5);
  let name = '';
  for (let i = 0; i < count; i++) {
    const segment = pick(random, segments);
    const style = random();
    if (i > 0 && style < 0.5) name += `.${segment}`;
    else if (style < 0.65) name += `['${segment}']`;
    else if (style < 0.8) name += `["${segment}"]`;
    else if (style < 0.85) name += `[${Math.floor(random() * 5)}]`;
    else name += i === 0 ? segment : `.${segment}`;
  }
  return name;
}

/** A value to write: text, numbers, lists, and objects carrying own `__proto__`/`constructor` keys. */
export function variableValue(random: () => number): unknown {
  switch (Math.floor(random() * 7)) {
    case 0:
      return 'gold';
    case 1:
      return Math.floor(random() * 1000);
    case 2:
      return JSON.parse('{"__proto__": {"polluted": "yes"}, "constructor": {"prototype": {"polluted": "yes"}}}');
    case 3:
      return [1, 'two', { three: 3 }];
    case 4:
      return null;
    case 5:
      return { nested: { deeper: 'x'.repeat(Math.floor(random() * 64)) } };
    default:
      return undefined;
  }
}

type Intrinsics = Array<[string, object, string[]]>;

function describeOwn(target: object): string[] {
  return Reflect.ownKeys(target).map((key) => {
    const descriptor = Object.getOwnPropertyDescriptor(target, key)!;
    return `${String(key)}:${typeof descriptor.value}:${String(descriptor.writable)}`;
  });
}

/** Own keys of the intrinsics a pollution attempt would reach, with their types. */
export function intrinsicsSnapshot(): Intrinsics {
  const targets: Array<[string, object]> = [
    ['Object.prototype', Object.prototype],
    ['Function.prototype', Function.prototype],
    ['Array.prototype', Array.prototype],
    ['String.prototype', String.prototype],
    ['Object', Object],
  ];
  return targets.map(([label, target]) => [label, target, describeOwn(target)]);
}

/** Asserts every intrinsic still has exactly the own keys it had, and its prototype. */
export function unchangedSince(before: Intrinsics): string[] {
  const changes: string[] = [];
  for (const [label, target, keys] of before) {
    const now = describeOwn(target);
    if (now.join('|') !== keys.join('|'))
      changes.push(`${label}: ${now.filter((key) => !keys.includes(key)).join(', ')}`);
  }
  if (Object.getPrototypeOf(Object.prototype) !== null) changes.push('Object.prototype has a prototype');
  return changes;
}
