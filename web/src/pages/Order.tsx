import { useEffect, useState } from "preact/hooks";
import { api, must, type Problem, type Schemas } from "../api/client";
import { Copyable } from "../components/Copy";
import { Instructions, MethodChooser, PaymentHistory, standing, Stuck } from "../components/Payment";
import { ProblemNotice } from "../components/ProblemNotice";
import { dateTime, said, t, usd, type Key } from "../i18n";
import { useLive } from "../live";
import { describe } from "./Orders";

type Order = Schemas["Order"];
const SETTLED = ["ended", "cancelled", "failed"];
// A transfer is on its way, or the machine is being prepared: look often.
const onItsWay = (p: { status: string; reported_at: string | null }) =>
  ["seen", "confirming"].includes(p.status) || (p.status === "awaiting_transfer" && p.reported_at !== null);
const urgent = (o: Order) =>
  ["paid", "provisioning"].includes(o.status) ||
  [...o.payments, ...o.extensions.flatMap((e) => e.payments)].some(onItsWay);

/** A timeline entry (or a support answer) in the customer's language, from its code and parameters. */
export const entryText = (entry: { code: string; params: Record<string, string | number> }) =>
  said(`timeline.${entry.code}` as Key, entry.params);

export function OrderPage({ id }: { id: string }) {
  const load = () => must(api.GET("/api/v1/orders/{order_id}", { params: { path: { order_id: id } } }));
  const live = useLive(load, urgent, (o) => SETTLED.includes(o.status) || (o.status === "ready" && o.access !== null), id);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const [balance, setBalance] = useState<Schemas["Balance"] | null>(null);
  const order = live.value;
  // The balance again whenever a payment moves: a short or late transfer is credited to it.
  const moves = order?.payments.map((p) => p.status + p.credits.length).join() ?? "";
  useEffect(() => {
    api.GET("/api/v1/me/balance").then(({ data }) => setBalance(data ?? null));
  }, [id, moves]);
  if (!order) return live.failure ? <ProblemNotice problem={live.failure as Problem} /> : <p>{t("common.loading")}</p>;

  const act = async (call: () => Promise<unknown>) => {
    setBusy(true);
    try {
      await call();
      setProblem(null);
      live.refresh();
    } catch (p) {
      setProblem(p as Problem);
    } finally {
      setBusy(false);
    }
  };
  const path = { params: { path: { order_id: id } } };
  const choose = (m: Schemas["PaymentMethod"]) =>
    act(() => must(api.POST("/api/v1/orders/{order_id}/payments", { ...path, body: { asset: m.asset, network: m.network } })));
  const unpaid = order.status === "awaiting_payment";
  // While a payment is in flight its instructions stand; after one that did not complete, the customer writes to
  // support rather than sending a second transfer: the methods are offered only when neither is the case.
  const { active, stuck } = standing(order.payments);
  const choosing = unpaid && !active && !stuck;

  return (
    <section aria-labelledby="order-title" data-order={order.id}>
      <h1 id="order-title">
        {t("order.title")} <code>{order.id}</code>
      </h1>
      <p>{describe(order.summary)}</p>
      <p>
        {t("order.status")}:{" "}
        <strong class={`badge ${order.status}`} data-testid="order-status" data-status={order.status} role="status">
          {t(`status.${order.status}`)}
        </strong>{" "}
        · {t("order.created", { date: dateTime(order.created_at) })}
      </p>
      {order.status === "failed" && <p class="notice problem">{t("order.failedHelp")}</p>}
      <ProblemNotice problem={problem} />
      {problem?.code === "ssh_key_required" && (
        <p>
          <a href="#/account">{t("pay.toAccount")}</a>
        </p>
      )}
      {order.access && <Access access={order.access} />}
      {order.rental && (
        <section class="card" aria-labelledby="rental-title">
          <h2 id="rental-title">{t("rental.title")}</h2>
          <dl>
            <dt>{t("rental.delivered")}</dt>
            <dd>{dateTime(order.rental.delivered_at)}</dd>
            <dt>{t("rental.starts")}</dt>
            <dd>{dateTime(order.rental.starts_at)}</dd>
            <dt>{t("rental.ends")}</dt>
            <dd data-testid="rental-ends">{dateTime(order.rental.ends_at)}</dd>
          </dl>
        </section>
      )}
      {unpaid && !active && stuck && <Stuck about="order" link={`#/support?order=${order.id}`} />}
      {unpaid && !active && (
        <section class="card" aria-labelledby="pay-title">
          <h2 id="pay-title">{t("pay.title")}</h2>
          {choosing && <MethodChooser onChoose={choose} busy={busy} />}
          {balance && (
            <p>
              <button
                type="button"
                disabled={busy || Number(balance.available_usd) < Number(order.summary.total_usd)}
                onClick={() => act(() => must(api.POST("/api/v1/orders/{order_id}/pay-with-balance", path)))}
              >
                {t("pay.withBalance", { amount: usd(order.summary.total_usd) })}
              </button>{" "}
              <small>{t("pay.balanceAvailable", { amount: usd(balance.available_usd) })}</small>
            </p>
          )}
        </section>
      )}
      <PaymentHistory payments={order.payments} onChanged={live.refresh} />
      {order.extensions.length > 0 && (
        <section class="card" aria-labelledby="extensions-title">
          <h2 id="extensions-title">{t("extensions.title")}</h2>
          <ul class="list">
            {order.extensions.map((extension) => (
              <li key={extension.id} data-extension={extension.id}>
                {t("extension.line", {
                  days: extension.extra_days,
                  price: usd(extension.price_usd),
                  due: dateTime(extension.due_by),
                })}{" "}
                · <span class="badge">{t(`extension.${extension.status}`)}</span>
                {extension.status === "confirmed" && <ExtensionPayment extension={extension} balance={balance} onChanged={live.refresh} />}
              </li>
            ))}
          </ul>
        </section>
      )}
      <section class="card" aria-labelledby="timeline-title">
        <h2 id="timeline-title">{t("order.timeline")}</h2>
        <ol class="timeline" data-testid="timeline">
          {order.timeline.map((entry, index) => (
            <li key={index} data-kind={entry.kind} data-code={entry.code}>
              <time dateTime={entry.at}>{dateTime(entry.at)}</time> {entryText(entry)}
            </li>
          ))}
        </ol>
      </section>
      <p>
        <a href={`#/support?order=${order.id}`}>{t("support.about")}</a>
      </p>
      {unpaid && (
        <p>
          <button type="button" class="link" disabled={busy} onClick={() => act(() => must(api.POST("/api/v1/orders/{order_id}/cancel", path)))}>
            {t("order.cancel")}
          </button>
        </p>
      )}
    </section>
  );
}

