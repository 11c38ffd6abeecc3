// Who is logged in (null: nobody; undefined: not known yet), from GET /me.
import { signal } from "@preact/signals";
import { api, type Schemas } from "./api/client";

export const account = signal<Schemas["Account"] | null | undefined>(undefined);

export async function refreshAccount(): Promise<void> {
  try {
    const { data } = await api.GET("/api/v1/me");
    account.value = data ?? null;
  } catch {
    account.value = null;
  }
}
