import type { Paged } from "../paging";
import { t } from "../i18n";

/** The button that brings a list's next page, shown while there is one. */
export function More({ list }: { list: Paged<unknown> }) {
  if (!list.more) return null;
  return (
    <p class="more">
      <button type="button" onClick={list.more} disabled={list.busy} data-testid="more">
        {t("common.more")}
      </button>
    </p>
  );
}
