/**
 * The assembly API Connect gives an API that has none: an invoke of the `target-url` property
 * with the request's path and query, or, without that property, a throw. The gateway compiles it
 * (gateway/compile-api.ts) and the import checks it (check-assembly.ts) from this one place.
 */

/** The default assembly for one catalog's property values. */
export function defaultAssembly(properties: Readonly<Record<string, string>>): { execute: unknown[] } {
  if (properties['target-url']) {
    return {
      execute: [
        {
          invoke: {
            title: 'invoke',
            'target-url': '$(target-url)$(api.operation.path)$(request.search)',
            verb: 'keep',
          },
        },
      ],
    };
  }
  return {
    execute: [{ throw: { name: 'NoAssemblyError', message: 'This API has no assembly and no target-url property' } }],
  };
}
