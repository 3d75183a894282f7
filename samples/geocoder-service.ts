// Geocoder in the shape of Google's Geocoding API, answering US zip codes from the `zipcodes` package.
// It stands in for maps.googleapis.com, which the original logistics API called without a key.
import { createRequire } from 'node:module';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readOnlyResource, sendJson, startSampleServer } from './http-server.ts';
import type { RunningSample, SampleServerOptions } from './http-server.ts';

/** Path of the geocoding endpoint, as Google's. */
export const GEOCODE_PATH = '/maps/api/geocode/json';

/** The slice of the `zipcodes` package used here (it ships no types). */
interface ZipcodesModule {
  lookup(
    zip: string,
  ): { zip: string; latitude: number; longitude: number; city: string; state: string; country: string } | undefined;
  states: { abbr: Record<string, string> };
}

const zipcodes = createRequire(import.meta.url)('zipcodes') as ZipcodesModule;

/** One address component (Google Geocoding API). */
export interface AddressComponent {
  long_name: string;
  short_name: string;
  types: string[];
}

/** One geocoding result (Google Geocoding API). */
export interface GeocodeResult {
  formatted_address: string;
  address_components: AddressComponent[];
  geometry: { location: { lat: number; lng: number }; location_type: 'APPROXIMATE' };
  place_id: string;
  types: string[];
}

/** The reply body; `status` uses Google's codes. */
export interface GeocodeResponse {
  status: 'OK' | 'ZERO_RESULTS' | 'INVALID_REQUEST';
  results: GeocodeResult[];
  error_message?: string;
}

/** ZIP or ZIP+4; only the first five digits are looked up. */
const US_ZIP = /^(\d{5})(-\d{4})?$/;

function titleCase(text: string): string {
  return text.toLowerCase().replace(/\b[a-z]/g, (letter) => letter.toUpperCase());
}

/** Geocodes a US zip code; undefined when it is malformed or unknown. */
export function geocodeZip(address: string): GeocodeResult | undefined {
  const match = US_ZIP.exec(address.trim());
  if (!match) return undefined;
  const place = zipcodes.lookup(match[1]);
  if (!place || place.country !== 'US') return undefined;
  const stateName = titleCase(zipcodes.states.abbr[place.state] ?? place.state);
  return {
    formatted_address: `${place.city}, ${place.state} ${place.zip}, USA`,
    address_components: [
      { long_name: place.zip, short_name: place.zip, types: ['postal_code'] },
      { long_name: place.city, short_name: place.city, types: ['locality', 'political'] },
      { long_name: stateName, short_name: place.state, types: ['administrative_area_level_1', 'political'] },
      { long_name: 'United States', short_name: 'US', types: ['country', 'political'] },
    ],
    geometry: { location: { lat: place.latitude, lng: place.longitude }, location_type: 'APPROXIMATE' },
    // Stable and recognisably synthetic: real place ids come from Google only.
    place_id: `portico-zip-${place.zip}`,
    types: ['postal_code'],
  };
}

/** Builds the reply for an `address` query value (null when absent). */
export function geocodeResponse(address: string | null): { status: number; body: GeocodeResponse } {
  if (address === null || address.trim() === '') {
    return {
      status: 400,
      body: {
        status: 'INVALID_REQUEST',
        results: [],
        error_message: "Invalid request. Missing the 'address' parameter.",
      },
    };
  }
  const result = geocodeZip(address);
  // Google answers an unknown address with HTTP 200 and ZERO_RESULTS.
  return {
    status: 200,
    body: result ? { status: 'OK', results: [result] } : { status: 'ZERO_RESULTS', results: [] },
  };
}

/** Request handler of the geocoder. */
export function geocoderHandler(req: IncomingMessage, res: ServerResponse): void {
  const url = readOnlyResource(req, res, [GEOCODE_PATH]);
  if (!url) return;
  // URLSearchParams skips the empty pair in `?&address=`, the form the original invoke used.
  const { status, body } = geocodeResponse(url.searchParams.get('address'));
  sendJson(res, status, body);
}

/** Starts the geocoder (default demo port 9083). */
export function startGeocoderService(options: SampleServerOptions): Promise<RunningSample> {
  return startSampleServer('geocoder', geocoderHandler, options);
}
