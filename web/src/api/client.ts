// The API client, typed from the gateway's OpenAPI document (schema.d.ts is generated: `npm run client`).
import createClient, { type Middleware } from "openapi-fetch";
import type { components, paths } from "./schema";

export type Schemas = components["schemas"];
export type Problem = Schemas["Problem"];

const CSRF_COOKIE = /(?:^|;\s*)(?:__Host-)?kd_csrf=([^;]+)/;

// Cookie-authenticated writes carry the CSRF token the gateway gave with the session.
const csrf: Middleware = {
  onRequest({ request }) {
    if (request.method !== "GET") {
      const token = CSRF_COOKIE.exec(document.cookie)?.[1];
      if (token) request.headers.set("x-csrf-token", decodeURIComponent(token));
    }
    return request;
  },
};

export const api = createClient<paths>({ baseUrl: "" });
api.use(csrf);

/** The problem of a failed call; a network failure becomes one too, so that every page shows errors one way. */
export function problemOf(error: unknown, status = 0): Problem {
  if (error && typeof error === "object" && "code" in error) return error as Problem;
  return { type: "about:blank", title: "Network error", status, detail: "", code: "network_error", errors: [] };
}

/** Data of a call or a thrown Problem. */
export async function must<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let result;
  try {
    result = await call;
  } catch {
    throw problemOf(null);
  }
  if (result.error !== undefined || !result.response.ok) throw problemOf(result.error, result.response.status);
  return result.data as T;
}
