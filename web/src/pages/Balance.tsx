import { useEffect, useState } from "preact/hooks";
import { api, must, type Problem, type Schemas } from "../api/client";
import { More } from "../components/More";
import { MethodChooser } from "../components/Payment";
import { ProblemNotice } from "../components/ProblemNotice";
import { dateTime, methodName, t, usd } from "../i18n";
import { usePaged } from "../paging";
import { go } from "../router";

const AMOUNTS = ["100", "500", "2000", "10000"] as const;

export function Balance() {
  const [balance, setBalance] = useState<Schemas["Balance"] | null>(null);
  const [amount, setAmount] = useState<(typeof AMOUNTS)[number]>("100");
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const ledger = usePaged((query) => must(api.GET("/api/v1/me/ledger", { params: { query } })), setProblem);
  const topups = usePaged((query) => must(api.GET("/api/v1/topups", { params: { query } })), setProblem);
  const loadBalance = () => must(api.GET("/api/v1/me/balance")).then(setBalance, setProblem);
  useEffect(() => {
    loadBalance();
  }, []);

  const topUp = async (m: Schemas["PaymentMethod"]) => {
    setBusy(true);
    try {
      const topup = await must(api.POST("/api/v1/topups", { body: { amount_usd: amount, asset: m.asset, network: m.network } }));
      go(`/topups/${topup.id}`); // its own page, where its instructions can be found again
    } catch (p) {
      setProblem(p as Problem);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="balance-title">
      <h1 id="balance-title">{t("balance.title")}</h1>
      {balance && (
        <dl class="card figures">
          <dt>{t("balance.available")}</dt>
          <dd data-testid="available-usd">{usd(balance.available_usd)}</dd>
          <dt>{t("balance.pending")}</dt>
          <dd>{usd(balance.pending_usd)}</dd>
        </dl>
      )}
      <ProblemNotice problem={problem} />
      <section class="card" aria-labelledby="topup-title">
        <h2 id="topup-title">{t("topup.title")}</h2>
        <p>{t("topup.intro")}</p>
        <fieldset class="field">
          <legend>{t("topup.amount")}</legend>
          <div class="choices">
            {AMOUNTS.map((a) => (
              <label key={a} class="choice">
                <input type="radio" name="amount" value={a} checked={amount === a} onChange={() => setAmount(a)} />
                <span>{usd(a)}</span>
              </label>
            ))}
          </div>
        </fieldset>
        <MethodChooser onChoose={topUp} busy={busy} />
      </section>
      <section class="card" aria-labelledby="ledger-title">
        <h2 id="ledger-title">{t("ledger.title")}</h2>
        {ledger.items?.length === 0 && <p>{t("ledger.empty")}</p>}
        {ledger.items?.length ? (
          <table>
            <thead>
              <tr>
                <th scope="col">{t("ledger.date")}</th>
                <th scope="col">{t("ledger.reason")}</th>
                <th scope="col">{t("ledger.amount")}</th>
              </tr>
            </thead>
            <tbody>
              {ledger.items.map((e) => (
                <tr key={e.at + e.ref}>
                  <td>{dateTime(e.at)}</td>
                  <td>{t(`ledger.${e.reason}`)}</td>
                  <td class="number">{usd(e.amount_usd)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        ) : null}
        <More list={ledger} />
      </section>
      {topups.items?.length ? (
        <section class="card" aria-labelledby="topups-title">
          <h2 id="topups-title">{t("topups.title")}</h2>
          <ul class="list" data-testid="topups">
            {topups.items.map((topup) => (
              <li key={topup.id} class="row">
                <a href={`#/topups/${topup.id}`}>
                  {t("topups.line", {
                    amount: usd(topup.amount_usd),
                    method: methodName(topup.payment.asset, topup.payment.network),
                    date: dateTime(topup.created_at),
                  })}
                </a>
                <span class="badge" data-status={topup.status}>
                  {topup.status === "credited" ? t("topup.credited") : t(`payment.${topup.status}`)}
                </span>
              </li>
            ))}
          </ul>
          <More list={topups} />
        </section>
      ) : null}
    </section>
  );
}
