/** The last phase of a WSDL import: the assembly case that turns a REST call into the SOAP call. */
import type { Operation } from './wsdl-operations.ts';
import type { Shape } from './wsdl-target-schemas.ts';

type Schema = Record<string, unknown>;

function headerDefaults(soapVersion: '1.1' | '1.2', action: string): Array<[string, string, string]> {
  // SOAP 1.1 §6.1.1: SOAPAction is a quoted URI; SOAP 1.2 Part 2 §7.1.4 / RFC 3902: the action is a media type parameter.
  if (soapVersion === '1.2')
    return [
      [
        'content-type',
        'message.headers.content-type',
        `application/soap+xml; charset=utf-8${action === '' ? '' : `; action="${action}"`}`,
      ],
    ];
  return [
    ['content-type', 'message.headers.content-type', 'text/xml; charset=utf-8'],
    ['SOAPAction', 'message.headers.SOAPAction', `"${action}"`],
  ];
}

function prefixed(base: string, path: string): string {
  return path === '' ? base : `${base}.${path}`;
}

/** One operation-switch case: map (JSON → SOAP request) → invoke → map (SOAP reply → JSON). */
export function assemblyCase(
  operation: Operation,
  shapes: { input: Shape; output: Shape | undefined },
  refs: { request: string; response: string; inputEnvelope: Schema; outputEnvelope: Schema | undefined },
  soapVersion: '1.1' | '1.2',
  urlProperty: string,
): Schema {
  const headers = headerDefaults(soapVersion, operation.binding.soapAction);
  const outputs: Record<string, Schema> = {
    body: { schema: refs.inputEnvelope, variable: 'message.body', content: 'application/xml' },
  };
  for (const [name, variable] of headers) outputs[name] = { schema: { type: 'string', title: name }, variable };
  const inputActions: Schema[] = headers.map(([name, , value]) => ({ set: name, default: value }));
  if (shapes.input.wrapper !== undefined)
    inputActions.push({ set: `body.Envelope.Body.${shapes.input.wrapper}`, value: '{}' });
  for (const copy of shapes.input.copies) {
    // A missing request body still sends the (empty) request element: `default` takes scalars only, so a JSONata value does it.
    inputActions.push(
      copy.rest === ''
        ? { set: `body.Envelope.Body.${copy.soap}`, value: '$exists(input) ? input : {}' }
        : { set: `body.Envelope.Body.${copy.soap}`, from: prefixed('input', copy.rest) },
    );
  }
  if (shapes.input.copies.length === 0) {
    for (const name of Object.keys(shapes.input.body))
      inputActions.push({ set: `body.Envelope.Body.${name}`, value: '{}' });
  }
  const execute: Schema[] = [
    {
      map: {
        version: '2.0.0',
        title: `${operation.name}: input`,
        inputs: {
          input: { schema: { $ref: refs.request }, variable: 'request.body', content: 'application/json' },
        },
        outputs,
        actions: inputActions,
        // Every generated element states its namespace, so unqualified XSD elements stay unqualified.
        options: { namespaceInheritance: false },
      },
    },
    {
      invoke: {
        version: '2.0.0',
        title: `${operation.name}: invoke`,
        'target-url': `$(${urlProperty})`,
        verb: 'POST',
        timeout: 60,
      },
    },
  ];
  const outputActions: Schema[] = (shapes.output?.copies ?? []).map((copy) => ({
    set: prefixed('output', copy.rest),
    from: `input.Envelope.Body.${copy.soap}`,
  }));
  if (shapes.output === undefined) outputActions.push({ set: 'output', value: '{}' });
  outputActions.push({ set: 'content-type', default: 'application/json' });
  execute.push({
    map: {
      version: '2.0.0',
      title: `${operation.name}: output`,
      inputs:
        refs.outputEnvelope === undefined
          ? {}
          : { input: { schema: refs.outputEnvelope, variable: 'message.body', content: 'application/xml' } },
      outputs: {
        output: { schema: { $ref: refs.response }, variable: 'message.body', content: 'application/json' },
        'content-type': {
          schema: { type: 'string', title: 'content-type' },
          variable: 'message.headers.content-type',
        },
      },
      actions: outputActions,
    },
  });
  return { operations: [operation.name], execute };
}