/** Paying a confirmed extension: its live instructions, or the methods and the balance. */
function ExtensionPayment({ extension, balance, onChanged }: { extension: Schemas["Extension"]; balance: Schemas["Balance"] | null; onChanged: () => void }) {
  const [problem, setProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const path = { params: { path: { extension_id: extension.id } } };
  const act = async (call: () => Promise<unknown>) => {
    setBusy(true);
    try {
      await call();
      setProblem(null);
      onChanged();
    } catch (p) {
      setProblem(p as Problem);
    } finally {
      setBusy(false);
    }
  };
  const { active, stuck } = standing(extension.payments);
  if (active) return <Instructions payment={active} onChanged={onChanged} />;
  if (stuck) return <PaymentHistory payments={extension.payments} onChanged={onChanged} />;
  return (
    <div class="extension-payment">
      <ProblemNotice problem={problem} />
      <MethodChooser
        busy={busy}
        onChoose={(m) => act(() => must(api.POST("/api/v1/extensions/{extension_id}/payments", { ...path, body: { asset: m.asset, network: m.network } })))}
      />
      {balance && (
        <p>
          <button
            type="button"
            disabled={busy || Number(balance.available_usd) < Number(extension.price_usd)}
            onClick={() => act(() => must(api.POST("/api/v1/extensions/{extension_id}/pay-with-balance", path)))}
          >
            {t("pay.withBalance", { amount: usd(extension.price_usd) })}
          </button>
        </p>
      )}
    </div>
  );
}

function Access({ access }: { access: Schemas["Access"] }) {
  return (
    <section class="card access" aria-labelledby="access-title" data-testid="access">
      <h2 id="access-title">{t("access.title")}</h2>
      <dl>
        <Copyable label={t("access.command")} value={`ssh -p ${access.ssh_port} ${access.ssh_user}@${access.ssh_host}`} />
        <Copyable label={t("access.host")} value={access.ssh_host} />
        <Copyable label={t("access.port")} value={String(access.ssh_port)} />
        <Copyable label={t("access.user")} value={access.ssh_user} />
        {access.jupyter_tunnel && <Copyable label={t("access.tunnel")} value={access.jupyter_tunnel} />}
        {access.jupyter_url && <Copyable label={t("access.jupyter")} value={access.jupyter_url} />}
        {access.jupyter_token && <Copyable label={t("access.token")} value={access.jupyter_token} />}
      </dl>
      <p class="notice">{t("access.export")}</p>
    </section>
  );
}
