/** What a WSDL 1.1 read yields: namespaces, qualified names and the model of a WSDL with its XSD components. */
import type { XmlElement } from './xml.ts';

export const WSDL_NS = 'http://schemas.xmlsoap.org/wsdl/';
export const WSDL_SOAP11_NS = 'http://schemas.xmlsoap.org/wsdl/soap/';
export const WSDL_SOAP12_NS = 'http://schemas.xmlsoap.org/wsdl/soap12/';
export const XSD_NS = 'http://www.w3.org/2001/XMLSchema';

/** Where WSDL and XSD files are read from, by path relative to the source's root. */
export interface WsdlFiles {
  /** The text of a file, or undefined when the source has no such file. */
  read(path: string): string | undefined;
}

/** A namespace-qualified name, as `{namespace}local`. */
export interface QName {
  namespace: string;
  local: string;
}

/** `{ns}local`, the key used in the model's maps (and API Connect's `soap-operation`). */
export function qnameKey(name: QName): string {
  return `{${name.namespace}}${name.local}`;
}

export interface WsdlPart {
  name: string;
  element?: QName;
  type?: QName;
}

export interface WsdlOperation {
  name: string;
  input?: QName;
  output?: QName;
  faults: QName[];
}

export interface BindingOperation {
  name: string;
  soapAction: string;
  style: 'document' | 'rpc';
  /** soap:body namespace (rpc wrapper namespace). */
  inputNamespace: string;
  outputNamespace: string;
  /** soap:body parts="…", when it restricts the parts. */
  inputParts?: string[];
  outputParts?: string[];
}

export interface WsdlBinding {
  name: string;
  type: QName;
  soapVersion: '1.1' | '1.2';
  operations: Map<string, BindingOperation>;
}

export interface WsdlPort {
  name: string;
  binding: QName;
  address: string;
  soapVersion: '1.1' | '1.2';
}

export interface WsdlService {
  name: string;
  ports: WsdlPort[];
}

/** A global XSD component with the schema context it was declared in. */
export interface XsdComponent {
  node: XmlElement;
  targetNamespace: string;
  elementFormQualified: boolean;
  attributeFormQualified: boolean;
  file: string;
}

export interface WsdlModel {
  file: string;
  name: string;
  targetNamespace: string;
  /** Prefixes declared on the root definitions element (for readable generated prefixes). */
  prefixes: Record<string, string>;
  messages: Map<string, WsdlPart[]>;
  portTypes: Map<string, WsdlOperation[]>;
  bindings: Map<string, WsdlBinding>;
  services: WsdlService[];
  elements: Map<string, XsdComponent>;
  types: Map<string, XsdComponent>;
}
