// The financingService WSDL (API Connect v10 lab resource calculate.wsdl), with a caller-chosen address.

/** Target namespace of the v10 WSDL. */
export const FINANCING_NAMESPACE = 'http://thinkibm-services.mybluemix.net';

/** Namespace of the v5 API Connect target generated from the same service; the service accepts both. */
export const FINANCING_LEGACY_NAMESPACE = 'http://services.think.ibm';

/** SOAPAction of the `financing` operation. */
export const FINANCING_SOAP_ACTION = `${FINANCING_NAMESPACE}/financing`;

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Returns the WSDL document with `soap:address location` set to `location`. */
export function financingWsdl(location: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?>
<wsdl:definitions name="financing"
   targetNamespace="${FINANCING_NAMESPACE}"
   xmlns:wsdl="http://schemas.xmlsoap.org/wsdl/"
   xmlns:ser="${FINANCING_NAMESPACE}"
   xmlns:soap="http://schemas.xmlsoap.org/wsdl/soap/"
   xmlns:xs="http://www.w3.org/2001/XMLSchema"
   xmlns="http://schemas.xmlsoap.org/wsdl/">
   <wsdl:types>
      <xs:schema targetNamespace="${FINANCING_NAMESPACE}" elementFormDefault="qualified">
         <xs:element name="financingRequest">
            <xs:complexType>
               <xs:sequence>
                  <xs:element name="amount" type="xs:decimal"/>
                  <xs:element name="duration" type="xs:integer"/>
                  <xs:element name="rate" type="xs:decimal"/>
               </xs:sequence>
            </xs:complexType>
         </xs:element>
         <xs:element name="financingResult">
            <xs:complexType>
               <xs:sequence>
                  <xs:element name="paymentAmount" type="xs:decimal"/>
               </xs:sequence>
            </xs:complexType>
         </xs:element>
      </xs:schema>
   </wsdl:types>
   <wsdl:message name="financingInput">
      <wsdl:part name="body" element="ser:financingRequest"/>
   </wsdl:message>
   <wsdl:message name="financingOutput">
      <wsdl:part name="body" element="ser:financingResult"/>
   </wsdl:message>
   <wsdl:portType name="financingPortType">
      <wsdl:operation name="financing">
         <wsdl:input message="ser:financingInput"/>
         <wsdl:output message="ser:financingOutput"/>
      </wsdl:operation>
   </wsdl:portType>
   <wsdl:binding name="financingBinding" type="ser:financingPortType">
      <soap:binding style="document" transport="http://schemas.xmlsoap.org/soap/http"/>
      <wsdl:operation name="financing">
         <soap:operation soapAction="${FINANCING_SOAP_ACTION}"/>
         <wsdl:input>
            <soap:body use="literal"/>
         </wsdl:input>
         <wsdl:output>
            <soap:body use="literal"/>
         </wsdl:output>
      </wsdl:operation>
   </wsdl:binding>
   <wsdl:service name="financingService">
      <wsdl:port name="financingPort" binding="ser:financingBinding">
         <soap:address location="${escapeAttribute(location)}"/>
      </wsdl:port>
   </wsdl:service>
</wsdl:definitions>
`;
}
