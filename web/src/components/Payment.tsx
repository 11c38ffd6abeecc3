import { useEffect, useState } from "preact/hooks";
import { api, must, type Problem, type Schemas } from "../api/client";
import { countdown, dateTime, methodName, networkName, t, tKnown, usd, type Key } from "../i18n";
import { useSecondsUntil } from "../live";
import { Copyable } from "./Copy";
import { ProblemNotice } from "./ProblemNotice";

export type Payment = Schemas["OrderPayment"] | Schemas["TopupPayment"] | Schemas["ExtensionPayment"];
type Method = Schemas["PaymentMethod"];

// A transfer may still come, or is on its way: its instructions stand, and no other payment is offered.
export const inFlight = (p: Payment) =>
  ["seen", "confirming"].includes(p.status) || (p.status === "awaiting_transfer" && Date.parse(p.expires_at) > Date.now());
// Money arrived but did not pay what it was for (short, late, or held for a check): the customer is told what
// became of it and writes to support, and is not invited to send a second transfer.
export const STUCK = ["underpaid", "late", "in_review"];

/** The payments a page should act on: the newest in flight, and whether one is stuck (newest first, as the API). */
export function standing(payments: Payment[]) {
  return { active: payments.find(inFlight) ?? null, stuck: payments.some((p) => STUCK.includes(p.status)) };
}

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
          const reasonId = `reason-${m.asset}-${m.network}`;
          return (
            <li key={`${m.asset}/${m.network}`}>
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

/** Where and how much to send, until when, "J'ai payé", and the live state of the transfer. */
export function Instructions({ payment, onChanged }: { payment: Payment; onChanged: () => void }) {
  const left = useSecondsUntil(payment.expires_at);
  const [problem, setProblem] = useState<Problem | null>(null);
  const report = async () => {
    try {
      await must(api.POST("/api/v1/payments/{payment_id}/reported", { params: { path: { payment_id: payment.id } } }));
      onChanged();
    } catch (p) {
      setProblem(p as Problem);
    }
  };
  const waiting = payment.status === "awaiting_transfer";
  return (
    <section class="instructions card" aria-labelledby="instructions-title" data-payment={payment.id}>
      <h2 id="instructions-title">{t("pay.instructionsFor", { method: methodName(payment.asset, payment.network) })}</h2>
      <Status payment={payment} />
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
      <p class="notice warning">{t("pay.networkWarning")}</p>
      {waiting && (
        <p data-testid="deadline">
          {t("pay.deadline", { time: dateTime(payment.expires_at) })} ·{" "}
          <span role="timer" aria-live="off">
            {left > 0 ? t("pay.remaining", { time: countdown(left) }) : t("pay.expired")}
          </span>
        </p>
      )}
      {payment.reported_at ? (
        <p class="notice" data-testid="reported">{t("pay.reported", { time: dateTime(payment.reported_at) })}</p>
      ) : (
        <div class="report">
          <button type="button" class="primary" onClick={report} aria-describedby="report-help">
            {t("pay.report")}
          </button>
          <p class="hint" id="report-help">{t("pay.reportHelp")}</p>
        </div>
      )}
      <ProblemNotice problem={problem} />
      <p class="hint">{t("pay.live")}</p>
    </section>
  );
}

/** The payment's status as a sentence that says what happened to the money, with its confirmations. */
function Status({ payment }: { payment: Payment }) {
  const transfer = payment.transfers[0];
  return (
    <p class="status" role="status" data-testid="payment-status" data-status={payment.status}>
      {t(`payment.${payment.status}`)}
      {transfer && payment.status === "confirming" && (
        <> — {t("pay.confirmations", { n: transfer.confirmations, m: transfer.required_confirmations })}</>
      )}
    </p>
  );
}

/** Every payment, newest first: the one in flight with its instructions, the others as a record of what was
 * asked, what arrived, and what was credited where. */
export function PaymentHistory({ payments, onChanged }: { payments: Payment[]; onChanged: () => void }) {
  const { active } = standing(payments);
  return (
    <section class="card" aria-labelledby="payments-title">
      <h2 id="payments-title">{t("pay.history")}</h2>
      {payments.length === 0 && <p>{t("pay.none")}</p>}
      <ol class="payments" data-testid="payments">
        {payments.map((payment) =>
          payment === active ? (
            <li key={payment.id}>
              <Instructions payment={payment} onChanged={onChanged} />
            </li>
          ) : (
            <PaymentRecord key={payment.id} payment={payment} />
          ),
        )}
      </ol>
    </section>
  );
}

function PaymentRecord({ payment }: { payment: Payment }) {
  return (
    <li class="payment" data-payment={payment.id} data-status={payment.status}>
      <p>
        <strong>{methodName(payment.asset, payment.network)}</strong> · {payment.amount} {payment.asset} ({usd(payment.amount_usd)})
        · {t("pay.opened", { date: dateTime(payment.created_at) })} · {t("pay.until", { date: dateTime(payment.expires_at) })}
      </p>
      <Status payment={payment} />
      <dl>
        <dt>{t("pay.address")}</dt>
        <dd>
          <code>{payment.address}</code>
        </dd>
      </dl>
      {payment.transfers.length > 0 && (
        <ul>
          <li>{t("pay.received", { amount: `${payment.received.amount} ${payment.asset}` })}</li>
          {payment.transfers.map((transfer) => (
            <li key={transfer.txid}>
              <code>{t("pay.transfer", { txid: transfer.txid, amount: `${transfer.amount} ${payment.asset}` })}</code> ·{" "}
              {t("pay.confirmations", { n: transfer.confirmations, m: transfer.required_confirmations })}
            </li>
          ))}
        </ul>
      )}
      {payment.credits.map((credit) => (
        <p key={credit.at + credit.reason} class="notice" data-testid="credited">
          {t("pay.credited", { amount: usd(credit.amount_usd), date: dateTime(credit.at), reason: t(`ledger.${credit.reason}`) })}
        </p>
      ))}
      {payment.checks.map((check, index) => (
        <p key={index} class="hint">
          {t((check.status === "open" || !check.decision ? "pay.check.open" : `pay.check.${check.decision}`) as Key)}
        </p>
      ))}
    </li>
  );
}

/** What to do about a payment that did not complete: not a second transfer, but a word to support. */
export function Stuck({ about, link }: { about: "order" | "topup"; link: string }) {
  return (
    <section class="card notice problem" aria-labelledby="stuck-title" data-testid="stuck">
      <h2 id="stuck-title">{t("pay.stuck")}</h2>
      <p>{t(about === "order" ? "pay.stuck.order" : "pay.stuck.topup")}</p>
      <p>
        <a href={link}>{t(about === "order" ? "support.about" : "topup.about")}</a>
      </p>
    </section>
  );
}
