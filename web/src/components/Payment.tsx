import { useEffect, useState } from "preact/hooks";
import { api, must, type Problem, type Schemas } from "../api/client";
import { countdown, dateTime, t, tKnown, usd } from "../i18n";
import { useSecondsUntil } from "../live";
import { Copyable } from "./Copy";
import { ProblemNotice } from "./ProblemNotice";

type Payment = Schemas["OrderPayment"] | Schemas["TopupPayment"] | Schemas["ExtensionPayment"];
type Method = Schemas["PaymentMethod"];
export const ACTIVE = ["awaiting_transfer", "seen", "confirming"];

const NETWORK_NAMES: Record<string, string> = {
  bitcoin: "Bitcoin",
  litecoin: "Litecoin",
  ethereum: "Ethereum (ERC-20)",
  tron: "Tron (TRC-20)",
  solana: "Solana (SPL)",
};
export const networkName = (network: string) => NETWORK_NAMES[network] ?? network;

/** The eight methods, asset and network side by side; those unavailable disabled with their reason. */
export function MethodChooser({ onChoose, busy }: { onChoose: (m: Method) => void; busy: boolean }) {
  const [methods, setMethods] = useState<Method[] | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  useEffect(() => {
    must(api.GET("/api/v1/payment-methods")).then(setMethods, setProblem);
  }, []);
  return (
    <fieldset class="methods">
      <legend>{t("pay.choose")}</legend>
      <p class="notice warning">{t("pay.networkWarning")}</p>
      <ProblemNotice problem={problem} />
      <ul>
        {methods?.map((m) => {
          const label = `${m.asset} · ${networkName(m.network)}`;
          const reasonId = `reason-${m.asset}-${m.network}`;
          return (
            <li key={label}>
              <button
                type="button"
                class="method"
                disabled={!m.available || busy}
                aria-describedby={m.available ? undefined : reasonId}
                data-method={`${m.asset}/${m.network}`}
                onClick={() => onChoose(m)}
              >
                <strong>{m.asset}</strong>
                <span>
                  {t("pay.network")}: {networkName(m.network)}
                </span>
              </button>
              {!m.available && (
                <small id={reasonId}>
                  {t("pay.methodUnavailable", { reason: tKnown(`pay.reason.${m.reason}`) ?? m.reason ?? "" })}
                </small>
              )}
            </li>
          );
        })}
      </ul>
    </fieldset>
  );
}

/** Where and how much to send, until when, and the live state of the transfer. */
export function Instructions({ payment, onChanged }: { payment: Payment; onChanged: () => void }) {
  const left = useSecondsUntil(payment.expires_at);
  const [problem, setProblem] = useState<Problem | null>(null);
  const transfer = payment.transfers[0];
  const report = async () => {
    try {
      await must(api.POST("/api/v1/payments/{payment_id}/reported", { params: { path: { payment_id: payment.id } } }));
      onChanged();
    } catch (p) {
      setProblem(p as Problem);
    }
  };
  const waiting = payment.status === "awaiting_transfer";
  const active = ACTIVE.includes(payment.status); // once it is over, the instructions are a record
  return (
    <section class="instructions card" aria-labelledby="instructions-title" data-payment={payment.id}>
      <h2 id="instructions-title">{t("pay.instructionsFor", { asset: payment.asset, network: networkName(payment.network) })}</h2>
      <p class="status" role="status" data-testid="payment-status" data-status={payment.status}>
        {t(`payment.${payment.status}`)}
        {transfer && payment.status === "confirming" && (
          <> — {t("pay.confirmations", { n: transfer.confirmations, m: transfer.required_confirmations })}</>
        )}
      </p>
      <div class="pay-grid">
        <dl>
          <dt>{t("pay.asset")}</dt>
          <dd>{payment.asset}</dd>
          <dt>{t("pay.network")}</dt>
          <dd>{networkName(payment.network)}</dd>
          <Copyable label={t("pay.address")} value={payment.address} />
          <Copyable label={t("pay.amount")} value={payment.amount} />
          <dt>{t("pay.amountUsd")}</dt>
          <dd>{usd(payment.amount_usd)}</dd>
        </dl>
        {waiting && (
          <img
            class="qr"
            src={`/api/v1/payments/${encodeURIComponent(payment.id)}/qr.svg`}
            alt={t("pay.qr", { amount: payment.amount, asset: payment.asset })}
            width={180}
            height={180}
          />
        )}
      </div>
      {active && <p class="notice warning">{t("pay.networkWarning")}</p>}
      {waiting && (
        <p data-testid="deadline">
          {t("pay.deadline", { time: dateTime(payment.expires_at) })} ·{" "}
          <span role="timer" aria-live="off">
            {left > 0 ? t("pay.remaining", { time: countdown(left) }) : t("pay.expired")}
          </span>
        </p>
      )}
      {active && payment.reported_at ? (
        <p class="notice" data-testid="reported">{t("pay.reported", { time: dateTime(payment.reported_at) })}</p>
      ) : (
        active && (
          <div class="report">
            <button type="button" class="primary" onClick={report} aria-describedby="report-help">
              {t("pay.report")}
            </button>
            <p class="hint" id="report-help">{t("pay.reportHelp")}</p>
          </div>
        )
      )}
      <ProblemNotice problem={problem} />
      {active && <p class="hint">{t("pay.live")}</p>}
    </section>
  );
}
