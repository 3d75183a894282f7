// `node --import tsx samples/main.ts`: runs the demo backends on their default ports until Ctrl-C.
import { DEFAULT_SAMPLE_PORTS, startSamples } from './index.ts';

const samples = await startSamples({ ...DEFAULT_SAMPLE_PORTS }, process.env.SAMPLES_HOST);
const lines = [
  `financing (SOAP)  ${samples.endpoints.financing}   WSDL: ${samples.endpoints.financingWsdl}`,
  `shipping          ${samples.endpoints.shipping}?company=xyz&from_zip=90210&to_zip=10001`,
  `geocoder          ${samples.endpoints.geocoder}?address=90210`,
  `inventory         ${samples.endpoints.inventory}/api/items`,
];
process.stdout.write(`Portico demo backends:\n${lines.map((line) => `  ${line}\n`).join('')}Press Ctrl-C to stop.\n`);

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  await samples.close();
  process.exit(0);
}
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
