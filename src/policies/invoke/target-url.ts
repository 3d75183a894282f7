/**
 * An invoke's `target-url` as the compiler reads it, for one catalog's API property values
 * (url-template.ts): the import check reads it with every catalog's values (a URL that no
 * catalog can compile is refused at import), the compiler with its own catalog's.
 */
import { compileUrlTemplate } from '../url-template.ts';
import type { CompiledUrl } from '../url-template.ts';
import { PolicyCompileError } from '../types.ts';

/** Origin and path of a URL; the constant target is split once, at compile time. */
export interface SplitUrl {
  origin: string;
  path: string;
  protocol: string;
}

/** The compiled template, and the URL itself when nothing is left to substitute per request. */
export interface Target {
  url: CompiledUrl;
  constant: SplitUrl | undefined;
}

function splitUrl(target: string): SplitUrl {
  const parsed = new URL(target);
  return { origin: parsed.origin, path: parsed.pathname + parsed.search, protocol: parsed.protocol };
}

/**
 * Compiles `target-url` (at `path`.target-url) with a catalog's property values.
 * @throws PolicyCompileError `required` (empty) or `format` (not a URL, or a host the request chooses).
 */
export function readTarget(template: unknown, properties: Readonly<Record<string, string>>, path: string): Target {
  if (typeof template !== 'string' || template.length === 0) {
    throw new PolicyCompileError(`${path}.target-url`, 'required', 'target-url is required');
  }
  let url: CompiledUrl;
  let constant: SplitUrl | undefined;
  try {
    url = compileUrlTemplate(template, properties);
    constant = url.constant ? splitUrl(url.template) : undefined;
  } catch (error) {
    const message = (error as Error).message;
    // The template's own messages (a host the request chooses, a scheme the gateway does not call) say why.
    const reason =
      message.includes('comes from the request') || message.includes('http and https')
        ? message
        : `target-url "${template}" is not a valid URL`;
    throw new PolicyCompileError(`${path}.target-url`, 'format', reason);
  }
  return { url, constant };
}
