import { api, must, type Problem, type Schemas } from "../api/client";
import { PaymentHistory, standing, Stuck } from "../components/Payment";
import { ProblemNotice } from "../components/ProblemNotice";
import { dateTime, t, usd } from "../i18n";
import { useLive } from "../live";

type Topup = Schemas["Topup"];
const urgent = (topup: Topup) => topup.payments.some((p) => ["seen", "confirming"].includes(p.status) || p.reported_at !== null);
const settled = (topup: Topup) => !standing(topup.payments).active;

/** One top-up, found again from the balance page or a message: its payment's instructions while they stand, and
 * what became of it once they do not. */
export function TopupPage({ id }: { id: string }) {
  const load = () => must(api.GET("/api/v1/topups/{topup_id}", { params: { path: { topup_id: id } } }));
  const live = useLive(load, urgent, settled, id);
  const topup = live.value;
  if (!topup) return live.failure ? <ProblemNotice problem={live.failure as Problem} /> : <p>{t("common.loading")}</p>;
  const { active, stuck } = standing(topup.payments);
  return (
    <section aria-labelledby="topup-title" data-topup={topup.id}>
      <h1 id="topup-title">{t("topup.of", { amount: usd(topup.amount_usd) })}</h1>
      <p>
        {t("topup.status")}:{" "}
        <strong class="badge" data-testid="topup-status" data-status={topup.status} role="status">
          {topup.status === "credited" ? t("topup.credited") : t(`payment.${topup.status}`)}
        </strong>{" "}
        · {t("topup.asked", { date: dateTime(topup.created_at) })}
      </p>
      <p class="hint">{t("topup.intro")}</p>
      {!active && stuck && <Stuck about="topup" link={`#/support?topup=${topup.id}`} />}
      <PaymentHistory payments={topup.payments} onChanged={live.refresh} />
      <p>
        <a href={`#/support?topup=${topup.id}`}>{t("topup.about")}</a> · <a href="#/balance">{t("topup.back")}</a>
      </p>
    </section>
  );
}
