/** The XML documents of issue-12 finding 5: many namespace prefixes in scope over many small elements. */

/** `count` declarations `xmlns:nI="urn:I"` numbered from `from`. */
export function declarations(from: number, count: number): string {
  return Array.from({ length: count }, (_, i) => ` xmlns:n${from + i}="urn:${from + i}"`).join('');
}

/** The attack as reported: one root declaring `prefixes` prefixes over `children` empty elements. */
export function rootAmplifier(prefixes: number, children: number): string {
  return `<r${declarations(0, prefixes)}>${'<a/>'.repeat(children)}</r>`;
}

/** The same namespaces over nested wrappers of 100 declarations each: no element passes the attribute limit. */
export function nestedAmplifier(prefixes: number, children: number, child = '<a/>'): string {
  const levels = Math.ceil(prefixes / 100);
  const wrapper = (level: number) => `<w${level}${declarations(level * 100, Math.min(100, prefixes - level * 100))}>`;
  const open = Array.from({ length: levels }, (_, level) => wrapper(level)).join('');
  const close = Array.from({ length: levels }, (_, level) => `</w${levels - 1 - level}>`).join('');
  return `${open}${child.repeat(children)}${close}`;
}
