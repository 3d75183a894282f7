// Starts the four demo backends of the Accessories scenario together.
import { startFinancingService } from './financing-service.ts';
import { startGeocoderService } from './geocoder-service.ts';
import { startInventoryService } from './inventory-service.ts';
import { startShippingService } from './shipping-service.ts';
import type { RunningSample } from './http-server.ts';

export { startFinancingService } from './financing-service.ts';
export { startGeocoderService } from './geocoder-service.ts';
export { startInventoryService } from './inventory-service.ts';
export { startShippingService } from './shipping-service.ts';
export type { RunningSample, SampleServerOptions } from './http-server.ts';

/** Ports of the four backends; 0 picks a free port. */
export interface SamplePorts {
  financing: number;
  shipping: number;
  geocoder: number;
  inventory: number;
}

/** The demo ports, matching the URLs in examples/accessories/*.yaml. */
export const DEFAULT_SAMPLE_PORTS: Readonly<SamplePorts> = Object.freeze({
  financing: 9081,
  shipping: 9082,
  geocoder: 9083,
  inventory: 9084,
});

/** The running backends: base URLs, the full service URLs the definitions use, and one close. */
export interface RunningSamples {
  urls: Record<keyof SamplePorts, string>;
  /** The values of the definitions' properties (financing_svc_url, shipping_svc_url, …) for these servers. */
  endpoints: {
    financing: string;
    financingWsdl: string;
    shipping: string;
    geocoder: string;
    inventory: string;
  };
  close(): Promise<void>;
}

/** Starts the financing, shipping, geocoder and inventory backends; if one fails to start, the others are closed. */
export async function startSamples(ports: SamplePorts, host?: string): Promise<RunningSamples> {
  const starts = [
    startFinancingService({ port: ports.financing, host }),
    startShippingService({ port: ports.shipping, host }),
    startGeocoderService({ port: ports.geocoder, host }),
    startInventoryService({ port: ports.inventory, host }),
  ];
  const settled = await Promise.allSettled(starts);
  const running = settled.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
  const failure = settled.find((outcome) => outcome.status === 'rejected');
  if (failure) {
    await Promise.allSettled(running.map((sample) => sample.close()));
    throw failure.reason;
  }
  const [financing, shipping, geocoder, inventory] = running as [
    RunningSample,
    RunningSample,
    RunningSample,
    RunningSample,
  ];
  return {
    urls: {
      financing: financing.url,
      shipping: shipping.url,
      geocoder: geocoder.url,
      inventory: inventory.url,
    },
    endpoints: {
      financing: `${financing.url}/financing/calculate`,
      financingWsdl: `${financing.url}/financing/calculate?wsdl`,
      shipping: `${shipping.url}/shipping/calculate`,
      geocoder: `${geocoder.url}/maps/api/geocode/json`,
      inventory: inventory.url,
    },
    close: async () => {
      await Promise.all(running.map((sample) => sample.close()));
    },
  };
}
