/** Generated API documents with many paths, for the scaling and import tests. */

/**
 * A Swagger 2.0 document with `count` paths. With `broken`, each path's one parameter lacks its
 * `type`: exactly one `required` problem per path item.
 */
export function manyPathsDocument(count: number, broken: boolean, name = 'many'): string {
  const paths: Record<string, unknown> = {};
  for (let index = 0; index < count; index++) {
    const parameter = broken ? { name: 'q', in: 'query' } : { name: 'q', in: 'query', type: 'string' };
    paths[`/items${index}`] = {
      get: { operationId: `get${index}`, parameters: [parameter], responses: { '200': { description: 'ok' } } },
    };
  }
  return JSON.stringify({
    swagger: '2.0',
    info: { title: name, version: '1.0.0', 'x-ibm-name': name },
    basePath: `/${name}`,
    security: [],
    paths,
    'x-ibm-configuration': { assembly: { execute: [{ 'set-variable': { actions: [{ set: 'x', value: '1' }] } }] } },
  });
}
