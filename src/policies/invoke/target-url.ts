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
    const reason = message.includes('comes from the request') ? message : `target-url "${template}" is not a valid URL`;
    throw new PolicyCompileError(`${path}.target-url`, 'format', reason);
  }
  // The gateway calls http and https only: a scheme written in the template (not one a value
  // brings at run time) is known now, and any other would fail every call with 502.
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(url.template)?.[1].toLowerCase();
  if (scheme !== undefined && scheme !== 'http' && scheme !== 'https') {
    const reason = `target-url "${template}" is a ${scheme}: URL; the gateway calls http and https URLs only`;
    throw new PolicyCompileError(`${path}.target-url`, 'format', reason);
  }
  return { url, constant };
}
