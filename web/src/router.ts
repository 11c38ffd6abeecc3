// Pages are addressed by the hash (#/orders/abc), so that the gateway serves one document for all of them.
import { signal } from "@preact/signals";

export const path = signal(readPath());

function readPath(): string {
  return location.hash.replace(/^#/, "") || "/";
}

addEventListener("hashchange", () => {
  path.value = readPath();
  document.getElementById("main")?.focus();
});

export function go(to: string): void {
  location.hash = to;
}

/** "/orders/:id" against "/orders/abc" -> {id: "abc"}; null when it does not match. */
export function match(pattern: string, actual: string): Record<string, string> | null {
  const [want, got] = [pattern.split("/"), actual.split("?")[0].split("/")];
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (const [i, part] of want.entries()) {
    if (part.startsWith(":")) params[part.slice(1)] = decodeURIComponent(got[i]);
    else if (part !== got[i]) return null;
  }
  return params;
}
