/** WSDL 1.1 SOAP bindings: §3 for SOAP 1.1 and the W3C binding extension for SOAP 1.2. */
import { attributeOf, childElements } from './xml.ts';
import type { XmlElement } from './xml.ts';
import { WSDL_NS, WSDL_SOAP11_NS, WSDL_SOAP12_NS } from './wsdl-model.ts';
import type { BindingOperation, WsdlBinding } from './wsdl-model.ts';
import { localPath, requireQName } from './wsdl-reader.ts';
import type { Reader } from './wsdl-reader.ts';

/** The SOAP version of a binding extension element (soap: or soap12: namespace), if it is one. */
export function soapVersionOf(element: XmlElement): '1.1' | '1.2' | undefined {
  if (element.namespace === WSDL_SOAP11_NS) return '1.1';
  if (element.namespace === WSDL_SOAP12_NS) return '1.2';
  return undefined;
}

/** A wsdl:binding with its SOAP extensions; undefined for a binding that is not SOAP (HTTP, MIME). */
export function readBinding(
  reader: Reader,
  file: string,
  path: string,
  binding: XmlElement,
  scope: Map<string, string>,
): WsdlBinding | undefined {
  const name = attributeOf(binding, 'name') ?? '';
  const soapBinding = childElements(binding).find(
    (child) => child.local === 'binding' && soapVersionOf(child) !== undefined,
  );
  // Not a SOAP binding (HTTP GET/POST, MIME): not importable, and not an error in itself.
  if (soapBinding === undefined) return undefined;
  const soapVersion = soapVersionOf(soapBinding)!;
  const defaultStyle = attributeOf(soapBinding, 'style') === 'rpc' ? 'rpc' : 'document';
  const transport = attributeOf(soapBinding, 'transport');
  if (transport !== undefined && transport !== 'http://schemas.xmlsoap.org/soap/http') {
    reader.fail(file, path, 'unsupported-transport', `transport "${transport}" is not SOAP over HTTP`);
  }
  const operations = new Map<string, BindingOperation>();
  for (const operation of childElements(binding).filter(
    (child) => child.namespace === WSDL_NS && child.local === 'operation',
  )) {
    const opName = attributeOf(operation, 'name') ?? '';
    const at = localPath(path, operation, opName);
    const soapOperation = childElements(operation).find(
      (child) => child.local === 'operation' && soapVersionOf(child) !== undefined,
    );
    const style =
      (soapOperation && attributeOf(soapOperation, 'style')) === 'rpc'
        ? 'rpc'
        : soapOperation && attributeOf(soapOperation, 'style') === 'document'
          ? 'document'
          : defaultStyle;
    const body = (direction: 'input' | 'output'): { namespace: string; parts?: string[] } => {
      const holder = childElements(operation).find((child) => child.namespace === WSDL_NS && child.local === direction);
      const soapBody =
        holder && childElements(holder).find((child) => child.local === 'body' && soapVersionOf(child) !== undefined);
      if (holder === undefined || soapBody === undefined) return { namespace: '' };
      const use = attributeOf(soapBody, 'use') ?? 'literal';
      if (use !== 'literal')
        reader.fail(
          file,
          localPath(at, holder),
          'unsupported-use',
          `soap:body use="${use}" is not supported (only literal: WS-I Basic Profile 1.1 R2706)`,
        );
      const parts = attributeOf(soapBody, 'parts');
      return {
        namespace: attributeOf(soapBody, 'namespace') ?? '',
        parts: parts === undefined ? undefined : parts.split(/\s+/).filter(Boolean),
      };
    };
    const input = body('input');
    const output = body('output');
    operations.set(opName, {
      name: opName,
      soapAction: (soapOperation && attributeOf(soapOperation, 'soapAction')) ?? '',
      style,
      inputNamespace: input.namespace,
      outputNamespace: output.namespace,
      inputParts: input.parts,
      outputParts: output.parts,
    });
  }
  return { name, type: requireQName(reader, file, path, binding, 'type', scope), soapVersion, operations };
}
