/**
 * The demo's sample backends (SOAP financing service, shipping vendors, geocoder, inventory)
 * as a bench process of their own, on free ports, so their CPU is not charged to Portico.
 */
import { startSamples } from '../samples/index.ts';
import { announce, exitOnSignal } from './lib/announce.ts';

const samples = await startSamples({ financing: 0, shipping: 0, geocoder: 0, inventory: 0 }, '127.0.0.1');
const ports = Object.fromEntries(Object.entries(samples.urls).map(([name, url]) => [name, Number(new URL(url).port)]));
announce({ port: ports.shipping, facts: { ports } });
exitOnSignal(() => samples.close());
