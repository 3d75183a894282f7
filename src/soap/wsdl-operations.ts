/**
 * The second phase of a WSDL import: which service and port, and each operation of the port's
 * binding resolved through its port type and messages. A reference that does not resolve is a
 * definition error naming the WSDL path.
 */
import { DefinitionError } from '../errors.ts';
import { qnameKey } from './wsdl-model.ts';
import type { BindingOperation, QName, WsdlModel, WsdlPart, WsdlPort, WsdlService } from './wsdl-model.ts';

export function pickService(
  model: WsdlModel,
  options: { service?: string; port?: string },
): { service: WsdlService; port: WsdlPort } {
  const services = model.services.filter((service) => service.ports.length > 0);
  const service =
    options.service === undefined
      ? services[0]
      : model.services.find((candidate) => candidate.name === options.service);
  if (service === undefined) {
    const reason =
      options.service === undefined
        ? 'no wsdl:service with a SOAP 1.1 or 1.2 port'
        : `no wsdl:service named "${options.service}" (services: ${model.services.map((s) => s.name).join(', ') || 'none'})`;
    throw new DefinitionError(model.file, [{ path: 'wsdl:definitions', rule: 'no-service', reason }]);
  }
  const port =
    options.port === undefined ? service.ports[0] : service.ports.find((candidate) => candidate.name === options.port);
  if (port === undefined) {
    throw new DefinitionError(model.file, [
      {
        path: `wsdl:definitions/wsdl:service[${service.name}]`,
        rule: 'no-port',
        reason: options.port === undefined ? 'the service has no SOAP port' : `no SOAP port named "${options.port}"`,
      },
    ]);
  }
  return { service, port };
}

/** One operation, resolved through binding, port type and messages. */
export interface Operation {
  name: string;
  binding: BindingOperation;
  input: WsdlPart[];
  output: WsdlPart[] | undefined;
  inputMessage: string;
  outputMessage: string | undefined;
}

function messageParts(
  model: WsdlModel,
  name: QName | undefined,
  only: string[] | undefined,
  path: string,
): WsdlPart[] | undefined {
  if (name === undefined) return undefined;
  const parts = model.messages.get(qnameKey(name));
  if (parts === undefined)
    throw new DefinitionError(model.file, [
      { path, rule: 'unresolved-message', reason: `message ${qnameKey(name)} is not defined` },
    ]);
  return only === undefined ? parts : parts.filter((part) => only.includes(part.name));
}

export function operationsOf(model: WsdlModel, port: WsdlPort): Operation[] {
  const bindingPath = `wsdl:definitions/wsdl:binding[${port.binding.local}]`;
  const binding = model.bindings.get(qnameKey(port.binding));
  if (binding === undefined)
    throw new DefinitionError(model.file, [
      {
        path: `wsdl:definitions/wsdl:service/wsdl:port[${port.name}]`,
        rule: 'unresolved-binding',
        reason: `binding ${qnameKey(port.binding)} is not a SOAP binding defined here`,
      },
    ]);
  const portType = model.portTypes.get(qnameKey(binding.type));
  if (portType === undefined)
    throw new DefinitionError(model.file, [
      {
        path: bindingPath,
        rule: 'unresolved-port-type',
        reason: `portType ${qnameKey(binding.type)} is not defined`,
      },
    ]);
  return [...binding.operations.values()].map((operation) => {
    const abstract = portType.find((candidate) => candidate.name === operation.name);
    const path = `${bindingPath}/wsdl:operation[${operation.name}]`;
    if (abstract === undefined)
      throw new DefinitionError(model.file, [
        {
          path,
          rule: 'unresolved-operation',
          reason: `portType ${binding.type.local} has no operation "${operation.name}"`,
        },
      ]);
    if (abstract.input === undefined)
      throw new DefinitionError(model.file, [
        {
          path,
          rule: 'unsupported-operation',
          reason: 'notification operations (output only) are not supported',
        },
      ]);
    return {
      name: operation.name,
      binding: operation,
      input: messageParts(model, abstract.input, operation.inputParts, path)!,
      output: messageParts(model, abstract.output, operation.outputParts, path),
      inputMessage: abstract.input.local,
      outputMessage: abstract.output?.local,
    };
  });
}
